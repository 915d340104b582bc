"""CGRSP's JAX env as a gymnax ``Environment`` (optional: ``pip install 'gpu_sched_env[gymnax]'``).

:class:`CGRSPGymnax` wraps :class:`~gpu_sched_env.cgrsp.jax.env.JaxCGRSP` without changing
its dynamics: ``step_env`` is the JAX env's ``step``, ``reset_env`` its ``reset`` (a native
day, or a row of the pool of :meth:`JaxCGRSP.with_pool` params), and gymnax's own ``step``
auto-resets where the day ended. The observation is an :class:`~.adapt.Observation`
``(vector, action_mask)``: the mask of the state the observation describes, so a masked
rollout reads the next action's mask from the last ``obs``, across auto-resets too.

    env = CGRSPGymnax.from_config(day="hectic")       # ConfigError for a design the JAX env lacks
    obs, state = env.reset(key, env.default_params)
    obs, state, reward, done, info = env.step(key, state, action, env.default_params)

gymnax ≥ 1.0 returns ``(obs, state, reward, terminated, truncated, info)`` from ``step``; a
CGRSP day ends by itself, so ``truncated`` is always False.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from gpu_sched_env.cgrsp.jax.adapt import VECTOR_DTYPE, Observation, missing_extra, observe, vector_bounds, wrapped_env
from gpu_sched_env.cgrsp.jax.env import JaxCGRSP
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState

try:
    from gymnax.environments import environment, spaces
except ImportError as e:  # pragma: no cover - exercised in a subprocess test
    raise missing_extra("gymnax", "gymnax", e) from e

# gymnax ≥ 1.0 splits done into terminated/truncated and auto-resets pytree observations itself
_GYMNAX_1 = hasattr(environment.Environment, "is_truncated")


class CGRSPGymnax(environment.Environment):
    """A :class:`JaxCGRSP` as a gymnax environment; params are the JAX env's :class:`EnvParams`.

    Args:
        env: a built :class:`JaxCGRSP` (e.g. :meth:`JaxCGRSP.mixed`); or None to build one from
            ``cfg`` and ``kwargs`` (:meth:`JaxCGRSP.from_config`, which raises ConfigError
            listing what the JAX env implements).
    """

    def __init__(self, env: JaxCGRSP | None = None, cfg: Any = None, **kwargs: Any) -> None:
        super().__init__()
        self.env = wrapped_env(env, cfg, kwargs)
        self._low, self._high = vector_bounds(self.env)

    @classmethod
    def from_config(cls, cfg: Any = None, **kwargs: Any) -> CGRSPGymnax:
        """The adapter of ``JaxCGRSP.from_config(cfg, **kwargs)``."""
        return cls(None, cfg, **kwargs)

    @property
    def default_params(self) -> EnvParams:
        """The JAX env's default params (a pool: ``env.env.with_pool(key, env.default_params, size)``)."""
        return self.env.default_params

    def step_env(
        self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[Observation, EnvState, jax.Array, jax.Array, dict]:
        """One step of the JAX env (no reset); ``info`` is its info (metrics of the day so far)."""
        _, s, reward, done, info = self.env._step(key, state, action, params)
        return observe(self.env, s, params), s, reward, done, info

    def reset_env(self, key: jax.Array, params: EnvParams) -> tuple[Observation, EnvState]:
        """A new day: native, or a row of ``params.pool``."""
        s = self.env._reset_state(key, params)
        return observe(self.env, s, params), s

    def get_obs(self, state: EnvState, params: EnvParams | None = None, key: jax.Array | None = None) -> Observation:
        """The observation (vector and mask) of ``state``."""
        return observe(self.env, state, self.default_params if params is None else params)

    def action_mask(self, state: EnvState, params: EnvParams | None = None) -> jax.Array:
        """The joint action mask of ``state`` (also ``obs.action_mask``)."""
        return self.env._action_mask(state, params)

    def is_terminal(self, state: EnvState, params: EnvParams) -> jax.Array:
        """Whether the day is over (every job completed)."""
        return state.done

    def is_terminated(self, state: EnvState, params: EnvParams) -> jax.Array:
        """The name gymnax ≥ 1.0 gives :meth:`is_terminal`."""
        return state.done

    def is_truncated(self, state: EnvState, params: EnvParams) -> jax.Array:
        """Never: a day ends when its last job completes (no step limit)."""
        return jnp.zeros((), bool)

    if not _GYMNAX_1:

        @partial(jax.jit, static_argnames=("self",))
        def step(
            self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams | None = None
        ) -> tuple[Observation, EnvState, jax.Array, jax.Array, dict]:
            """The ``step`` of gymnax 0.0.x (auto-reset where done), selecting every leaf of the pytree observation.

            gymnax 0.0.x selects the observation with one ``lax.select``, which takes arrays only.
            """
            params = self.default_params if params is None else params
            key_step, key_reset = jax.random.split(key)
            obs_st, state_st, reward, done, info = self.step_env(key_step, state, action, params)
            obs_re, state_re = self.reset_env(key_reset, params)
            pick = partial(jax.tree_util.tree_map, lambda x, y: jax.lax.select(done, x, y))
            return pick(obs_re, obs_st), pick(state_re, state_st), reward, done, info

    @property
    def name(self) -> str:
        """``CGRSP-jax-<day>`` (``CGRSP-jax-mixed`` for a mixed env)."""
        return f"CGRSP-jax-{'mixed' if self.env.is_mixed else self.env.cfg.day}"

    @property
    def num_actions(self) -> int:
        """``K·C + 1`` joint actions (the last is *wait*)."""
        return self.env.n_actions

    def action_space(self, params: EnvParams | None = None) -> spaces.Discrete:
        """``Discrete(K·C + 1)``."""
        return spaces.Discrete(self.env.n_actions)

    def observation_space(self, params: EnvParams | None = None) -> spaces.Dict:
        """``Dict(vector=Box(CGRSP-v0's bounds), action_mask=Box(0, 1, bool))``; ``contains`` reads the NamedTuple."""
        return spaces.Dict(
            {
                "vector": spaces.Box(
                    jnp.asarray(self._low, VECTOR_DTYPE),
                    jnp.asarray(self._high, VECTOR_DTYPE),
                    (self.env.obs_dim,),
                    VECTOR_DTYPE,
                ),
                "action_mask": spaces.Box(0, 1, (self.env.n_actions,), jnp.bool_),
            }
        )

    def state_space(self, params: EnvParams | None = None) -> Mapping:
        """Not described as a gymnax space (the state is the JAX env's :class:`EnvState` pytree)."""
        raise NotImplementedError("the state is JaxCGRSP's EnvState pytree; it has no gymnax space")


__all__ = ["CGRSPGymnax", "Observation"]
