"""One benchmark row per scenario: what ``gpu-sched evaluate --scenario S`` plays, judges and bounds.

A row (:class:`Benchmark`) is data: the objective (lower is better) and any guard metric, the
regimes (:class:`Regime`: an instance generator's settings), how an instance is made from
``(regime, seed)``, how a registered rule, a ``module:attr`` object and a learned env model play
it, which registered names are not rules (and why), and the bound hook
``gpu_sched_agents.heuristics.<s>.bounds:bound``, optional: a scenario without that module is
judged with "no bound". The rules are read from the scenario's registry when the protocol runs,
so a rule registered later is judged without a change here.

CGRSP's row points at its own protocol (:mod:`gpu_sched_agents.evaluate.protocol`, unchanged);
the other four are played by :mod:`gpu_sched_agents.evaluate.bench`.

Instances (what a rule, the policy and the bound see, the same for every one of them on a seed):

* hgsp: :class:`gpu_sched_env.hgsp.sim.Problem` (``generate_tasks(tasks, seed, n)`` on a cluster preset);
  objective the total weighted tardiness ``wt`` of :func:`gpu_sched_env.hgsp.run`.
* llm: :class:`gpu_sched_env.llm.model.Workload` (``mixed(seed, n, rate, gpus)``), played by
  :func:`gpu_sched_env.llm.simulate` on the event engine; objective ``weighted_wait`` [s].
* mig: a tuple of :class:`gpu_sched_env.mig.model.Job` (``mig_dataset(seed, n_jobs)``, the default
  capacities, polls every minute), played by :func:`gpu_sched_env.mig.sim.run_policy`; objective the makespan [min].
* edge: :class:`gpu_sched_env.edge.model.EdgeProblem` (the first ``n`` workloads of the study's pool of
  seed ``seed`` on the Jetson cluster), planned by a registered planner and simulated without execution
  noise (:func:`gpu_sched_env.edge.sim.simulate`); objective the makespan [h].
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.core.scenarios import SCENARIOS


@dataclass(frozen=True)
class Regime:
    """One regime: the instance generator's settings; ``exact``: small enough for the exact solver's optimum."""

    name: str
    params: Mapping[str, Any]
    exact: bool = False
    about: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class Benchmark:
    """How one scenario is benchmarked (see the module docstring).

    Attributes:
        scenario: the row of :data:`gpu_sched_env.core.scenarios.SCENARIOS`.
        objective: the metric judged, lower is better; ``unit`` its unit.
        guard: a metric that must not get worse (``criteria.verdict``'s guard), or None.
        metrics: what each play records (the objective first).
        regimes: the regimes, in report order.
        seeds: test seeds per regime of the standard protocol; ``quick``: (regime, seeds) of ``--quick``.
        instance: ``instance(params, seed)`` -> the instance of a regime on a seed.
        play_rule: ``play_rule(name, instance, params, seed)`` -> metrics (a registered rule).
        play_object: ``play_object(obj, instance, params, seed)`` -> metrics (a ``module:attr`` object).
        env: ``env(instance, params)`` -> ``(env, reset options)``: the scenario's env on that instance.
        rules: the registered names (the scenario's registry), before :attr:`excluded` is applied.
        excluded: registered name -> why it is not a rule (an exact solver is a bound).
        bound_call: ``bound_call(hook, instance, time_limit_s)`` -> a :class:`~gpu_sched_env.core.bounds.Bound`.
        bound_limit_s: [s] the exact solver's limit on an ``exact`` regime; other regimes ask with 0 (its
            relaxation only).
        protocol: CGRSP: the module of its own protocol (the other fields are unused).
    """

    scenario: str
    objective: str
    unit: str
    guard: str | None
    metrics: tuple[str, ...]
    regimes: tuple[Regime, ...]
    seeds: int
    quick: tuple[str, int]
    instance: Callable[[Mapping[str, Any], int], Any] | None = None
    play_rule: Callable[[str, Any, Mapping[str, Any], int], dict[str, float]] | None = None
    play_object: Callable[[Any, Any, Mapping[str, Any], int], dict[str, float]] | None = None
    env: Callable[[Any, Mapping[str, Any]], tuple[Any, dict[str, Any] | None]] | None = None
    rules: Callable[[], tuple[str, ...]] = lambda: ()
    excluded: Mapping[str, str] = field(default_factory=dict)
    bound_call: Callable[[Callable[..., Any], Any, float], Any] | None = None
    bound_limit_s: float = 10.0
    protocol: str | None = None

    @property
    def regime_names(self) -> tuple[str, ...]:
        """The regimes' names, in order."""
        return tuple(r.name for r in self.regimes)

    def regime(self, name: str) -> Regime:
        """The regime ``name`` (ConfigError naming the scenario's regimes otherwise)."""
        check_choice(f"--scenario {self.scenario} --regimes", name, self.regime_names)
        return next(r for r in self.regimes if r.name == name)

    def rule_names(self) -> tuple[str, ...]:
        """Every registered name that is a rule: the registry's, less :attr:`excluded`."""
        return tuple(n for n in self.rules() if n not in self.excluded)

    def excluded_now(self) -> dict[str, str]:
        """The registered names left out of the rules, and why (the ones registered now)."""
        return {n: why for n, why in self.excluded.items() if n in self.rules()}

    @property
    def bound_module(self) -> str:
        """The module of the bound hook."""
        return f"gpu_sched_agents.heuristics.{self.scenario}.bounds"

    def bound_hook(self) -> Callable[..., Any] | None:
        """``bounds.bound`` of the scenario, or None while the module does not exist."""
        try:
            found = importlib.util.find_spec(self.bound_module)
        except ModuleNotFoundError:
            found = None
        if found is None or self.bound_call is None:
            return None
        from gpu_sched_env.core.registry import load_object

        return load_object(f"{self.bound_module}:bound")


# ---- HGSP ---------------------------------------------------------------------------------------------------
def _hgsp_instance(params: Mapping[str, Any], seed: int) -> Any:
    from gpu_sched_env.hgsp.model import make_cluster
    from gpu_sched_env.hgsp.sim import Problem
    from gpu_sched_env.hgsp.workload import generate_tasks

    return Problem(generate_tasks(params["tasks"], seed, params.get("n")), make_cluster(params["cluster"]))


def _hgsp_play(policy: Any, problem: Any, params: Mapping[str, Any], seed: int) -> dict[str, float]:
    from gpu_sched_env.hgsp.api import run

    s = run(policy, problem.tasks, problem.cluster, seed).summary()
    return {m: float(s[m]) for m in ("wt", "dmr_pct", "act", "makespan")}


def _hgsp_env(problem: Any, params: Mapping[str, Any]) -> tuple[Any, None]:
    from gpu_sched_env.hgsp.config import HGSPEnvConfig
    from gpu_sched_env.hgsp.env import HGSPEnv

    return HGSPEnv(HGSPEnvConfig(tasks=problem.tasks, cluster=problem.cluster, illegal_action="raise")), None


def _registry(scenario: str, table: str = "POLICIES") -> Callable[[], tuple[str, ...]]:
    def names() -> tuple[str, ...]:
        from gpu_sched_env.core.registry import load_object

        return tuple(load_object(f"gpu_sched_env.{scenario}.policies:{table}").names())

    return names


# ---- LLM ----------------------------------------------------------------------------------------------------
def _llm_instance(params: Mapping[str, Any], seed: int) -> Any:
    from gpu_sched_env.llm.model import mixed

    return mixed(seed, n=params["n"], rate=params["rate"], gpus=params["gpus"])


def _llm_play(policy: Any, workload: Any, params: Mapping[str, Any], seed: int) -> dict[str, float]:
    from gpu_sched_env.llm.api import simulate

    s = simulate(policy, workload, engine=params["engine"], seed=seed).summary()
    return {m: float(s[m]) for m in ("weighted_wait", "avg_wait", "makespan")}


def _llm_env(workload: Any, params: Mapping[str, Any]) -> tuple[Any, None]:
    from gpu_sched_env.llm.config import LLMServeEnvConfig
    from gpu_sched_env.llm.env import LLMServeEnv

    return LLMServeEnv(LLMServeEnvConfig(workload=workload, engine=params["engine"], illegal_action="raise")), None


# ---- MIG ----------------------------------------------------------------------------------------------------
def _mig_instance(params: Mapping[str, Any], seed: int) -> Any:
    from gpu_sched_env.mig.workload import mig_dataset

    return tuple(mig_dataset(seed, params["n_jobs"]))


def _mig_play(policy: Any, jobs: Any, params: Mapping[str, Any], seed: int) -> dict[str, float]:
    from gpu_sched_env.mig.sim import run_policy

    m = run_policy(list(jobs), policy, seed=seed).metrics
    return {"makespan": float(m.makespan), "mean_flow": float(m.mean_flow), "deadline_misses": float(m.deadline_misses)}


def _mig_env(jobs: Any, params: Mapping[str, Any]) -> tuple[Any, None]:
    from gpu_sched_env.mig.config import MIGEnvConfig
    from gpu_sched_env.mig.env import MIGEnv

    return MIGEnv(MIGEnvConfig(jobs=list(jobs), illegal_action="raise")), None


def _mig_bound(hook: Callable[..., Any], jobs: Any, limit: float) -> Any:
    return hook(list(jobs), time_limit_s=limit)


# ---- edge ---------------------------------------------------------------------------------------------------
EDGE_POOL = 1000  # workloads drawn per seed, as the edge study draws them; an instance of n tasks takes the first n


def _edge_instance(params: Mapping[str, Any], seed: int) -> Any:
    from gpu_sched_env.core.rng import stream
    from gpu_sched_env.edge.model import EdgeProblem, jetson_cluster
    from gpu_sched_env.edge.profiles import default_profiles
    from gpu_sched_env.edge.workload import random_workloads, tasks_from_workloads

    cluster = jetson_cluster()
    names = random_workloads(EDGE_POOL, stream(seed, "tasks"))[: params["n_tasks"]]
    return EdgeProblem(tuple(tasks_from_workloads(names, default_profiles(), cluster)), cluster)


def _edge_metrics(makespan_s: float, total_comp_s: float) -> dict[str, float]:
    return {"makespan_h": makespan_s / 3600.0, "total_comp_h": total_comp_s / 3600.0}


def _edge_env(problem: Any, params: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    from gpu_sched_env.edge.config import EdgeBatchEnvConfig
    from gpu_sched_env.edge.env import EdgeBatchEnv

    env = EdgeBatchEnv(EdgeBatchEnvConfig(n_tasks=len(problem.tasks), illegal_action="raise"))
    return env, {"workloads": [t.workload for t in problem.tasks]}


def _edge_env_play(act: Any, problem: Any, seed: int) -> dict[str, float]:
    """An env policy (``decide`` on :class:`~gpu_sched_env.edge.env.EdgeDecision`) through EdgeBatch-v0."""
    env, options = _edge_env(problem, {})
    obs, info = env.reset(seed=seed, options=options)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(act(env, obs))
        done = terminated or truncated
    env.close()
    return _edge_metrics(float(info["makespan_s"]), float(info["total_comp_s"]))


def _edge_play(policy: Any, problem: Any, params: Mapping[str, Any], seed: int) -> dict[str, float]:
    from gpu_sched_agents.heuristics.edge import LLF_STREAM, HeuristicAgent
    from gpu_sched_env.core.rng import stream
    from gpu_sched_env.edge.env import EdgeDecision, obs_slices
    from gpu_sched_env.edge.policies import PLANNERS
    from gpu_sched_env.edge.sim import simulate

    if isinstance(policy, str) and policy not in PLANNERS:  # an env policy only (random): through the env
        agent: list[Any] = []

        def act(env: Any, obs: Any) -> int:
            if not agent:
                agent.append(HeuristicAgent(policy, env, seed=seed))
            return int(agent[0].predict(obs)[0])

        return _edge_env_play(act, problem, seed)
    if isinstance(policy, str):
        policy = PLANNERS.make(policy)
    if callable(getattr(policy, "plan", None)):
        sim = simulate(policy.plan(problem, stream(seed, LLF_STREAM)), problem.cluster)
        return _edge_metrics(sim.makespan_s, sim.total_comp_s)
    policy.reset(problem.cluster, stream(seed, LLF_STREAM))
    view = getattr(policy, "view_type", EdgeDecision)
    return _edge_env_play(
        lambda env, obs: int(policy.decide(view.from_obs(obs, obs_slices(problem.cluster.n)))), problem, seed
    )


def _edge_rules() -> tuple[str, ...]:
    from gpu_sched_env.edge.policies import PLANNERS, POLICIES

    return (*PLANNERS.names(), *(n for n in POLICIES.names() if n not in PLANNERS))


def _plain_bound(hook: Callable[..., Any], instance: Any, limit: float) -> Any:
    return hook(instance, time_limit_s=limit)


# An exact solver registered as a policy is a bound, not a rule: such names (where registered) are left out.
EXACT_NAMES = {
    "cpsat": "the exact CP-SAT solver: its value is the bound (bounds.py), not a rule's",
    "exact": "an exact solver: its value is the bound (bounds.py), not a rule's",
}

BENCHMARKS: dict[str, Benchmark] = {
    b.scenario: b
    for b in (
        Benchmark(
            "cgrsp",
            "mean_wait_min",
            "min",
            "miss_pct",
            ("mean_wait_min", "miss_pct"),
            tuple(
                Regime(r, {"day": d, "stock": s})
                for r, (d, s) in {
                    "hectic_fresh": ("hectic", "fresh"),
                    "hectic_D900": ("hectic", "900"),
                    "surge_fresh": ("surge", "fresh"),
                    "surge_D900": ("surge", "900"),
                }.items()
            ),
            100,
            ("hectic_fresh", 5),
            protocol="gpu_sched_agents.evaluate.protocol",
        ),
        Benchmark(
            "hgsp",
            "wt",
            "weighted tardiness",
            None,
            ("wt", "dmr_pct", "act", "makespan"),
            (
                Regime("tasks1_small", {"tasks": "tasks1", "cluster": "small"}, about="the study's tasks1 setting"),
                Regime("tasks1_medium", {"tasks": "tasks1", "cluster": "medium"}, about="tasks1 on twice the GPUs"),
                Regime("tasks2_medium", {"tasks": "tasks2", "cluster": "medium"}, about="the study's tasks2 setting"),
                Regime("tasks2_small", {"tasks": "tasks2", "cluster": "small"}, about="tasks2 beyond capacity"),
                Regime("tiny_small", {"tasks": "tiny", "cluster": "small"}, exact=True, about="12 tasks in a burst"),
            ),
            30,
            ("tasks1_small", 5),
            _hgsp_instance,
            _hgsp_play,
            _hgsp_play,
            _hgsp_env,
            _registry("hgsp"),
            EXACT_NAMES,
            _plain_bound,
        ),
        Benchmark(
            "llm",
            "weighted_wait",
            "s",
            None,
            ("weighted_wait", "avg_wait", "makespan"),
            (
                Regime("mixed_n50_h16", {"n": 50, "rate": 4.0, "gpus": 16, "engine": "event"}, about="LLMServe-v0"),
                Regime("mixed_n50_h8", {"n": 50, "rate": 4.0, "gpus": 8, "engine": "event"}, about="half the GPUs"),
                Regime("mixed_n200_h16", {"n": 200, "rate": 4.0, "gpus": 16, "engine": "event"}, about="the study's"),
                Regime(
                    "tiny_n6_h4", {"n": 6, "rate": 4.0, "gpus": 4, "engine": "event"}, exact=True, about="6 requests"
                ),
            ),
            30,
            ("mixed_n50_h16", 5),
            _llm_instance,
            _llm_play,
            _llm_play,
            _llm_env,
            _registry("llm"),
            EXACT_NAMES,
            _plain_bound,
        ),
        Benchmark(
            "mig",
            "makespan",
            "min",
            None,
            ("makespan", "mean_flow", "deadline_misses"),
            (
                Regime("jobs50", {"n_jobs": 50}, about="the study's data sets"),
                Regime("jobs100", {"n_jobs": 100}, about="twice the jobs"),
                Regime("jobs8", {"n_jobs": 8}, exact=True, about="8 jobs"),
            ),
            50,
            ("jobs50", 5),
            _mig_instance,
            _mig_play,
            _mig_play,
            _mig_env,
            _registry("mig"),
            EXACT_NAMES,
            _mig_bound,
        ),
        Benchmark(
            "edge",
            "makespan_h",
            "h",
            None,
            ("makespan_h", "total_comp_h"),
            (
                Regime("tasks20", {"n_tasks": 20}, about="EdgeBatch-v0's size"),
                Regime("tasks50", {"n_tasks": 50}, about="the middle of the study's scaling"),
                Regime("tasks10", {"n_tasks": 10}, about="a small cluster load"),
                Regime("tasks5", {"n_tasks": 5}, exact=True, about="5 tasks"),
            ),
            20,
            ("tasks20", 5),
            _edge_instance,
            _edge_play,
            _edge_play,
            _edge_env,
            _edge_rules,
            EXACT_NAMES,
            _plain_bound,
        ),
    )
}
SCENARIO_NAMES = tuple(s.name for s in SCENARIOS)  # tests/test_evaluate_scenarios.py: one row per scenario


def benchmark(name: str) -> Benchmark:
    """The row of scenario ``name`` (ConfigError naming the scenarios otherwise)."""
    check_choice("--scenario", name, SCENARIO_NAMES)
    return BENCHMARKS[name]


def no_bound_reason(b: Benchmark) -> str:
    """Why a scenario has no bound now (empty when it has one)."""
    if b.bound_hook() is not None:
        return ""
    return f"no bound: {b.bound_module.replace('.', '/').replace('gpu_sched_agents', 'agents')}.py does not exist yet"


__all__ = ["BENCHMARKS", "EXACT_NAMES", "SCENARIO_NAMES", "Benchmark", "Regime", "benchmark", "no_bound_reason"]
