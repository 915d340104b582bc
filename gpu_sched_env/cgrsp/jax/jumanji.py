"""CGRSP's JAX env as a Jumanji ``Environment`` (optional: ``pip install 'gpu_sched_env[jumanji]'``).

:class:`CGRSPJumanji` wraps :class:`~gpu_sched_env.cgrsp.jax.env.JaxCGRSP` without changing
its dynamics. Jumanji's convention: the params are fixed when the env is built, the state
carries the PRNG key, ``reset(key)`` and ``step(state, action)`` return ``(state, TimeStep)``,
and the action mask is a field of the observation (:class:`~.adapt.Observation`, as
Jumanji's ``JobShop``). No auto-reset inside: wrap with ``jumanji.wrappers.AutoResetWrapper``.
:func:`make` builds one from a CGRSP-v0 id, as ``jumanji.make``:

    env = make("CGRSP-hectic-v0")             # or CGRSPJumanji.from_config(day="hectic"): the default design
    state, ts = env.reset(key)
    state, ts = env.step(state, action)       # ts.observation.action_mask, ts.last()

Every leaf of the state is finite when the env keeps no per-job records (the default of an
env the adapter builds), so ``jumanji.testing.env_not_smoke.check_env_does_not_smoke(env)`` passes
with its defaults.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from gpu_sched_env.cgrsp.jax.adapt import (
    VECTOR_DTYPE,
    Observation,
    id_settings,
    missing_extra,
    observe,
    vector_bounds,
    wrapped_env,
)
from gpu_sched_env.cgrsp.jax.env import JaxCGRSP
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState

try:
    import jumanji
    from jumanji import specs
    from jumanji.types import StepType, TimeStep
except ImportError as e:  # pragma: no cover - exercised in a subprocess test
    raise missing_extra("jumanji", "jumanji", e) from e


@struct.dataclass
class State:
    """Jumanji's state: the JAX env's state and the key of the next step (Jumanji's ``StateProtocol``)."""

    env: EnvState
    key: jax.Array


class CGRSPJumanji(jumanji.Environment[State, specs.DiscreteArray, Observation]):
    """A :class:`JaxCGRSP` as a Jumanji environment; ``timestep.extras`` is the JAX env's step info.

    Args:
        env: a built :class:`JaxCGRSP`; or None to build one from ``cfg`` and ``kwargs``
            (:meth:`JaxCGRSP.from_config`: ConfigError listing what the JAX env implements;
            ``cfg`` None: :func:`~.adapt.default_config`, the default design; no per-job records
            unless ``records=True``).
        cfg: an env config (or its keywords as a mapping), with ``env`` None.
        params: the env's params (default ``env.default_params``; a pool: ``env.with_pool(...)``).
        **kwargs: env settings, simulator parameters and :meth:`JaxCGRSP.from_config`'s
            ``dtype``, ``records``, ``checked``.

    Adapters of the same env and the same params object are equal, and share what JAX compiled
    for ``reset`` and ``step``.
    """

    def __init__(self, env: JaxCGRSP | None = None, cfg: Any = None, params: EnvParams | None = None, **kwargs: Any):
        self.env = wrapped_env(env, cfg, kwargs)
        self.params = self.env.default_params if params is None else params
        self._low, self._high = vector_bounds(self.env)
        super().__init__()

    @classmethod
    def from_config(cls, cfg: Any = None, **kwargs: Any) -> CGRSPJumanji:
        """The adapter of ``JaxCGRSP.from_config(cfg, **kwargs)`` (``cfg`` None: the default design)."""
        return cls(None, cfg, **kwargs)

    def _key(self) -> tuple:
        return type(self), self.env, id(self.params)  # the params by identity (a pytree of arrays; held by self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CGRSPJumanji) and self._key() == other._key() and self.params is other.params

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"CGRSPJumanji({'mixed' if self.env.is_mixed else self.env.cfg.day}, actions={self.env.n_actions})"

    @partial(jax.jit, static_argnums=0)
    def reset(self, key: jax.Array) -> tuple[State, TimeStep[Observation]]:
        """A new day (native, or a row of the params' pool); ``TimeStep`` FIRST with zero reward.

        Jitted, as ``step``: a caller that resets eagerly (Jumanji's own ``check_env_does_not_smoke``
        does) runs one compiled program, not a few hundred primitives compiled one by one (20 s on CPU).
        """
        key, k_day = jax.random.split(key)
        s = self.env._reset_state(k_day, self.params)
        zero = jnp.zeros((), self.env.dtype)
        ts = TimeStep(
            step_type=StepType.FIRST,
            reward=zero,
            discount=jnp.ones((), self.env.dtype),
            observation=observe(self.env, s, self.params),
            extras=self._blank_extras(s),
        )
        return State(env=s, key=key), ts

    @partial(jax.jit, static_argnums=0)
    def step(self, state: State, action: jax.Array) -> tuple[State, TimeStep[Observation]]:
        """One step of the JAX env; ``TimeStep`` LAST (discount 0) when the day ends, MID otherwise."""
        key, k_step = jax.random.split(state.key)
        _, s, reward, done, info = self.env._step(k_step, state.env, action, self.params)
        ts = TimeStep(
            step_type=jnp.where(done, StepType.LAST, StepType.MID),
            reward=jnp.asarray(reward, self.env.dtype),
            discount=jnp.where(done, 0.0, 1.0).astype(self.env.dtype),
            observation=observe(self.env, s, self.params),
            extras=info,
        )
        return State(env=s, key=key), ts

    def _blank_extras(self, s: EnvState) -> dict:
        """Zeros shaped as a step's info: ``reset`` and ``step`` then return one TimeStep structure (for wrappers)."""
        shapes = jax.eval_shape(lambda: self.env._step(jax.random.PRNGKey(0), s, 0, self.params)[4])
        return jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), shapes)

    @cached_property
    def observation_spec(self) -> specs.Spec[Observation]:
        """``vector``: CGRSP-v0's bounds, flattened; ``action_mask``: bool[K·C + 1]."""
        return specs.Spec(
            Observation,
            "ObservationSpec",
            vector=specs.BoundedArray((self.env.obs_dim,), VECTOR_DTYPE, self._low, self._high, "vector"),
            action_mask=specs.BoundedArray((self.env.n_actions,), bool, False, True, "action_mask"),
        )

    @cached_property
    def action_spec(self) -> specs.DiscreteArray:
        """``K·C + 1`` joint actions (the last is *wait*)."""
        return specs.DiscreteArray(self.env.n_actions, dtype=jnp.int32, name="action")

    @cached_property
    def reward_spec(self) -> specs.Array:
        """A scalar of the env's float dtype."""
        return specs.Array((), self.env.dtype, "reward")

    @cached_property
    def discount_spec(self) -> specs.BoundedArray:
        """0 at the end of the day, else 1."""
        return specs.BoundedArray((), self.env.dtype, 0.0, 1.0, "discount")


def make(env_id: str = "CGRSP-v0", **kwargs: Any) -> CGRSPJumanji:
    """The Jumanji env of a CGRSP-v0 id, as ``jumanji.make``: the default design on the id's day.

    Args:
        env_id: ``CGRSP-v0`` or ``CGRSP-<day>-v0`` (:func:`~.adapt.env_ids`; ``gpu_sched_env:`` prefix optional).
        **kwargs: env settings and simulator parameters (over the id's, as ``gym.make``), ``params``,
            and :meth:`JaxCGRSP.from_config`'s ``dtype``, ``records``, ``checked``.

    Raises:
        ConfigError: an unknown id, or a setting the JAX env does not implement (naming the value and
            what is allowed).
    """
    return CGRSPJumanji(None, None, **id_settings(env_id, kwargs))


__all__ = ["CGRSPJumanji", "Observation", "State", "make"]
