"""The classic strong rules of the edge cluster, two combinations of ours, the MCT env policy, and ``tune()``.

Every rule is a **planner** (:class:`~gpu_sched_env.core.policy.Planner`, ``plan(problem, rng) -> Plan``),
registered in :data:`gpu_sched_env.edge.policies.PLANNERS` beside MemBatch, the baseline ILP and FCFS-LLF. All
of them split tasks above the threshold (the shared task model, default: the smallest device memory) and place a
(sub-)task only on a device it fits alone; co-running on a device follows the simulator's rule (memory and GPU
share beside the tasks still running, strict FIFO in the plan's dispatch order). A rule's completion time of
task i on device j is what :func:`~gpu_sched_env.edge.sim.simulate` gives i when it is appended to j's queue
now (:class:`~gpu_sched_agents.heuristics.edge.rules.Line` replays the simulator's timeline), so a plan's
dispatch order is the order the rule assigned the tasks in, and its planned makespan is the simulated one
without noise. The classes live in :mod:`~gpu_sched_agents.heuristics.edge.rules` and
:mod:`~gpu_sched_agents.heuristics.edge.local_search`; this module registers them.

Rules (``name``: paper):

* ``heft``: Topcuoglu, Hariri & Wu (2002), "Performance-effective and low-complexity task scheduling for
  heterogeneous computing", IEEE TPDS 13(3), §4.1. For independent tasks the upward rank is the task's mean
  cost over the devices; tasks in decreasing rank, each on its earliest-finish device (no insertion: a device
  runs its queue FIFO). Knob ``rank`` (Zhao & Sakellariou (2003), "An experimental investigation into the rank
  function of the heterogeneous earliest finish time scheduling algorithm", Euro-Par, LNCS 2790, §3): ``mean``
  (HEFT's), ``median``, ``best``, ``worst``. Default ``rank = "mean"`` is tune()'s best (all four tie there:
  with the default profiles every workload's device times stand in the same ratios, so they order alike).
* ``min_min`` / ``max_min``: Ibarra & Kim (1977), "Heuristic algorithms for scheduling independent tasks on
  nonidentical processors", JACM 24(2); Braun et al. (2001), "A comparison of eleven static heuristics for
  mapping a class of independent tasks onto heterogeneous distributed computing systems", JPDC 61(6), §2.4 and
  §2.5: repeatedly take the unplaced task whose minimum completion time is smallest (min-min) or largest
  (max-min) and place it on that device.
* ``sufferage``: Maheswaran, Ali, Siegel, Hensgen & Freund (1999), "Dynamic mapping of a class of independent
  tasks onto heterogeneous computing systems", JPDC 59(2), §3 (batch mode): in each pass every unplaced task
  bids for its best device with its sufferage (second-best minus best completion time); each device takes its
  highest bidder; the others bid again in the next pass.
* ``mct``: minimum completion time in arrival order (Braun et al. 2001, §2.3), HEFT's device selection without
  its ordering; also the env policy ``POLICIES["mct"]``. It plans on the float32 numbers the ``EdgeBatch-v0``
  observation carries, so the planner and the env agent make the same choices (tested).
* ``lp_round`` (ours): Lenstra, Shmoys & Tardos (1990), "Approximation algorithms for scheduling unrelated
  parallel machines", Math. Programming 46, §2: each task on the device holding its largest share in the
  optimum of the energetic LP of :mod:`~gpu_sched_agents.heuristics.edge.energetic`, which counts co-running
  by memory and GPU share. Knob ``order`` (``arrival``, ``longest``); default ``"arrival"`` is tune()'s best.
* ``best_rule`` (ours): runs the list rules above and keeps the plan with the smallest makespan, Braun et al.'s
  Duplex (§2.6) over all of them.
* ``local_search`` (ours): Fanjul-Peyro & Ruiz (2010), "Iterated greedy local search methods for unrelated
  parallel machine scheduling", EJOR 207(1), §3 (insertion and interchange neighbourhoods), plus a shift
  within a device's queue: descent from the ``start`` rule's plan, taking the first move that lowers the
  devices' finish times read from the largest down. Default ``start = "lp_round"``,
  ``neighbourhood = "move_swap_shift"`` are tune()'s best.

Why only ``mct`` is an env policy: ``EdgeBatch-v0`` places tasks in a fixed order (batches, arrival) and a device
runs them FIFO in that order, so the env's actions express arrival-order dispatch only. HEFT, min-min, max-min,
sufferage and the local search choose the order too, which the env cannot express; they stay planners.

:func:`tune` plays every knob candidate on the selection instances (:func:`instance`); :func:`compare` scores
every registered planner and the bound on them.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.edge.bounds import bound
from gpu_sched_agents.heuristics.edge.local_search import NEIGHBOURHOODS, LocalSearch
from gpu_sched_agents.heuristics.edge.rules import (
    HEFT,
    LIST_RULES,
    LP_ORDERS,
    MCT,
    RANKS,
    BestRule,
    Board,
    EdgePlanner,
    Line,
    LPRound,
    MaxMin,
    MinMin,
    Sufferage,
    mct_pick,
    plan_makespan,
)
from gpu_sched_agents.heuristics.tuning import selection_seeds
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.core.rng import stream
from gpu_sched_env.core.stats import mean_ci
from gpu_sched_env.edge.env import EdgeDecision
from gpu_sched_env.edge.model import Cluster, EdgeProblem, jetson_cluster
from gpu_sched_env.edge.policies import PLANNERS as PLANNER_REGISTRY
from gpu_sched_env.edge.policies import POLICIES as POLICY_REGISTRY
from gpu_sched_env.edge.profiles import default_profiles
from gpu_sched_env.edge.sim import simulate
from gpu_sched_env.edge.workload import random_workloads, tasks_from_workloads

TUNE_SIZES = (10, 20, 50)  # tasks per instance: the protocol's regimes above 5 tasks (EdgeBatch-v0: 20)
TASK_STREAM = "tasks"  # instance(seed, n) draws its workloads from stream(seed, TASK_STREAM), as the study does


# ---- MCT on the env: the observation's float32 numbers, one task at a time ---------------------------------
@dataclass(frozen=True)
class EdgeTaskDecision(EdgeDecision):
    """:class:`EdgeDecision` plus the current task's per-device blocks of the observation.

    Extra read-only arrays (float32 values, widened): ``time_h`` [h], ``gpu_frac`` and ``mem_frac`` (0 where the
    task does not fit).
    """

    time_h: np.ndarray
    gpu_frac: np.ndarray
    mem_frac: np.ndarray

    @classmethod
    def from_obs(cls, obs: np.ndarray, slices: Mapping[str, slice]) -> EdgeTaskDecision:
        """The decision in one flat observation (``slices`` from :func:`gpu_sched_env.edge.env.obs_slices`)."""
        base = EdgeDecision.from_obs(obs, slices)

        def block(name: str) -> np.ndarray:
            v = np.asarray(obs[slices[name]], dtype=np.float32).astype(float)
            v.flags.writeable = False
            return v

        return cls(base.fits, base.util, base.load_h, base.local, block("time_h"), block("gpu_frac"), block("mem_frac"))


class MCTPolicy:
    """MCT on ``EdgeBatch-v0``, one task at a time: the :class:`MCT` planner's choice from the observation.

    It keeps the timelines of its own placements in the observation's units; an episode starts at a decision
    where nothing is committed yet (``util`` all 0). Before each choice it checks the observed committed load
    (``load_h``, which does not depend on how tasks co-run) against its own record, so it refuses to go on
    silently if the env placed a task elsewhere (a substituted action) or if the observations of several
    episodes are interleaved (one policy drives one env).
    """

    name = "mct"
    view_type = EdgeTaskDecision

    def __init__(self) -> None:
        self.board: Board | None = None
        self._load = np.zeros(0)

    def reset(self, cluster: Cluster | None, rng: np.random.Generator) -> None:
        """Start a run (deterministic: ``rng`` is not used; the timelines also restart at each episode's start)."""
        self.board = None

    def decide(self, d: EdgeDecision) -> int:
        if not isinstance(d, EdgeTaskDecision):
            raise TypeError("MCTPolicy.decide needs an EdgeTaskDecision (EdgeTaskDecision.from_obs(obs, slices))")
        n_dev = len(d.fits)
        if self.board is None or not np.any(d.util):
            z = np.zeros((0, n_dev))
            self.board = Board(z, z, z, z.astype(bool), [(1.0, 1.0)] * n_dev)
            self._load = np.zeros(n_dev)
        b = self.board
        if not np.allclose(self._load, d.load_h, rtol=1e-4, atol=1e-6):
            raise RuntimeError(
                f"MCTPolicy: its placements commit {self._load.tolist()} GPU-share-h per device but the env shows "
                f"{d.load_h.tolist()}; one policy drives one env, with legal actions only"
            )
        b.t = np.vstack([b.t, d.time_h])
        b.g = np.vstack([b.g, d.gpu_frac])
        b.m = np.vstack([b.m, d.mem_frac])
        b.fits = np.vstack([b.fits, d.fits])
        i = b.t.shape[0] - 1
        j = mct_pick(b, i)
        b.add(i, j)
        self._load[j] += d.gpu_frac[j] * d.time_h[j]
        return j


def _knob_defaults(cls: type) -> dict[str, Any]:
    """The constructor's keyword knobs and their defaults (the registry's record of them)."""
    sig = inspect.signature(cls.__init__)
    return {k: p.default for k, p in sig.parameters.items() if k != "self" and p.default is not p.empty}


# ---- registration -----------------------------------------------------------------------------------------
STRONG: dict[str, type[EdgePlanner]] = {**LIST_RULES, BestRule.name: BestRule, LocalSearch.name: LocalSearch}
EXTENSIONS = ("lp_round", "best_rule", "local_search")  # ours; the others are the literature's rules
TUNABLE: dict[str, dict[str, tuple[Any, ...]]] = {
    "heft": {"rank": RANKS},
    "lp_round": {"order": LP_ORDERS},
    # best_rule holds every list rule's plan; lp_round is the start whose neighbourhood differs most from it
    "local_search": {"start": ("best_rule", "lp_round"), "neighbourhood": NEIGHBOURHOODS},
}
# ``published`` in the registry marks the source study's own schedulers (its tables keep those); none of these
# is the study's, so every one registers with published=False
for _name, _cls in STRONG.items():
    PLANNER_REGISTRY.register(_name, _cls, published=False, knobs=_knob_defaults(_cls))
POLICY_REGISTRY.register(MCTPolicy.name, MCTPolicy, published=False)


# ---- selection instances and tuning -----------------------------------------------------------------------
def instance(seed: int, n_tasks: int = 20, include_head: bool = False) -> EdgeProblem:
    """The edge instance of ``seed``: ``n_tasks`` workloads from ``stream(seed, "tasks")``, default profiles.

    The same draw as ``python -m studies edge-experiment``'s workload of repetition ``seed`` (its first
    ``n_tasks``), on the default cluster (the head only schedules unless ``include_head``).
    """
    check_number("seed", seed, lo=0, integer=True)
    check_number("n_tasks", n_tasks, lo=1, integer=True)
    cluster = jetson_cluster(include_head=bool(include_head))
    names = random_workloads(n_tasks, stream(int(seed), TASK_STREAM))
    return EdgeProblem(tuple(tasks_from_workloads(names, default_profiles(), cluster)), cluster)


def _candidates(grid: dict[str, Any], rules: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """(rule, knobs) for each of ``rules``: the product of the grid's (or :data:`TUNABLE`'s) candidates."""
    for rule, knobs in grid.items():
        check_choice("rule", rule, TUNABLE, section="tune")
        if not isinstance(knobs, dict):
            raise ConfigError(f"tune.{rule} = {knobs!r}: give a dict knob -> list of candidates")
        for k, vals in knobs.items():
            check_choice("knob", k, TUNABLE[rule], section=f"tune.{rule}")
            if isinstance(vals, str) or not vals:
                raise ConfigError(f"tune.{rule}.{k} = {vals!r}: give a non-empty list of candidates")
    out: list[tuple[str, dict[str, Any]]] = []
    for rule in rules:
        space = {**TUNABLE.get(rule, {}), **grid.get(rule, {})}
        combos: list[dict[str, Any]] = [{}]
        for k, vals in space.items():
            combos = [{**c, k: v} for c in combos for v in vals]
        out += [(rule, c) for c in combos]
    return out


def selection_problems(n_seeds: int, seed0: int, sizes: Sequence[int]) -> list[tuple[int, int, EdgeProblem]]:
    """(seed, size, instance) for the selection seeds ``seed0 ..`` (ConfigError outside 10 000 .. 19 999)."""
    selection_seeds(n_seeds, seed0)
    if isinstance(sizes, str) or not sizes:
        raise ConfigError(f"sizes = {sizes!r}: give at least one instance size (tasks)")
    sizes = tuple(int(check_number("sizes", n, lo=1, integer=True)) for n in sizes)
    return [(s, n, instance(s, n)) for s in range(seed0, seed0 + n_seeds) for n in sizes]


def _summary(name: str, spans: np.ndarray, problems: list, sizes: Sequence[int]) -> dict[str, Any]:
    ci = mean_ci(spans)
    row: dict[str, Any] = {"rule": name, "makespan_h": ci.mean, "ci_lo": ci.lo, "ci_hi": ci.hi, "n": len(spans)}
    for n in sizes:
        row[f"mean_h_n{n}"] = float(np.mean([x for x, (_, m, _) in zip(spans, problems, strict=True) if m == n]))
    return row


def tune(
    n_seeds: int = 20,
    seed0: int = 10_000,
    sizes: Sequence[int] = TUNE_SIZES,
    rules: Sequence[str] | None = None,
    **grid: Any,
) -> pd.DataFrame:
    """Play every knob candidate of the strong rules on the selection instances; one row per (rule, knobs).

    Instances: :func:`instance` for seeds ``seed0 .. seed0 + n_seeds - 1`` (selection seeds 10 000 .. 19 999
    only, else ConfigError) at every size of ``sizes`` (default 10, 20 and 50 tasks, the default cluster).
    ``rules``: which rules of :data:`STRONG` to play (default all); ``grid``: ``rule={knob: [candidates]}``
    overrides :data:`TUNABLE`'s candidates of a tunable rule (``heft``, ``lp_round``, ``local_search``); a rule
    without knobs gets one row. Columns: ``rule``, ``knobs`` (``k=v`` joined by ``,``), one column per knob,
    ``makespan_h`` (mean over all instances of the noiseless simulated makespan [h]), ``ci_lo``/``ci_hi`` (its
    95 % t-interval), ``n`` (instances), ``mean_h_n<size>`` per size and ``best`` (the lowest mean of its
    rule; ties: the first candidate). The shipped defaults are the ``best`` rows: HEFT ``rank = "mean"``,
    LP rounding ``order = "arrival"``, local search ``start = "lp_round"``, ``neighbourhood = "move_swap_shift"``.
    """
    rules = tuple(STRONG) if rules is None else tuple(check_choice("rules", r, STRONG, section="tune") for r in rules)
    problems = selection_problems(n_seeds, seed0, sizes)
    sizes = tuple(dict.fromkeys(n for _, n, _ in problems))
    rows = []
    for rule, knobs in _candidates(grid, rules):
        planner = STRONG[rule](**knobs)
        spans = np.array([plan_makespan(planner.plan(p), p.cluster) / 3600.0 for _, _, p in problems])
        row = _summary(rule, spans, problems, sizes)
        row = {"rule": rule, "knobs": ",".join(f"{k}={v}" for k, v in knobs.items()), **knobs, **row}
        rows.append(row)
    df = pd.DataFrame(rows)
    first_min = df.groupby("rule", sort=False).makespan_h.idxmin()
    df["best"] = df.index.isin(first_min.to_numpy())
    return df


def compare(
    n_seeds: int = 20, seed0: int = 10_000, sizes: Sequence[int] = TUNE_SIZES, bound_limit_s: float = 1.0
) -> pd.DataFrame:
    """Every registered planner (default knobs) and the bound on the selection instances; one row each.

    Planners get ``stream(seed, "fcfs_llf")`` (FCFS-LLF's; the others are deterministic). The ``bound`` row is
    :func:`~gpu_sched_agents.heuristics.edge.bounds.bound` with ``time_limit_s = bound_limit_s``; its
    ``n_optimum`` counts the instances where it is a proved optimum. Columns as :func:`tune`'s, plus
    ``max_plan_s`` (the slowest plan [s]).
    """
    problems = selection_problems(n_seeds, seed0, sizes)
    sizes = tuple(dict.fromkeys(n for _, n, _ in problems))
    rows = []
    for name in PLANNER_REGISTRY.names():
        planner = PLANNER_REGISTRY.make(name)
        spans, secs = [], []
        for s, _, p in problems:
            t0 = time.perf_counter()
            plan = planner.plan(p, stream(s, "fcfs_llf"))
            secs.append(time.perf_counter() - t0)
            spans.append(simulate(plan, p.cluster).makespan_s / 3600.0)
        rows.append({**_summary(name, np.array(spans), problems, sizes), "max_plan_s": max(secs)})
    bounds = [bound(p, bound_limit_s) for _, _, p in problems]
    row = _summary("bound", np.array([b.value for b in bounds]), problems, sizes)
    row.update(n_optimum=sum(b.kind == "optimum" for b in bounds), max_plan_s=max(b.solver_s for b in bounds))
    rows.append(row)
    return pd.DataFrame(rows)


__all__ = [
    "EXTENSIONS",
    "HEFT",
    "LIST_RULES",
    "LPRound",
    "MCT",
    "STRONG",
    "TUNABLE",
    "BestRule",
    "Board",
    "EdgeTaskDecision",
    "LocalSearch",
    "Line",
    "MCTPolicy",
    "MaxMin",
    "MinMin",
    "Sufferage",
    "compare",
    "instance",
    "plan_makespan",
    "selection_problems",
    "tune",
]
