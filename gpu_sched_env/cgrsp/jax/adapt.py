"""What the gymnax and Jumanji adapters share: the observation with its mask, its bounds, the env they wrap.

Both adapters (:mod:`.gymnax`, :mod:`.jumanji`) return :class:`Observation`, a NamedTuple
``(vector, action_mask)``: the JAX env's flat float vector and the joint action mask of the
same state. The mask travels in the observation (Jumanji's ``job_shop`` convention) because a
rollout chooses its next action from what the last ``reset``/``step`` returned; after an
auto-reset that is the *new* day's observation, and its mask must come with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.jax.env import JaxCGRSP
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState
from gpu_sched_env.cgrsp.obs import ObsEncoder
from gpu_sched_env.core.errors import ConfigError


class Observation(NamedTuple):
    """The adapters' observation: ``vector`` f[D] (:class:`JaxCGRSP`'s) and the same state's ``action_mask`` bool[A]."""

    vector: jnp.ndarray
    action_mask: jnp.ndarray


VECTOR_DTYPE = jnp.float32  # the JAX env's observation is float32 in either float dtype of its state (as CGRSP-v0's)


def missing_extra(module: str, extra: str, err: ImportError) -> ImportError:
    """The ImportError for an adapter whose library is absent, naming the extra to install."""
    return ImportError(
        f"gpu_sched_env.cgrsp.jax.{module} needs {extra}, which is not installed ({err}): "
        f"pip install 'gpu_sched_env[{extra}]'"
    )


def wrapped_env(env: JaxCGRSP | None, cfg: Any, kwargs: Mapping[str, Any]) -> JaxCGRSP:
    """``env`` as given, or :meth:`JaxCGRSP.from_config` of ``cfg`` and ``kwargs`` (ConfigError: a design it lacks)."""
    if env is None:
        return JaxCGRSP.from_config(cfg, **kwargs)
    if cfg is not None or kwargs:
        raise ConfigError(
            f"env = {type(env).__name__} given together with cfg/keywords {sorted(kwargs) or ['cfg']}; "
            "allowed: either a built JaxCGRSP or an env config, not both"
        )
    if not isinstance(env, JaxCGRSP):
        raise ConfigError(f"env = {type(env).__name__!r} is not allowed; allowed: a gpu_sched_env.cgrsp.jax.JaxCGRSP")
    return env


def observe(env: JaxCGRSP, s: EnvState, params: EnvParams) -> Observation:
    """The :class:`Observation` of state ``s`` (pure; call inside jit)."""
    return Observation(env._obs(s, params), env._action_mask(s, params))


def vector_bounds(env: JaxCGRSP) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` f32[D] of the observation vector: CGRSP-v0's Box bounds, flattened as the JAX env's vector.

    A mixed env takes the widest bounds over its regimes (a day type's bounds depend on its parameters).
    """
    cfgs = [env.cfg] if env.regimes is None else [r.config(env.cfg) for r in env.regimes]
    lows, highs = [], []
    for cfg in cfgs:
        space = ObsEncoder(cfg.sim_params(), cfg.window, cfg.slot_rows, cfg.features).space(env.n_actions)
        lows.append(env.flatten_obs({k: sp.low for k, sp in space.spaces.items() if k != "action_mask"}))
        highs.append(env.flatten_obs({k: sp.high for k, sp in space.spaces.items() if k != "action_mask"}))
    return np.min(lows, axis=0), np.max(highs, axis=0)


__all__ = ["VECTOR_DTYPE", "Observation", "missing_extra", "observe", "vector_bounds", "wrapped_env"]
