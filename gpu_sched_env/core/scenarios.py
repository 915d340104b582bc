"""The one table of the project's scenarios: env ids, env classes and policy plug-ins.

Everything that lists the scenarios is derived from :data:`SCENARIOS`:

* the Gymnasium ids and their string entry points (:data:`gpu_sched_env.ENV_TABLE`, registered
  by :func:`gpu_sched_env.register_envs`);
* the project's own policy plug-in modules (:data:`gpu_sched_env.core.registry.BUILTIN_PLUGINS`);
* the ``gpu_sched_env.policies`` entry points of ``pyproject.toml`` cannot be derived (packaging
  metadata is static), so ``tests/core/test_layers.py`` holds them equal to the table.

Adding a scenario adds one row here (see docs/architecture.md, "Adding a scenario"). The table
holds strings only, so importing it imports no simulator, env or plug-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

CGRSP_DAY_PRESETS = ("quiet", "normal", "hectic", "surge")


@dataclass(frozen=True)
class Scenario:
    """One scenario's row.

    Attributes:
        name: the scenario's package under ``gpu_sched_env/`` (and ``agents/heuristics/``,
            ``studies/``), and its registry's name.
        env: the env class as ``"module:Class"`` (a string: registering imports nothing).
        env_ids: env id -> the default keyword arguments ``gym.make`` passes for it.
        plugin: the module that registers the scenario's policies (its entry point's value).
    """

    name: str
    env: str
    env_ids: Mapping[str, Mapping[str, Any]]
    plugin: str

    def __post_init__(self) -> None:  # read-only views: a row cannot be edited in place
        ids = {k: MappingProxyType(dict(v)) for k, v in self.env_ids.items()}
        object.__setattr__(self, "env_ids", MappingProxyType(ids))


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "cgrsp",
        "gpu_sched_env.cgrsp.env:CGRSPEnv",
        {"CGRSP-v0": {}, **{f"CGRSP-{day}-v0": {"day": day} for day in CGRSP_DAY_PRESETS}},
        "gpu_sched_agents.heuristics.cgrsp",
    ),
    Scenario("hgsp", "gpu_sched_env.hgsp.env:HGSPEnv", {"HGSP-v0": {}}, "gpu_sched_agents.heuristics.hgsp"),
    Scenario("llm", "gpu_sched_env.llm.env:LLMServeEnv", {"LLMServe-v0": {}}, "gpu_sched_agents.heuristics.llm"),
    Scenario("mig", "gpu_sched_env.mig.env:MIGEnv", {"MIG-v0": {}}, "gpu_sched_agents.heuristics.mig"),
    Scenario("edge", "gpu_sched_env.edge.env:EdgeBatchEnv", {"EdgeBatch-v0": {}}, "gpu_sched_agents.heuristics.edge"),
)


def env_table() -> dict[str, tuple[str, dict]]:
    """Env id -> (entry point, default kwargs), for every scenario in table order."""
    return {env_id: (s.env, dict(kwargs)) for s in SCENARIOS for env_id, kwargs in s.env_ids.items()}


def builtin_plugins() -> dict[str, str]:
    """Scenario -> the module that registers its policies."""
    return {s.name: s.plugin for s in SCENARIOS}


__all__ = ["CGRSP_DAY_PRESETS", "SCENARIOS", "Scenario", "builtin_plugins", "env_table"]
