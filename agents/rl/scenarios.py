"""What training needs to know of each scenario besides CGRSP: env, settings, metrics, heuristics.

``python train.py scenario=hgsp algo=ppo`` (``llm``, ``mig``, ``edge``) trains MaskablePPO on the
scenario's env (:data:`gpu_sched_env.core.scenarios.SCENARIOS`). The env settings are the
``scenario.env`` section, whose Hydra schema is derived from the scenario's own config object
(``HGSPEnvConfig``, ``LLMServeEnvConfig``, ``MIGEnvConfig``, ``EdgeBatchEnvConfig``), so a
misspelt key fails when the config is composed and a bad value when the object is built.

Every scenario is judged as CGRSP is: on the env's own objective, the negated undiscounted return
(the reward's weighted parts summed over the episode; lower is better), plus the scenario's
metrics (lower is better), on the same held-out seeds for the learner and each heuristic.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

import numpy as np

from gpu_sched_env.cgrsp.config import _plain  # OmegaConf containers as plain data, no omegaconf import
from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.registry import load_object
from gpu_sched_env.edge.config import EdgeBatchEnvConfig
from gpu_sched_env.hgsp.config import HGSPEnvConfig
from gpu_sched_env.llm.config import LLMServeEnvConfig
from gpu_sched_env.mig.config import MIGEnvConfig

CGRSP = "cgrsp"
_SIMPLE = (int, float, bool, str)


def _hgsp_summary(env: Any, info: Mapping[str, Any]) -> dict[str, float]:
    from gpu_sched_env.hgsp.metrics import summarize

    return summarize(env.schedule())


def _llm_summary(env: Any, info: Mapping[str, Any]) -> dict[str, float]:
    return env.sim.summary()


def _mig_summary(env: Any, info: Mapping[str, Any]) -> dict[str, float]:
    return dataclasses.asdict(env.sim.result("learned").metrics)


def _edge_summary(env: Any, info: Mapping[str, Any]) -> dict[str, float]:
    return {"makespan_h": float(info["makespan_s"]) / 3600.0, "total_comp_h": float(info["total_comp_s"]) / 3600.0}


@dataclass(frozen=True)
class ScenarioSpec:
    """How a scenario is trained and judged.

    Attributes:
        name: the scenario's row in :data:`~gpu_sched_env.core.scenarios.SCENARIOS`.
        env_id: its Gymnasium id.
        config_cls: its env config object.
        env_cls: ``"module:Class"`` of the env, built from its config object (imported when built).
        agent_cls: ``"module:Class"`` of the scenario's heuristic agent, ``Agent(name, env)``.
        metrics: episode metrics logged and tabled (lower is better), besides ``objective``; the
            first is tested and drawn beside the objective (one the objective does not already hold:
            MIG's and the edge's objective is the makespan).
        labels: axis labels of the first two metrics.
        summary: ``summary(env, last_info) -> metrics`` of a finished episode.
        heuristics: the registry's policies that drive the env (env agents), in registry order.
        left_out: registry policies that are no env agent, and why.
        seeded_agents: the agent takes ``seed=`` (the edge's random policy draws from the episode's stream).
    """

    name: str
    env_id: str
    config_cls: type
    env_cls: str
    agent_cls: str
    metrics: tuple[str, ...]
    labels: tuple[str, str]
    summary: Callable[[Any, Mapping[str, Any]], dict[str, float]]
    heuristics: tuple[str, ...]
    left_out: Mapping[str, str] = field(default_factory=dict)
    seeded_agents: bool = False

    def make_env(self, config: Any) -> Any:
        """The scenario's env built from its config object."""
        return load_object(self.env_cls)(config)

    def agent(self, name: str, env: Any, seed: int) -> Any:
        """The heuristic ``name`` as an env agent (``predict``) on ``env`` for the episode of ``seed``."""
        agent = load_object(self.agent_cls)
        return agent(name, env, seed=seed) if self.seeded_agents else agent(name, env)


SPECS: dict[str, ScenarioSpec] = {
    s.name: s
    for s in (
        ScenarioSpec(
            "hgsp",
            "HGSP-v0",
            HGSPEnvConfig,
            "gpu_sched_env.hgsp.env:HGSPEnv",
            "gpu_sched_agents.heuristics.hgsp:HeuristicAgent",
            ("dmr_pct", "wt", "makespan", "act"),
            ("deadline miss [%]", "weighted tardiness"),
            _hgsp_summary,
            ("fifo", "greedy"),
            {
                "sagreedy": "searches the task order; the env places tasks in arrival order (its agent is greedy's)",
                **{
                    r: "orders the tasks (order(problem)); the env places them in arrival order unless given order="
                    for r in ("wspt", "atc", "mdd", "wmdd", "covert", "ls")
                },
            },
        ),
        ScenarioSpec(
            "llm",
            "LLMServe-v0",
            LLMServeEnvConfig,
            "gpu_sched_env.llm.env:LLMServeEnv",
            "gpu_sched_agents.heuristics.llm:HeuristicAgent",
            ("avg_wait", "weighted_wait", "makespan"),
            ("mean wait [s]", "weighted wait [s]"),
            _llm_summary,
            ("fifo", "wsrpt", "spt", "wsrpt_aging", "smith_area", "backfill", "rollout"),
        ),
        ScenarioSpec(
            "mig",
            "MIG-v0",
            MIGEnvConfig,
            "gpu_sched_env.mig.env:MIGEnv",
            "gpu_sched_agents.heuristics.mig:HeuristicAgent",
            ("mean_flow", "makespan", "deadline_misses"),
            ("mean flow [min]", "makespan [min]"),
            _mig_summary,
            ("best_fit", "first_fit", "earliest_start", "bfd_backfill", "lg_lpt", "local_search"),
            {"best_fit_pausing": "pauses and migrates minute by minute; MIG-v0 places whole jobs"},
        ),
        ScenarioSpec(
            "edge",
            "EdgeBatch-v0",
            EdgeBatchEnvConfig,
            "gpu_sched_env.edge.env:EdgeBatchEnv",
            "gpu_sched_agents.heuristics.edge:HeuristicAgent",
            ("total_comp_h", "makespan_h"),
            ("total compute [h]", "makespan [h]"),
            _edge_summary,
            ("fcfs_llf", "random", "mct"),  # the planners (ILPs, HEFT, min-min, ...) are no env agents
            seeded_agents=True,
        ),
    )
}
SCENARIO_NAMES = (CGRSP, *SPECS)


def spec_of(name: str) -> ScenarioSpec:
    """The spec of a scenario other than CGRSP (ConfigError naming the allowed ones)."""
    check_choice("scenario", name, SCENARIO_NAMES)
    if name == CGRSP:
        raise ConfigError("scenario = 'cgrsp' trains through the CGRSP path (gpu_sched_agents.rl.train)")
    return SPECS[name]


def scenario_of(cfg: Any) -> str:
    """The scenario a composed config trains (``cgrsp`` where the config has no ``scenario``)."""
    section = cfg.get("scenario") if hasattr(cfg, "get") else None
    return str(section.name) if section is not None else CGRSP


def env_config(cfg: Any) -> Any:
    """The scenario's env config object from ``cfg.scenario.env`` (ConfigError on a bad value)."""
    spec = spec_of(scenario_of(cfg))
    section = cfg.scenario.get("env") or {}
    return spec.config_cls(**{k: _plain(v) for k, v in section.items()})


def hydra_schema(cls: type, name: str) -> type:
    """A structured-config schema with the fields and defaults of the env config dataclass ``cls``.

    OmegaConf types plain fields only: a ``Literal`` becomes ``str``, a mapping of weights
    ``dict[str, float]``, and a field that also takes objects (a DataFrame, a profile table)
    ``Any``; the config object checks every value when it is built. ``illegal_action`` is left
    out: the envs the agents build raise on an illegal action (``gpu_sched_agents.rl.envs.strict``).
    """
    hints = typing.get_type_hints(cls)
    specs = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name == "illegal_action":  # the agents' envs are strict whatever it says (envs.strict)
            continue
        hint = _omegaconf_type(hints[f.name])
        if f.default_factory is not dataclasses.MISSING:
            default: Any = field(default_factory=f.default_factory)
        elif isinstance(f.default, tuple):
            default = field(default_factory=lambda v=f.default: list(v))
        else:
            default = f.default
        specs.append((f.name, hint, default))
    return dataclasses.make_dataclass(name, specs)


def _omegaconf_type(hint: Any) -> Any:
    if hint in _SIMPLE:
        return hint
    if get_origin(hint) is Literal:
        return str
    args = get_args(hint)
    if isinstance(hint, types.UnionType) or get_origin(hint) is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2 and rest[0] in _SIMPLE:
            return typing.Optional[rest[0]]  # noqa: UP045 (OmegaConf reads typing.Optional)
        return Any
    if get_origin(hint) is not None and args == (str, float):  # Mapping[str, float]: reward weights
        return dict[str, float]
    return Any


def scenario_schema(spec: ScenarioSpec) -> type:
    """The ``scenario`` node's schema: ``name`` and the env settings ``env``."""
    env = hydra_schema(spec.config_cls, f"{spec.config_cls.__name__}Schema")
    return dataclasses.make_dataclass(
        f"{spec.name.upper()}ScenarioSchema",
        [("name", str, spec.name), ("env", env, field(default_factory=env))],
    )


@dataclass
class CGRSPScenario:
    """``scenario=cgrsp`` (the default): CGRSP's settings live in the ``day`` and ``env`` groups."""

    name: str = CGRSP


def play(env: Any, seed: int, act: Callable[[Any], Any], summary: Callable[..., dict]) -> dict[str, float]:
    """One episode of ``env`` from ``reset(seed=seed)``: the summary, ``objective`` (−return) and ``seed``."""
    obs, info = env.reset(seed=int(seed))
    ret, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, info = env.step(act(obs))
        ret += float(reward)
        done = terminated or truncated
    return {**summary(env, info), "objective": -ret, "seed": int(seed)}


def model_runs(model: Any, spec: ScenarioSpec, config: Any, seeds: list[int]) -> Any:
    """Per-seed rows of a masked model (deterministic actions) on ``seeds``."""
    import pandas as pd

    env = spec.make_env(config)

    def act(obs: Any) -> int:
        return int(np.asarray(model.predict(obs, action_masks=env.action_masks(), deterministic=True)[0]))

    rows = [play(env, s, act, spec.summary) for s in seeds]
    env.close()
    return pd.DataFrame(rows)


def heuristic_runs(spec: ScenarioSpec, config: Any, seeds: list[int], names: tuple[str, ...] | None = None) -> Any:
    """Per-seed rows (``policy`` column) of the scenario's heuristics on ``seeds``."""
    import pandas as pd

    rows = []
    for name in spec.heuristics if names is None else names:
        env = spec.make_env(config)
        for s in seeds:
            agent = spec.agent(name, env, s)
            rows.append({**play(env, s, lambda o, a=agent: int(a.predict(o)[0]), spec.summary), "policy": name})
        env.close()
    return pd.DataFrame(rows)


__all__ = [
    "CGRSP",
    "SCENARIO_NAMES",
    "SPECS",
    "CGRSPScenario",
    "ScenarioSpec",
    "env_config",
    "heuristic_runs",
    "hydra_schema",
    "model_runs",
    "play",
    "scenario_of",
    "scenario_schema",
    "spec_of",
]
