"""Gymnasium registration of every environment id (idempotent).

Entry points are strings, so registering imports no simulator: ``gymnasium.make`` imports
the env module on first use.
"""

from __future__ import annotations

import gymnasium as gym

CGRSP_DAY_PRESETS = ("quiet", "normal", "hectic", "surge")

# id -> (entry point, default kwargs)
ENV_TABLE: dict[str, tuple[str, dict]] = {
    "CGRSP-v0": ("gpu_sched_env.cgrsp.env:CGRSPEnv", {}),
    **{
        f"CGRSP-{day}-v0": ("gpu_sched_env.cgrsp.env:CGRSPEnv", {"day": day})
        for day in CGRSP_DAY_PRESETS
    },
    "HGSP-v0": ("gpu_sched_env.hgsp.env:HGSPEnv", {}),
    "LLMServe-v0": ("gpu_sched_env.llm.env:LLMServeEnv", {}),
    "MIG-v0": ("gpu_sched_env.mig.env:MIGEnv", {}),
    "EdgeBatch-v0": ("gpu_sched_env.edge.env:EdgeBatchEnv", {}),
}


def register_envs() -> list[str]:
    """Register every id not yet registered; return the ids this package provides."""
    for env_id, (entry_point, kwargs) in ENV_TABLE.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs))
    return list(ENV_TABLE)
