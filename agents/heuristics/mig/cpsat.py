"""Exact scheduling with OR-Tools CP-SAT, one model per poll, inside the online loop.

Model of one poll at time ``t`` (all remaining units of all known jobs):

* unit ``u = (j, k)``: integer start ``s_u >= max(t, r_j) + (k − first remaining k)``;
  one Boolean per instance that can hold ``mem[k]``, exactly one true, each gating an
  optional size-1 interval; ``NoOverlap`` per instance;
* ``s_{j,k+1} >= s_{j,k} + 1`` (a job runs one minute at a time, in order); a job that is
  not stoppable runs contiguously (``=``) on one instance holding its peak, and, once
  started, continues where it runs;
* makespan ``C >= s_u + 1``; redundant bounds ``C >= t + ceil(U_c / M_c)`` for every memory
  level ``c`` (``U_c`` units needing more than ``c`` MB, ``M_c`` instances with more);
* minimise ``C``. The previous plan plus a greedy append of new jobs is the hint, so a
  feasible answer always exists; ``gap = (C − bound) / C``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ortools.sat.python import cp_model

from gpu_sched_env.core.errors import check_number
from gpu_sched_env.mig.model import (
    DEFAULT_CAPACITIES,
    Job,
    check_capacities,
    check_poll,
    metrics,
    release_time,
    schedule_frame,
)
from gpu_sched_env.mig.sim import RunResult

Plan = dict[tuple[int, int], tuple[int, int]]  # (job, k) -> (instance, start [min])
STATUS = {
    cp_model.OPTIMAL: "optimal",
    cp_model.FEASIBLE: "feasible",
    cp_model.UNKNOWN: "unknown",
    cp_model.INFEASIBLE: "infeasible",
    cp_model.MODEL_INVALID: "invalid",
}


@dataclass
class SolveResult:
    """One CP-SAT solve: status, plan of the remaining units, objective, bound, gap, time."""

    status: str
    plan: Plan
    objective: int
    bound: float
    gap: float
    wall_time: float  # [s]


def greedy_append(
    plan: Plan, jobs: Sequence[Job], caps: Sequence[int], t: int, release: Mapping[int, int] | None = None
) -> Plan:
    """Append each job whole and contiguous to the smallest fitting instance, earliest free."""
    plan = dict(plan)
    free = [t] * len(caps)
    for (_, _), (i, s) in plan.items():
        free[i] = max(free[i], s + 1)
    for j in jobs:
        fits = [i for i, c in enumerate(caps) if c >= j.peak]
        i = min(fits, key=lambda i: (caps[i], free[i], i))
        start = max(t, free[i], (release or {}).get(j.id, t))
        for k in range(j.length):
            plan[(j.id, k)] = (i, start + k)
        free[i] = start + j.length
    return plan


def solve_poll(
    jobs: Sequence[Job],
    caps: Sequence[int],
    t: int,
    release: Mapping[int, int],
    executed: Plan,
    hint: Plan,
    time_limit: float = 10.0,
    workers: int = 1,
    seed: int = 0,
) -> SolveResult:
    """Optimal plan from ``t`` for the units of ``jobs`` not in ``executed`` (see module doc).

    Long by design: the CP-SAT model (start and placement variables, intervals, redundant memory
    bounds, hint) and the read-back of its solution share ``starts``/``lits``; the model is built in
    one place so its constraints read together against the module docstring.
    """
    caps = check_capacities(caps)
    m = cp_model.CpModel()
    horizon = max([s + 1 for (_, s) in hint.values()] + [t + 1])
    starts: dict[tuple[int, int], cp_model.IntVar] = {}
    lits: dict[tuple[int, int], dict[int, cp_model.IntVar]] = {}
    per_inst: list[list] = [[] for _ in caps]
    need: list[int] = []
    cmax = m.new_int_var(t, horizon, "C")
    for j in jobs:
        done = sorted(k for (jj, k) in executed if jj == j.id)
        k0 = len(done)
        if k0 == j.length:
            continue
        lo = max(t, release[j.id])
        prev = None
        for k in range(k0, j.length):
            if j.stoppable:
                elig = [i for i, c in enumerate(caps) if c >= j.mem[k]]
            else:
                elig = [i for i, c in enumerate(caps) if c >= j.peak]
                if k0 > 0:  # running, not stoppable: continue where it runs
                    elig = [executed[(j.id, k0 - 1)][0]]
            s = m.new_int_var(lo + k - k0, horizon - (j.length - k), f"s{j.id}_{k}")
            starts[(j.id, k)] = s
            x = {i: m.new_bool_var(f"x{j.id}_{k}_{i}") for i in elig}
            lits[(j.id, k)] = x
            m.add_exactly_one(x.values())
            for i, lit in x.items():
                per_inst[i].append(m.new_optional_fixed_size_interval_var(s, 1, lit, f"iv{j.id}_{k}_{i}"))
            if prev is not None:
                if j.stoppable:
                    m.add(s >= prev + 1)
                else:
                    m.add(s == prev + 1)
                    for i in elig:
                        m.add(x[i] == lits[(j.id, k - 1)][i])
            elif not j.stoppable and k0 > 0:
                m.add(s == executed[(j.id, k0 - 1)][1] + 1)
            prev = s
            need.append(j.mem[k] if j.stoppable else j.peak)
        m.add(cmax >= prev + 1)
    for ivs in per_inst:
        if ivs:
            m.add_no_overlap(ivs)
    if not starts:
        return SolveResult("optimal", {}, t, float(t), 0.0, 0.0)
    for c in [-1, *sorted(set(caps))]:  # redundant memory-level bounds
        u = sum(1 for x in need if x > c)
        mc = sum(1 for cap in caps if cap > c)
        if u and mc:
            m.add(cmax >= t + math.ceil(u / mc))
    m.minimize(cmax)
    for key, s in starts.items():
        if key in hint:
            i, st = hint[key]
            m.add_hint(s, st)
            for ii, lit in lits[key].items():
                m.add_hint(lit, ii == i)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    t0 = time.perf_counter()
    code = solver.solve(m)
    wall = time.perf_counter() - t0
    status = STATUS.get(code, str(code))
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        plan = {
            key: (next(i for i, lit in lits[key].items() if solver.boolean_value(lit)), solver.value(s))
            for key, s in starts.items()
        }
        obj = int(solver.objective_value)
        bound = float(solver.best_objective_bound)
    else:  # nothing found in time: keep the hint (feasible by construction)
        plan = {key: hint[key] for key in starts}
        obj = max(s + 1 for (_, s) in plan.values())
        bound = float(t)
    gap = (obj - bound) / obj if obj > 0 else 0.0
    return SolveResult(status, plan, obj, bound, max(0.0, gap), wall)


def run_exact(
    jobs: Sequence[Job],
    capacities: Sequence[int] = DEFAULT_CAPACITIES,
    poll_interval: int = 1,
    time_limit: float = 10.0,
    workers: int = 1,
    seed: int = 0,
) -> RunResult:
    """The online loop with a CP-SAT re-plan at every poll that takes new jobs.

    ``time_limit`` [s] is the budget for the whole data set. A poll that may still be
    followed by arrivals gets half of what is left; the poll after which the producer has
    closed the stream (the data set's last job is taken) gets all that is left. The planner
    never sees a job, nor how many will come, before it arrives.
    """
    caps = check_capacities(capacities)
    poll = check_poll(poll_interval)
    check_number("time_limit", time_limit, lo=0.0, lo_open=True)
    biggest = max(caps)
    jobs = sorted(jobs, key=lambda j: (j.arrival, j.id))
    skipped = [j.id for j in jobs if j.peak > biggest]
    todo = [j for j in jobs if j.peak <= biggest]
    rel = {j.id: release_time(j.arrival, poll) for j in todo}
    polls = sorted(set(rel.values()))
    plan: Plan = {}
    spent = 0.0
    statuses = []
    last = None
    for n, t in enumerate(polls):
        known = [j for j in todo if rel[j.id] <= t]
        new = [j for j in known if rel[j.id] == t]
        executed = {key: v for key, v in plan.items() if v[1] < t}
        hint = greedy_append({k: v for k, v in plan.items() if v[1] >= t}, new, caps, t)
        final = n == len(polls) - 1  # the stream is closed: every job has been taken
        left = time_limit - spent
        budget = max(0.05, left if final else left / 2)
        res = solve_poll(known, caps, t, rel, executed, hint, budget, workers, seed)
        spent += res.wall_time
        statuses.append(res.status)
        plan = {**executed, **res.plan}
        last = res
    sched = schedule_frame([(j, k, i, s) for (j, k), (i, s) in plan.items()])
    out = RunResult("cpsat", sched, metrics(jobs, sched, skipped), spent, len(polls), skipped)
    if last is not None:
        out.status, out.gap, out.bound = last.status, last.gap, last.bound
    out.poll_statuses = statuses  # type: ignore[attr-defined]
    return out
