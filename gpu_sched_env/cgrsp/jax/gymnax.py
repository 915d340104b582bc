"""CGRSP's JAX env as a gymnax ``Environment`` (optional: ``pip install 'gpu_sched_env[gymnax]'``).

:class:`CGRSPGymnax` wraps :class:`~gpu_sched_env.cgrsp.jax.env.JaxCGRSP` without changing
its dynamics: ``step_env`` is the JAX env's ``step``, ``reset_env`` its ``reset`` (a native
day, or a row of the pool of :meth:`JaxCGRSP.with_pool` params), and gymnax's own ``step``
auto-resets where the day ended. :func:`make` builds one from a CGRSP-v0 id, as ``gymnax.make``:

    env, params = make("CGRSP-hectic-v0")             # the default design (adapt.DEFAULT_DESIGN)
    obs, state = env.reset(key, params)               # obs: float32[233], in env.observation_space(params)
    obs, state, reward, done, info = env.step(key, state, action, params)
    mask = info["action_mask"]                        # the returned state's mask (= env.action_mask(state, params))

The observation (``obs=``): ``"flat"`` (default) the JAX env's float32 vector in a gymnax
``spaces.Box``, what generic wrappers (``gymnax.wrappers.purerl``'s ``FlattenObservationWrapper``
and ``LogWrapper``, PureJaxRL's copies of them) and learners (rejax) take; ``"masked"`` the
:class:`~.adapt.Observation` ``(vector, action_mask)`` in a ``spaces.Dict``, so a masked rollout
reads the next action's mask from the last ``obs``, across auto-resets too. Either way
``info["action_mask"]`` is the mask of the state ``step`` returns (the new day's after an
auto-reset). The params are :class:`GymnaxParams`: the JAX env's :class:`EnvParams` with gymnax's
``max_steps_in_episode`` (a bound on a day's steps under any actions, which rejax's evaluation reads).

gymnax ≥ 1.0 returns ``(obs, state, reward, terminated, truncated, info)`` from ``step``; a
CGRSP day ends by itself, so ``truncated`` is always False. Its own ``step`` auto-resets, and
``info["action_mask"]`` is then the finished step's; read ``env.action_mask(state, params)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import partial
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
from gpu_sched_env.cgrsp.jax.rules import cap_of
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState
from gpu_sched_env.core.errors import check_choice

try:
    from gymnax.environments import environment, spaces
except ImportError as e:  # pragma: no cover - exercised in a subprocess test
    raise missing_extra("gymnax", "gymnax", e) from e

# gymnax ≥ 1.0 splits done into terminated/truncated and auto-resets pytree observations itself
_GYMNAX_1 = hasattr(environment.Environment, "is_truncated")

OBS_MODES = ("flat", "masked")  # the observation: the vector in a Box; the Observation (vector, mask) in a Dict


@struct.dataclass
class GymnaxParams(EnvParams):
    """The JAX env's :class:`EnvParams` with gymnax's ``max_steps_in_episode`` (static).

    ``max_steps_in_episode`` is :func:`~gpu_sched_env.cgrsp.jax.rules.cap_of` the env: every day ends
    within it whatever the actions (an illegal action plays a legal substitute), so it bounds an
    evaluation loop (rejax's) and never truncates a day. ``env.env.with_pool(key, params, size)`` keeps it.
    """

    max_steps_in_episode: int = struct.field(pytree_node=False, default=0)


class VectorBox(spaces.Box):
    """gymnax's ``Box`` of the observation vector, whose ``sample`` stays inside its bounds by construction.

    gymnax draws ``low + u·(high − low)`` in float32; the draw is clipped to ``[low, high]``, so no
    rounding of that sum can put a sample outside the space: ``contains(sample(key))`` holds.
    """

    def sample(self, key: jax.Array) -> jax.Array:
        """A uniform draw inside ``[low, high]``."""
        return jnp.clip(super().sample(key), self.low, self.high).astype(self.dtype)


class ObservationSpace(spaces.Dict):
    """gymnax's ``Dict`` space of an :class:`~.adapt.Observation` (``vector``, ``action_mask``).

    gymnax's ``Dict.contains`` reads the keys as attributes and its ``sample`` returns an
    ``OrderedDict``; here ``sample`` returns an :class:`~.adapt.Observation`, so ``contains(sample(key))`` holds.
    """

    def sample(self, key: jax.Array) -> Observation:
        """An :class:`~.adapt.Observation` drawn from the two boxes."""
        return Observation(**super().sample(key))


class CGRSPGymnax(environment.Environment):
    """A :class:`JaxCGRSP` as a gymnax environment; params are :class:`GymnaxParams`.

    Args:
        env: a built :class:`JaxCGRSP` (e.g. :meth:`JaxCGRSP.mixed`); or None to build one from
            ``cfg`` and ``kwargs`` (:meth:`JaxCGRSP.from_config`, which raises ConfigError
            listing what the JAX env implements; ``cfg`` None: :func:`~.adapt.default_config`,
            the default design; no per-job records unless ``records=True``).
        cfg: an env config (or its keywords as a mapping), with ``env`` None.
        obs: ``"flat"`` (the vector, a ``spaces.Box``) or ``"masked"`` (the
            :class:`~.adapt.Observation`, a ``spaces.Dict``).
        **kwargs: env settings, simulator parameters and :meth:`JaxCGRSP.from_config`'s
            ``dtype``, ``records``, ``checked``.

    Equal arguments give equal adapters (the same env, the same ``obs``), which share what JAX
    compiled for their jitted methods.
    """

    def __init__(self, env: JaxCGRSP | None = None, cfg: Any = None, *, obs: str = "flat", **kwargs: Any) -> None:
        super().__init__()
        self.obs = check_choice("obs", obs, OBS_MODES)
        self.env = wrapped_env(env, cfg, kwargs)
        self._low, self._high = vector_bounds(self.env)
        base = self.env.default_params
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(EnvParams)}
        self._params = GymnaxParams(**fields, max_steps_in_episode=cap_of(self.env))

    @classmethod
    def from_config(cls, cfg: Any = None, *, obs: str = "flat", **kwargs: Any) -> CGRSPGymnax:
        """The adapter of ``JaxCGRSP.from_config(cfg, **kwargs)`` (``cfg`` None: the default design)."""
        return cls(None, cfg, obs=obs, **kwargs)

    def _key(self) -> tuple:
        return type(self), self.env, self.obs

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CGRSPGymnax) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"CGRSPGymnax({self.name}, obs={self.obs!r}, actions={self.num_actions})"

    @property
    def default_params(self) -> GymnaxParams:
        """The JAX env's default params with ``max_steps_in_episode`` (a pool: ``env.env.with_pool(key, p, size)``)."""
        return self._params

    def _observe(self, s: EnvState, params: EnvParams) -> jax.Array | Observation:
        o = observe(self.env, s, params)
        return o if self.obs == "masked" else o.vector

    def step_env(
        self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[jax.Array | Observation, EnvState, jax.Array, jax.Array, dict]:
        """One step of the JAX env (no reset); ``info`` is its info (metrics of the day so far) and the mask."""
        _, s, reward, done, info = self.env._step(key, state, action, params)
        info = {**info, "action_mask": self.env._action_mask(s, params)}
        return self._observe(s, params), s, reward, done, info

    def reset_env(self, key: jax.Array, params: EnvParams) -> tuple[jax.Array | Observation, EnvState]:
        """A new day: native, or a row of ``params.pool``."""
        s = self.env._reset_state(key, params)
        return self._observe(s, params), s

    def get_obs(
        self, state: EnvState, params: EnvParams | None = None, key: jax.Array | None = None
    ) -> jax.Array | Observation:
        """The observation of ``state`` (the vector, or with ``obs="masked"`` the vector and mask)."""
        return self._observe(state, self.default_params if params is None else params)

    def action_mask(self, state: EnvState, params: EnvParams | None = None) -> jax.Array:
        """The joint action mask of ``state`` (bool[K·C + 1]; also ``info["action_mask"]``)."""
        return self.env._action_mask(state, self.default_params if params is None else params)

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
        ) -> tuple[jax.Array | Observation, EnvState, jax.Array, jax.Array, dict]:
            """The ``step`` of gymnax 0.0.x (auto-reset where done), selecting every leaf of the pytree observation.

            gymnax 0.0.x selects the observation with one ``lax.select``, which takes arrays only.
            ``info["action_mask"]`` is the returned state's mask: the new day's where the day ended.
            """
            params = self.default_params if params is None else params
            key_step, key_reset = jax.random.split(key)
            obs_st, state_st, reward, done, info = self.step_env(key_step, state, action, params)
            obs_re, state_re = self.reset_env(key_reset, params)
            pick = partial(jax.tree_util.tree_map, lambda x, y: jax.lax.select(done, x, y))
            mask_re = self.env._action_mask(state_re, params)
            info = {**info, "action_mask": pick(mask_re, info["action_mask"])}
            return pick(obs_re, obs_st), pick(state_re, state_st), reward, done, info

    @property
    def name(self) -> str:
        """``CGRSP-jax-<day>`` (``CGRSP-jax-mixed`` for a mixed env)."""
        return f"CGRSP-jax-{'mixed' if self.env.is_mixed else self.env.cfg.day}"

    @property
    def num_actions(self) -> int:
        """``K·C + 1`` joint actions (the last is *wait*; more in the joint_hold design)."""
        return self.env.n_actions

    def action_space(self, params: EnvParams | None = None) -> spaces.Discrete:
        """``Discrete(K·C + 1)``."""
        return spaces.Discrete(self.env.n_actions)

    def _vector_space(self) -> VectorBox:
        low, high = jnp.asarray(self._low, VECTOR_DTYPE), jnp.asarray(self._high, VECTOR_DTYPE)
        return VectorBox(low, high, (self.env.obs_dim,), VECTOR_DTYPE)

    def observation_space(self, params: EnvParams | None = None) -> VectorBox | ObservationSpace:
        """``Box(CGRSP-v0's bounds, float32[obs_dim])``; ``obs="masked"``: ``Dict(vector=that, action_mask=bool Box)``.

        ``contains(observation_space(params).sample(key))`` holds for both.
        """
        if self.obs == "flat":
            return self._vector_space()
        mask = spaces.Box(0, 1, (self.env.n_actions,), jnp.bool_)
        return ObservationSpace({"vector": self._vector_space(), "action_mask": mask})

    def state_space(self, params: EnvParams | None = None) -> Mapping:
        """Not described as a gymnax space (the state is the JAX env's :class:`EnvState` pytree)."""
        raise NotImplementedError("the state is JaxCGRSP's EnvState pytree; it has no gymnax space")


def make(env_id: str = "CGRSP-v0", **kwargs: Any) -> tuple[CGRSPGymnax, GymnaxParams]:
    """``(env, params)`` of a CGRSP-v0 id, as ``gymnax.make``: the default design on the id's day.

    Args:
        env_id: ``CGRSP-v0`` or ``CGRSP-<day>-v0`` (:func:`~.adapt.env_ids`; ``gpu_sched_env:`` prefix optional).
        **kwargs: env settings and simulator parameters (over the id's, as ``gym.make``), the
            adapter's ``obs``, and :meth:`JaxCGRSP.from_config`'s ``dtype``, ``records``, ``checked``.

    Raises:
        ConfigError: an unknown id, an ``obs`` not in :data:`OBS_MODES`, a setting the JAX env does not
            implement (naming the value and what is allowed).
    """
    env = CGRSPGymnax(None, None, **id_settings(env_id, kwargs))
    return env, env.default_params


__all__ = ["OBS_MODES", "CGRSPGymnax", "GymnaxParams", "Observation", "ObservationSpace", "VectorBox", "make"]
