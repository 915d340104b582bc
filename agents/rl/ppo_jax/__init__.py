"""PPO in JAX for the JAX-native CGRSP (``algo=ppo_jax``), PureJaxRL-style.

The rollout through :class:`gpu_sched_env.cgrsp.jax.JaxCGRSP` and the PPO update are one jitted
program (:func:`gpu_sched_agents.rl.ppo_jax.ppo.make_train`); the trained network is exported as
``.npz`` and evaluated on CGRSP-v0 by a NumPy forward pass (:mod:`.export`, no JAX import), so a
learned policy is judged by the same simulator and table as ``algo=ppo``'s.

Modules: ``network`` (actor-critic MLP, masked logits), ``ppo`` (``make_train``), ``export``
(NumPy policy), ``run`` (``train.py algo=ppo_jax``: run folder, TensorBoard, checkpoints, resume),
``jax_eval`` (paired in-JAX evaluation over many test days). This ``__init__`` imports no JAX.
"""

from __future__ import annotations

from gpu_sched_env.core.errors import ConfigError

JAX_EXTRA = "pip install 'gpu_sched_env[jax]'"


def require_jax() -> None:
    """Raise a ConfigError naming the extra to install when JAX, flax or optax is missing."""
    import importlib.util

    missing = [m for m in ("jax", "flax", "optax") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"algo=ppo_jax needs {', '.join(missing)} (not installed): {JAX_EXTRA}")


__all__ = ["JAX_EXTRA", "require_jax"]
