"""Gymnasium registration of every environment id (idempotent).

The ids come from the one scenario table (:mod:`gpu_sched_env.core.scenarios`). Entry points
are strings, so registering imports no simulator: ``gymnasium.make`` imports the env module on
first use. Every id adds one wrapper outside gymnasium's own (:data:`CHECKED_RESET`,
:class:`gpu_sched_env.core.spaces.CheckedReset`): a reset whose arguments the env refuses is
refused before gymnasium's passive env checker sees it, so the env stays usable.
"""

from __future__ import annotations

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

from gpu_sched_env.core.scenarios import CGRSP_DAY_PRESETS, env_table

# id -> (entry point, default kwargs), derived from the scenario table
ENV_TABLE: dict[str, tuple[str, dict]] = env_table()
# the wrapper gym.make puts around every id (outermost), by its string entry point
CHECKED_RESET = WrapperSpec("CheckedReset", "gpu_sched_env.core.spaces:CheckedReset", {})


def register_envs() -> list[str]:
    """Register every id not yet registered; return the ids this package provides."""
    for env_id, (entry_point, kwargs) in ENV_TABLE.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs), additional_wrappers=(CHECKED_RESET,))
    return list(ENV_TABLE)


__all__ = ["CGRSP_DAY_PRESETS", "CHECKED_RESET", "ENV_TABLE", "register_envs"]
