"""What the gymnax and Jumanji adapters share: the default design, the env ids, the observation and its bounds.

Both adapters (:mod:`.gymnax`, :mod:`.jumanji`) observe the JAX env's flat float32 vector and the
joint action mask of the same state. Jumanji's observation is :class:`Observation`, a NamedTuple
``(vector, action_mask)`` (Jumanji's ``job_shop`` convention); gymnax's is the flat vector alone by
default (a ``gymnax.environments.spaces.Box``, what generic wrappers and learners expect), with
the mask in ``info`` and ``env.action_mask(state)``, or the :class:`Observation` with ``obs="masked"``.
The mask travels with the observation because a rollout chooses its next action from what the
last ``reset``/``step`` returned; after an auto-reset that is the *new* day's, and its mask must
come with it.

Built with no config, an adapter plays :data:`DEFAULT_DESIGN` (:func:`default_config`);
:func:`id_settings` maps CGRSP-v0's Gymnasium ids to the settings they register, for the
adapters' ``make``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.jax.bench import joint_heads_config
from gpu_sched_env.cgrsp.jax.env import JaxCGRSP
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState
from gpu_sched_env.cgrsp.obs import ObsEncoder
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.scenarios import SCENARIOS


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


# The design an adapter plays when given no config: experiment=joint_heads (conf/env/joint_heads.yaml). Why this
# one of the three the JAX env implements: it is the design JaxCGRSP itself is (joint_hold and when extend it), the
# one the equivalence suites hold step for step to CGRSP-v0 and whose action space the JAX rules act in; a learner
# chooses every (class head, idle slot) pair or waits, and the strongest rule (spt_rescue_defer_exp) is expressible
# in it job for job, so it starts with no handicap. joint_hold adds "hold GPU type g" actions; when leaves the
# learner only the timing of a rule's order (two actions), a narrower problem than scheduling.
DEFAULT_DESIGN = "joint_heads"


def default_config() -> CGRSPEnvConfig:
    """The adapters' env config when none is given: :data:`DEFAULT_DESIGN` on CGRSP-v0's default day.

    ``experiment=joint_heads`` as Hydra resolves it (:func:`~gpu_sched_env.cgrsp.jax.bench.joint_heads_config`):
    window 3 by class (the three class heads, SPT order), ``action_mode="joint"`` (16 actions on the
    5-slot fleet), the capacity reward with a miss at 16 job-hours, ``features="model"``, 10 slot rows:
    a 233-wide observation.
    """
    day = next(f.default for f in dataclasses.fields(CGRSPEnvConfig) if f.name == "day")
    return joint_heads_config(day)


def env_ids() -> dict[str, dict[str, Any]]:
    """CGRSP-v0's Gymnasium ids and the settings each registers (``gpu_sched_env.core.scenarios``)."""
    row = next(s for s in SCENARIOS if s.name == "cgrsp")
    return {env_id: dict(kwargs) for env_id, kwargs in row.env_ids.items()}


def id_settings(env_id: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The settings an adapter's ``make(env_id, **kwargs)`` builds with: the id's, then ``kwargs`` (as ``gym.make``).

    ``env_id`` is one of :func:`env_ids` (the ``gpu_sched_env:`` prefix of ``gym.make`` is optional).

    Raises:
        ConfigError: an unknown id, or ``env``/``cfg`` among ``kwargs`` (``make`` takes settings as keywords).
    """
    ids = env_ids()
    name = env_id.removeprefix("gpu_sched_env:") if isinstance(env_id, str) else env_id
    if not isinstance(name, str) or name not in ids:
        raise ConfigError(
            f"env_id = {env_id!r} is not known to the JAX env; allowed: {', '.join(ids)} (CGRSP-v0's Gymnasium ids)"
        )
    clash = sorted({"env", "cfg"} & set(kwargs))
    if clash:
        raise ConfigError(
            f"make({env_id!r}, {clash[0]}=...) is not allowed; allowed: env settings and simulator parameters as "
            "keywords (or build the adapter itself from a JaxCGRSP or a config)"
        )
    return {**ids[name], **kwargs}


def wrapped_env(env: JaxCGRSP | None, cfg: Any, kwargs: Mapping[str, Any]) -> JaxCGRSP:
    """``env`` as given, or :meth:`JaxCGRSP.from_config` of ``cfg`` and ``kwargs`` (ConfigError: a design it lacks).

    ``cfg`` None is :func:`default_config`. An env the adapter builds keeps no per-job records unless
    ``records=True`` is given: the dynamics never read them, an auto-reset then copies no N-sized array,
    and every leaf of the state is finite (the records hold inf for "not yet", as CGRSP-v0's).
    """
    if env is None:
        return JaxCGRSP.from_config(default_config() if cfg is None else cfg, **{"records": False, **kwargs})
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


__all__ = [
    "DEFAULT_DESIGN",
    "VECTOR_DTYPE",
    "Observation",
    "default_config",
    "env_ids",
    "id_settings",
    "missing_extra",
    "observe",
    "vector_bounds",
    "wrapped_env",
]
