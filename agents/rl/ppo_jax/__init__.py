"""PPO in JAX for the JAX-native CGRSP (``algo=ppo_jax``), PureJaxRL-style.

The rollout through :class:`gpu_sched_env.cgrsp.jax.JaxCGRSP` and the PPO update are one jitted
program (:func:`gpu_sched_agents.rl.ppo_jax.ppo.make_train`); the trained network is exported as
``.npz`` and evaluated on CGRSP-v0 by a NumPy forward pass (:mod:`.export`, no JAX import), so a
learned policy is judged by the same simulator and table as ``algo=ppo``'s.

Modules: ``hyper`` (the update's settings, spelled once, checked by themselves), ``network``
(actor-critic MLP, masked logits), ``ppo`` (``make_train``), ``config`` (a composed config's envs,
trainer and checks), ``run`` (``train.py algo=ppo_jax``, one seed or ``train.seeds`` side by side:
run folders, TensorBoard, checkpoints, resume), ``evaluator`` and ``selector`` (the held-out
evaluations and the checkpoint pick), ``export`` (NumPy policy), ``jax_eval`` (paired in-JAX
evaluation over many test days), ``constraint`` (the picks' keys). This ``__init__`` imports no JAX.
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
