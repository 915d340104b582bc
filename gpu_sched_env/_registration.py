"""Gymnasium registration of every environment id (idempotent).

The ids come from the one scenario table (:mod:`gpu_sched_env.core.scenarios`). Entry points
are strings, so registering imports no simulator: ``gymnasium.make`` imports the env module on
first use.
"""

from __future__ import annotations

import gymnasium as gym

from gpu_sched_env.core.scenarios import CGRSP_DAY_PRESETS, env_table

# id -> (entry point, default kwargs), derived from the scenario table
ENV_TABLE: dict[str, tuple[str, dict]] = env_table()


def register_envs() -> list[str]:
    """Register every id not yet registered; return the ids this package provides."""
    for env_id, (entry_point, kwargs) in ENV_TABLE.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs))
    return list(ENV_TABLE)


__all__ = ["CGRSP_DAY_PRESETS", "ENV_TABLE", "register_envs"]
