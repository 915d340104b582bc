"""Exact weighted tardiness for small HGSP instances with CP-SAT (OR-Tools).

CP-SAT needs integers, so times are scaled by ``scale`` and rounded *towards the relaxation*:
arrivals and run times down, deadlines up, weights down (to a grid of ``1/weight_scale``).
Any true schedule maps onto a feasible schedule of this relaxed model with no larger
objective, so the solver's bound divided by the scales is a valid **lower bound** on the
true optimum. The solver's best schedule (GPU per task and order per GPU) is re-timed with
the exact data (each task starts at max(arrival, previous end)) to give a feasible **upper
bound**. ``proven_optimal`` is True only when CP-SAT reports OPTIMAL *and* the re-timed
upper bound equals the lower bound to within ``1e-6`` relative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpu_sched_env.hgsp.model import Cluster, TaskSet
from gpu_sched_env.hgsp.sim import Problem


@dataclass(frozen=True)
class ExactResult:
    """CP-SAT outcome on one instance."""

    status: str  # CP-SAT status name: OPTIMAL, FEASIBLE, INFEASIBLE, UNKNOWN, ...
    lower_bound: float  # valid lower bound on the true minimum WT
    upper_bound: float  # WT of the re-timed best schedule (inf if none)
    proven_optimal: bool
    wall_s: float
    gpu: np.ndarray | None  # GPU per task of the best schedule

    @property
    def gap_pct(self) -> float:
        """Relative gap between the bounds [%] (0 when both are 0)."""
        if not math.isfinite(self.upper_bound):
            return float("inf")
        if self.upper_bound <= 1e-12:
            return 0.0
        return 100.0 * (self.upper_bound - self.lower_bound) / self.upper_bound


def solve_exact(
    tasks: TaskSet,
    cluster: Cluster,
    time_limit_s: float = 10.0,
    scale: int = 1000,
    weight_scale: int = 100,
    workers: int = 2,
    seed: int = 0,
) -> ExactResult:
    """Minimise total weighted tardiness with CP-SAT; see the module docstring for bounds."""
    from ortools.sat.python import cp_model

    pr = Problem(tasks, cluster)
    idx = pr.arrival_order.tolist()
    a = {i: math.floor(tasks.arrival[i] * scale) for i in idx}
    d = {i: math.ceil(tasks.deadline[i] * scale) for i in idx}
    w = {i: math.floor(tasks.weight[i] * weight_scale) for i in idx}
    p = {(i, j): math.floor(pr.p[i, j] * scale) for i in idx for j in pr.fit_rows[i]}
    horizon = max(a.values()) + sum(max(p[i, j] for j in pr.fit_rows[i]) for i in idx) + 1
    model = cp_model.CpModel()
    start, x, per_gpu = {}, {}, {j: [] for j in range(pr.m)}
    obj = []
    for i in idx:
        start[i] = model.new_int_var(a[i], horizon, f"s{i}")
        end = model.new_int_var(0, horizon, f"e{i}")
        for j in pr.fit_rows[i]:
            x[i, j] = model.new_bool_var(f"x{i}_{j}")
            iv = model.new_optional_fixed_size_interval_var(start[i], p[i, j], x[i, j], f"iv{i}_{j}")
            per_gpu[j].append(iv)
            model.add(end == start[i] + p[i, j]).only_enforce_if(x[i, j])
        model.add_exactly_one(x[i, j] for j in pr.fit_rows[i])
        tard = model.new_int_var(0, horizon, f"t{i}")
        model.add(tard >= end - d[i])
        obj.append(w[i] * tard)
    for ivs in per_gpu.values():
        model.add_no_overlap(ivs)
    model.minimize(sum(obj))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    code = solver.solve(model)
    status = solver.status_name(code)
    lb = (
        max(0.0, solver.best_objective_bound) / (scale * weight_scale)
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        else 0.0
    )
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ExactResult(status, lb, float("inf"), False, solver.wall_time, None)
    # re-time the solver's assignment and per-GPU order with the exact data
    gpu = np.full(pr.n, -1)
    for (i, j), var in x.items():
        if solver.value(var):
            gpu[i] = j
    s_int = {i: solver.value(start[i]) for i in idx}
    end = np.full(pr.n, np.nan)
    for j in range(pr.m):
        on = sorted((i for i in idx if gpu[i] == j), key=lambda i: (s_int[i], i))
        free = -np.inf
        for i in on:
            s = max(tasks.arrival[i], free)
            free = end[i] = s + pr.p[i, j]
    ok = gpu >= 0
    ub = float(np.sum(tasks.weight[ok] * np.maximum(0.0, end[ok] - tasks.deadline[ok])))
    proven = code == cp_model.OPTIMAL and ub - lb <= 1e-6 * max(1.0, ub)
    return ExactResult(status, lb, ub, proven, solver.wall_time, gpu)
