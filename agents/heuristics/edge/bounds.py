"""A bound on an edge instance's makespan: CP-SAT's proved optimum, else a valid lower bound.

What is bounded: the simulated makespan without noise [h] (``simulate(plan, cluster).makespan_s / 3600``) of
every plan of the instance's tasks split at the planners' threshold (default: the smallest device memory), over
all device assignments and dispatch orders, i.e. of every registered planner and env policy. It also bounds
every plan of the unsplit tasks: running a split task's shards back to back on its device occupies the same
interval with no larger memory or GPU share, so splitting never raises the optimum. It does not bound a run
with execution noise (``--noise-sigma``), whose realised times differ from the profiles.

**The round ILPs of** :mod:`~gpu_sched_agents.heuristics.edge.ilp` **are not an exact solver of this
problem**: MemBatch's and the baseline's CP-SAT models optimise one round (tasks that can all be resident at
once) given the earlier rounds, so a round's ``OPTIMAL`` status proves that round's objective, never the
instance's makespan (a plan of several rounds may be beaten by a plan with other rounds). The exact model here
is the instance's own scheduling problem:

**Exact model** (OR-Tools CP-SAT; Laborie, Rogerie, Shaw & Vilím (2018), "IBM ILOG CP optimizer for scheduling",
Constraints 23(2), §3 for optional intervals and cumulative functions, the same modelling CP-SAT offers):
binary ``x_ij`` (task i on device j, where it fits alone), start ``s_i``, an optional interval of length
``t_ij`` per (i, j), per device a cumulative constraint on memory and one on GPU share, makespan
``C >= s_i + sum_j t_ij x_ij``; minimise ``C``. It is exact for the simulator: every plan's simulated timeline
is such a schedule (at every instant the tasks running on a device fit its memory and GPU share), and for any
such schedule, the plan that dispatches the tasks in order of their start times on the same devices makes the
simulator start each task no later (by induction over that order: the earlier tasks end no later, so the ones
still running at the schedule's start of task i are a subset of the schedule's, and the simulator takes the
first instant at or after the previous start where the task fits), so the two optima are equal. Redundant
rows help CP-SAT prove it: identical devices are used in order of their lowest task index (any schedule can be
relabelled so), and per device the energetic rows of LB1 below. Times are
scaled to an integer grid on which every run time is an integer (a run time is rational with a small
denominator: minutes with two decimals times shard fractions), memory and GPU share likewise; when no such
grid exists (a user's profile table with arbitrary floats) times are rounded down to 1 ms and demands down
(capacities up), a relaxation whose optimum is only a lower bound. ``kind = "optimum"`` only when CP-SAT proves
optimality on an exact grid within the limit; its value is exact up to float rounding (below 1e-6 s).

**Lower bound** (``kind = "lower_bound"``; also the value when the exact solve is off, ``method="relaxation"``
or ``time_limit_s=0``): the largest of CP-SAT's proved objective bound (when it ran) and LB, where LB is the
larger of

* ``LB0 = max_i min_j t_ij``: each task runs on some device it fits, for at least its fastest time there;
  (total fastest work / number of devices is no bound here: a device co-runs tasks, an Orin ten light ones at
  once, so work counts as resource-time, LB1's identity rows);
* ``LB1`` = the optimum of the LP relaxation below (solved with HiGHS, read back through its dual so that the
  number is valid whatever the LP solver's tolerances). Energetic reasoning (Baptiste, Le Pape & Nuijten
  (2001), "Constraint-based scheduling", Kluwer, §3.3) with dual-feasible functions (Fekete & Schepers (2001),
  "New classes of fast lower bounds for bin packing problems", Math. Programming 91(1), Theorem 2, the
  functions ``u^(k)``): on device j at any instant the running tasks' memory fractions ``m_ij / M_j`` sum to at
  most 1, so for a dual-feasible ``f`` their ``f`` values do too; integrated over ``[0, C]``,
  ``sum_{i on j} t_ij f(m_ij / M_j) <= C``, the same for GPU share, for ``f`` the identity (area), ``u^(1)``
  (1 above a half: tasks over half the device run one at a time, the memory refinement) and ``u^(2)``; also
  ``t_ij <= C`` for the device a task runs on. Relaxing the assignment ``x_ij`` in {0, 1} to ``[0, 1]``
  (``sum_j x_ij = 1``, ``x_ij = 0`` where task i does not fit j) gives an LP whose optimum is at most every
  plan's makespan. For nonnegative multipliers ``y_k`` of its rows ``sum_ij a_kij x_ij <= C``,
  ``C >= sum_i min_j (sum_k y_k a_kij) / sum_k y_k`` for every feasible x (weak duality), so evaluating that
  expression at HiGHS's duals is a valid bound however inexact the duals; it is rounded down by 1e-12
  relative for float rounding. Fractions of a device's capacity are taken of the capacity times (1 + 1e-6)
  (the simulator admits a task when the sum is within 1e-9 of the capacity).

Measured (``bound(strong.instance(seed, n), 10.0)``, selection seeds 10 000 .., one CP-SAT worker, a shared
2-core machine): the exact solve proves the optimum on 10/10 instances of 5 and of 10 tasks (at most 0.1 s wall),
9/10 of 20 tasks (at most 1.6 s), 7/10 of 30 tasks (at most 7 s) and 1/5 of 50 tasks; beyond, the bound is the
LP's or CP-SAT's lower bound (on average 9 % below ``local_search``'s makespan at 50 tasks).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from gpu_sched_agents.heuristics.edge.energetic import DFF_K, dff, energetic_lp
from gpu_sched_agents.heuristics.edge.rules import BestRule, plan_makespan
from gpu_sched_env.core.bounds import Bound, check_request
from gpu_sched_env.core.errors import check_number
from gpu_sched_env.edge.model import Cluster, EdgeProblem, Task, check_placeable, task_arrays
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.sim import simulate
from gpu_sched_env.edge.workload import split_tasks, split_threshold

METHODS = ("auto", "relaxation")
MAX_DENOMINATOR = 10_000  # largest denominator tried per value when looking for an exact integer grid
MAX_GRID = 10**7  # the grid's resolution at most (units per second, per GB, per % of GPU)
GRID_TOL = 1e-12  # relative: a value within this of a grid point is that point (float rounding of the profiles)
MAX_COEF = 2**60  # CP-SAT's integers are int64: a cut whose terms could sum beyond this is left out


def _work(problem: EdgeProblem, split_threshold_gb: float | None) -> list[Task]:
    thr = split_threshold(problem.cluster, True, split_threshold_gb)
    work = split_tasks(problem.tasks, thr) if thr is not None else list(problem.tasks)
    check_placeable(work, problem.cluster)
    return work


def relaxation_bound(problem: EdgeProblem, split_threshold_gb: float | None = None) -> float:
    """max(LB0, LB1) of the module docstring [s]."""
    work = _work(problem, split_threshold_gb)
    t, g, m, fits = task_arrays(work, problem.cluster)
    if len(work) == 0:
        return 0.0
    lb0 = float(max(t[i][fits[i]].min() for i in range(len(work))))
    return max(lb0, energetic_lp(t, g, m, fits, problem.cluster).bound_s)


# ---- exact CP-SAT model -------------------------------------------------------------------------------------
def _grid(values: np.ndarray) -> int | None:
    """Units per 1 in which every value is an integer (within float rounding), or None if none is small."""
    unit = 1
    for v in np.unique(np.asarray(values, dtype=float)):
        fr = Fraction(float(v)).limit_denominator(MAX_DENOMINATOR)
        if abs(float(fr) - v) > GRID_TOL * max(1.0, abs(v)):
            return None
        unit = math.lcm(unit, fr.denominator)
        if unit > MAX_GRID:
            return None
    return unit


def _scaled(values: np.ndarray, unit: int, exact: bool, up: bool = False) -> np.ndarray:
    x = np.asarray(values, dtype=float) * unit
    if exact:
        return np.rint(x).astype(np.int64)
    return (np.ceil(x - 1e-9) if up else np.floor(x + 1e-9)).astype(np.int64)


def exact_plan(
    problem: EdgeProblem, time_limit_s: float = 10.0, split_threshold_gb: float | None = None
) -> tuple[Plan | None, str, float, float, bool]:
    """Solve the exact model: (best plan found or None, CP-SAT status, its makespan [s], proved bound [s], exact).

    ``exact`` says whether the integer grid is the instance's own (then an ``OPTIMAL`` status proves the
    instance's optimum); else the model is the rounded-down relaxation and its bound is only a lower bound.
    The limit is CP-SAT's deterministic time (reproducible), with a wall cap of twice the limit plus 1 s.
    """
    check_number("time_limit_s", time_limit_s, lo=0.0, lo_open=True)
    work = _work(problem, split_threshold_gb)
    cl = problem.cluster
    t, g, m, fits = task_arrays(work, cl)
    n, d = t.shape
    caps_m = np.array([dv.mem_gb for dv in cl.devices])
    caps_g = np.array([dv.gpu_cap for dv in cl.devices])
    tu = _grid(t[fits])
    mu, gu = _grid(np.concatenate([m[fits], caps_m])), _grid(np.concatenate([g[fits], caps_g]))
    exact = None not in (tu, mu, gu)
    tu, mu, gu = (tu or 1000, mu or 1000, gu or 1000) if not exact else (tu, mu, gu)
    ti = _scaled(t, tu, exact)
    mi, gi = _scaled(m, mu, exact), _scaled(g, gu, exact)
    cmi, cgi = _scaled(caps_m, mu, exact, up=True), _scaled(caps_g, gu, exact, up=True)
    # a heuristic plan: the horizon (no optimum is later) and the hint
    warm = BestRule(split=False).plan(EdgeProblem(tuple(work), cl))  # ``work`` is split already
    horizon = int(math.ceil(plan_makespan(warm, cl) * tu)) + 1  # no optimum ends later than this plan
    mdl = cp_model.CpModel()
    s = [mdl.NewIntVar(0, horizon, f"s{i}") for i in range(n)]
    x = {(i, j): mdl.NewBoolVar(f"x{i}_{j}") for i in range(n) for j in range(d) if fits[i, j]}
    cmax = mdl.NewIntVar(0, horizon, "C")
    iv: list[list[tuple]] = [[] for _ in range(d)]
    for (i, j), v in x.items():
        e = mdl.NewIntVar(0, 2 * horizon, f"e{i}_{j}")
        iv[j].append((mdl.NewOptionalIntervalVar(s[i], int(ti[i, j]), e, v, f"I{i}_{j}"), i))
    for i in range(n):
        mdl.AddExactlyOne(x[i, j] for j in range(d) if fits[i, j])
        mdl.Add(cmax >= s[i] + sum(int(ti[i, j]) * x[i, j] for j in range(d) if fits[i, j]))
    for j in range(d):
        if iv[j]:
            ivs = [a for a, _ in iv[j]]
            mdl.AddCumulative(ivs, [int(mi[i, j]) for _, i in iv[j]], int(cmi[j]))
            mdl.AddCumulative(ivs, [int(gi[i, j]) for _, i in iv[j]], int(cgi[j]))
    _energetic_cuts(mdl, x, cmax, ti, [(mi, cmi), (gi, cgi)], d, horizon)
    _break_symmetry(mdl, x, cl, fits, n)
    mdl.Minimize(cmax)
    if exact:  # the warm plan is a feasible schedule of the exact model: its starts and devices as the hint
        starts = _starts(warm, cl)
        for i in range(n):
            mdl.AddHint(s[i], int(round(starts[i] * tu)))
            for j in range(d):
                if fits[i, j]:
                    mdl.AddHint(x[i, j], int(warm.device[i] == j))
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_workers = 1
    prm.random_seed = 0
    prm.max_deterministic_time = float(time_limit_s)
    prm.max_time_in_seconds = 2.0 * float(time_limit_s) + 1.0
    status = solver.Solve(mdl)
    name = solver.StatusName(status)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, name, math.nan, float(solver.BestObjectiveBound()) / tu, exact
    dev = tuple(next(j for j in range(d) if fits[i, j] and solver.Value(x[i, j])) for i in range(n))
    order = tuple(sorted(range(n), key=lambda i: (solver.Value(s[i]), i)))
    plan = Plan("cp-sat", tuple(work), dev, order, (0,) * n, (0,) * n)
    return plan, name, solver.ObjectiveValue() / tu, solver.BestObjectiveBound() / tu, exact


def _energetic_cuts(
    mdl: cp_model.CpModel, x: dict, cmax: Any, ti: np.ndarray, resources: list, d: int, horizon: int
) -> None:
    """Redundant rows: per device and resource, ``sum_i t_ij * 6 f(d_ij / cap_j) x_ij <= 6 C`` (integers).

    ``f`` is ``u^(1)`` or ``u^(2)`` of Fekete & Schepers (2001), whose values are multiples of 1/6 here; the
    identity is ``sum_i t_ij d_ij x_ij <= cap_j C``. Valid for every schedule of the model (module docstring),
    they give CP-SAT's LP relaxation the energetic LP's rows.
    """
    for j in range(d):
        on_j = [i for (i, jj) in x if jj == j]
        for dem, cap in resources:
            c = int(cap[j])
            if not on_j or c <= 0:
                continue
            if sum(int(ti[i, j]) * int(dem[i, j]) for i in on_j) < MAX_COEF and c * horizon < MAX_COEF:
                mdl.Add(sum(int(ti[i, j]) * int(dem[i, j]) * x[i, j] for i in on_j) <= c * cmax)
            for k in DFF_K:
                w = {i: 6 * dff(Fraction(int(dem[i, j]), c), k) for i in on_j}
                terms = [int(ti[i, j]) * int(w[i]) * x[i, j] for i in on_j if w[i] > 0]
                if terms and all(w[i].denominator == 1 for i in on_j):
                    mdl.Add(sum(terms) <= 6 * cmax)


def _break_symmetry(mdl: cp_model.CpModel, x: dict, cluster: Cluster, fits: np.ndarray, n: int) -> None:
    """Identical devices (same type and capacities) are used in order of their lowest task index.

    Any schedule can be relabelled that way, so the optimum is unchanged: task i may go to the k-th device of
    a group only if a task before i is on the (k-1)-th.
    """
    groups: dict[tuple, list[int]] = {}
    for j, dv in enumerate(cluster.devices):
        groups.setdefault((dv.dtype, dv.mem_gb, dv.gpu_cap), []).append(j)
    for js in groups.values():
        if len(js) < 2 or not all(np.array_equal(fits[:, js[0]], fits[:, j]) for j in js):
            continue
        for prev, j in zip(js, js[1:], strict=False):
            for i in range(n):
                if (i, j) in x:
                    before = [x[i2, prev] for i2 in range(i) if (i2, prev) in x]
                    if before:
                        mdl.Add(x[i, j] <= sum(before))
                    else:
                        mdl.Add(x[i, j] == 0)


def _starts(plan: Plan, cluster: Cluster) -> np.ndarray:
    """Start time of each of the plan's tasks in the simulator [s]."""
    return simulate(plan, cluster).schedule.start_s.to_numpy()


def bound(
    problem: EdgeProblem,
    time_limit_s: float = 10.0,
    method: str = "auto",
    split_threshold_gb: float | None = None,
) -> Bound:
    """The instance's bound in hours (module docstring): CP-SAT's proved optimum, else a valid lower bound.

    Args:
        problem: the instance (tasks in arrival order, unsplit, and the cluster), as the planners take it.
        time_limit_s: CP-SAT's limit (deterministic time, ~ seconds); 0 turns the exact solve off.
        method: ``"auto"`` (the exact solve within the limit, then the relaxation) or ``"relaxation"`` (LB
            only, kind ``"lower_bound"``).
        split_threshold_gb: the planners' splitting threshold (None: the smallest device memory).
    """
    check_request(time_limit_s, method, METHODS)
    t0 = time.perf_counter()
    lb = relaxation_bound(problem, split_threshold_gb)
    if method == "relaxation" or time_limit_s == 0:
        return Bound(lb / 3600.0, "lower_bound", time.perf_counter() - t0, "energetic LP + LB0")
    plan, status, value, proved, exact = exact_plan(problem, time_limit_s, split_threshold_gb)
    if exact and status == "OPTIMAL" and plan is not None:
        if lb > value + 1e-6:  # both are proved: one of the two models is wrong, and neither number is safe
            raise RuntimeError(f"edge bound: relaxation {lb:.6f} s above the proved optimum {value:.6f} s")
        return Bound(value / 3600.0, "optimum", time.perf_counter() - t0, "cp-sat cumulative")
    # CP-SAT's objective bound is proved for a valid model, whether or not the search finished
    cp_lb = proved if status in ("OPTIMAL", "FEASIBLE", "UNKNOWN") and math.isfinite(proved) else 0.0
    return Bound(
        max(lb, cp_lb) / 3600.0,
        "lower_bound",
        time.perf_counter() - t0,
        f"max(energetic LP + LB0, cp-sat bound; {status})",
    )


__all__ = ["METHODS", "bound", "exact_plan", "relaxation_bound"]
