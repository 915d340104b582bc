"""The trained ``algo=ppo_jax`` network as ``.npz`` and its NumPy forward pass (no JAX import).

A policy file holds the actor's weights (``pi_<i>/kernel``, ``pi_<i>/bias``, and the output layer
``pi_out/...`` for a flat head or ``pi_factored/...`` for a factored one, so the file says how its
outputs are read: :mod:`.network`; the value net is left out, acting needs none) and ``meta/*``
arrays: the observation width, the number of actions and the activation.
:class:`NumpyPolicy` acts on CGRSP-v0 as an SB3 model does
(``predict(obs, state, episode_start, deterministic, action_masks)``), so
:func:`gpu_sched_env.cgrsp.evaluation.evaluate` and the ``final_eval`` table run it unchanged:
CGRSP-v0's dict observation is flattened as the JAX env flattens it
(``gymnasium.spaces.flatten`` of every key but ``action_mask``, in the space's order; the same
vector ``JaxCGRSP.flatten_obs`` returns), then MLP → the head's masked logits → the two-level mode of
``algo=ppo`` (deterministic) or a sample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gpu_sched_env.core.errors import ConfigError

MASK_KEY = "action_mask"  # CGRSP-v0 carries the mask in the observation; the JAX env's vector does not
MASKED_LOGIT = -1e9  # as gpu_sched_agents.rl.ppo_jax.network.MASKED_LOGIT (not imported: that module imports JAX)
OUT_LAYER = {"flat": "pi_out", "factored": "pi_factored"}  # the output layer names the head (network reads it)


def policy_logits(logits: np.ndarray, mask: np.ndarray, head: str = "flat") -> np.ndarray:
    """:func:`gpu_sched_agents.rl.ppo_jax.network.policy_logits` in NumPy (float32, the same numbers)."""
    mask = np.asarray(mask, bool)
    if head == "factored":
        from scipy.special import log_expit, log_softmax

        z = logits[..., -1:]
        act = log_softmax(np.where(mask[..., :-1], logits[..., :-1], MASKED_LOGIT).astype(np.float32), axis=-1)
        logits = np.concatenate([act + log_expit(-z), log_expit(z)], axis=-1)  # log σ(−z), log σ(z)
    return np.where(mask, logits, MASKED_LOGIT).astype(np.float32)


def actor_arrays(params: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The actor's weights of a flax ``ActorCritic`` parameter tree, as ``{"pi_0/kernel": array, ...}``."""
    tree = params.get("params", params)
    return {
        f"{layer}/{name}": np.asarray(w, np.float32)
        for layer, ws in tree.items()
        if layer.startswith("pi_")
        for name, w in ws.items()
    }


def save_policy(path: str | Path, params: Mapping[str, Any], obs_dim: int, n_actions: int) -> Path:
    """Write the actor of ``params`` to ``path`` (``.npz``, atomically: a temporary file renamed)."""
    path = Path(path)
    arrays = actor_arrays(params)
    arrays.update(
        {"meta/obs_dim": np.int64(obs_dim), "meta/n_actions": np.int64(n_actions), "meta/activation": np.array("tanh")}
    )
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)
    return path


def flatten_without_mask(space: Any, obs: Mapping[str, Any]) -> np.ndarray:
    """CGRSP-v0's dict observation as the JAX env's flat float32 vector (every key but the mask)."""
    from gymnasium import spaces

    keys = [k for k in space.spaces if k != MASK_KEY]
    return np.concatenate([spaces.flatten(space.spaces[k], obs[k]) for k in keys]).astype(np.float32)


class NumpyPolicy:
    """An exported ``algo=ppo_jax`` actor, driven like an SB3 model (see the module docstring).

    Args:
        weights: ``{"pi_0/kernel": ..., "pi_out/bias": ...}`` (as :func:`actor_arrays` gives).
        flatten: dict observation -> flat vector; by default bound from the evaluation env's
            observation space (:meth:`bind`, which ``evaluate`` calls) by :func:`flatten_without_mask`.
        seed: seed of the sampler for ``deterministic=False``.
    """

    name = "ppo_jax"

    def __init__(
        self, weights: Mapping[str, np.ndarray], flatten: Callable[[Any], np.ndarray] | None = None, seed: int = 0
    ) -> None:
        heads = [h for h, layer in OUT_LAYER.items() if f"{layer}/kernel" in weights]
        if len(heads) != 1:
            raise ConfigError(
                f"ppo_jax policy weights name {len(heads)} output layers ({heads}); exactly one of "
                f"{sorted(f'{v}/kernel' for v in OUT_LAYER.values())} is allowed"
            )
        self.head = heads[0]
        out = OUT_LAYER[self.head]
        n_hidden = sum(1 for k in weights if k.endswith("/kernel") and k != f"{out}/kernel")
        self.layers = [
            (np.asarray(weights[f"pi_{i}/kernel"]), np.asarray(weights[f"pi_{i}/bias"])) for i in range(n_hidden)
        ]
        self.out = (np.asarray(weights[f"{out}/kernel"]), np.asarray(weights[f"{out}/bias"]))
        self.obs_dim = int(self.layers[0][0].shape[0] if self.layers else self.out[0].shape[0])
        self.n_actions = int(self.out[0].shape[1])
        self.flatten = flatten
        self._rng = np.random.default_rng(seed)

    @classmethod
    def load(cls, path: str | Path, **kwargs: Any) -> NumpyPolicy:
        """Read a policy written by :func:`save_policy` (ConfigError if it is not one)."""
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"ppo_jax policy file {str(path)!r} does not exist")
        with np.load(path) as z:
            outs = [f"{layer}/kernel" for layer in OUT_LAYER.values()]
            if not any(k in z.files for k in outs) or str(z.get("meta/activation", "")) != "tanh":
                raise ConfigError(
                    f"{path} is not an exported ppo_jax policy (none of {outs}, or no meta/activation = tanh)"
                )
            return cls({k: z[k] for k in z.files if not k.startswith("meta/")}, **kwargs)

    def bind(self, env: Any) -> None:
        """Flatten the observations of ``env`` (a CGRSP-v0 env) by its observation space."""
        space = env.unwrapped.observation_space
        width = sum(int(np.prod(s.shape)) for k, s in space.spaces.items() if k != MASK_KEY)
        if width != self.obs_dim:
            raise ConfigError(
                f"ppo_jax policy expects {self.obs_dim} observation features, the env gives {width}: it was trained on "
                "another design"
            )
        n = int(env.unwrapped.action_space.n)
        if n != self.n_actions:
            raise ConfigError(
                f"ppo_jax policy has {self.n_actions} actions, the env {n}: it was trained on another action design "
                f"(action_mode={env.unwrapped.cfg.action_mode!r} here)"
            )
        self.flatten = lambda obs: flatten_without_mask(space, obs)

    def logits(self, x: np.ndarray) -> np.ndarray:
        """The output layer of flat observations ``x`` [..., obs_dim] (float32, as the JAX forward; unmasked)."""
        h = np.asarray(x, np.float32)
        for w, b in self.layers:
            h = np.tanh(h @ w + b)
        return h @ self.out[0] + self.out[1]

    def act(self, x: np.ndarray, mask: np.ndarray, deterministic: bool = True) -> np.ndarray:
        """Actions for flat observations ``x`` and boolean masks ``mask`` (batch or single)."""
        z = policy_logits(self.logits(x), mask, self.head)
        p = np.exp(z - z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        if deterministic:  # the two-level mode of algo=ppo (agents/rl/policies.py)
            return np.where(p[..., -1] > 0.5, z.shape[-1] - 1, np.argmax(z[..., :-1], axis=-1))
        flat = p.reshape(-1, p.shape[-1])
        return np.array([self._rng.choice(p.shape[-1], p=row) for row in flat]).reshape(p.shape[:-1])

    def predict(
        self,
        obs: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
        action_masks: np.ndarray | None = None,
    ) -> tuple[Any, Any]:
        """SB3's ``predict``: the action for one CGRSP-v0 observation (dict) or a flat vector."""
        if isinstance(obs, Mapping):
            if self.flatten is None:
                raise ConfigError(
                    "NumpyPolicy.predict got a dict observation but has no flatten: bind(env) first or pass flatten="
                )
            mask = obs[MASK_KEY] if action_masks is None else action_masks
            x = self.flatten(obs)
        else:
            if action_masks is None:
                raise ConfigError("NumpyPolicy.predict on a flat observation needs action_masks")
            x, mask = obs, action_masks
        return int(self.act(x, mask, deterministic)), state


def load_policy(path: str | Path) -> NumpyPolicy:
    """An exported policy; ``best_model.zip``-style names resolve to the ``.npz`` beside them."""
    path = Path(path)
    return NumpyPolicy.load(path.with_suffix(".npz") if path.suffix != ".npz" else path)


__all__ = ["NumpyPolicy", "actor_arrays", "flatten_without_mask", "load_policy", "policy_logits", "save_policy"]
