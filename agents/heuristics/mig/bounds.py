"""A bound on a MIG job set's makespan: the proved offline optimum where it is reached, else a lower bound.

``bound(jobs, capacities, poll_interval, time_limit_s)`` answers for the rules every registered policy
plays under ``run_policy(jobs, policy, capacities, poll_interval)``: one GPU split into the given
instances, job ``j`` released at its arrival's poll ``r_j`` (:func:`~gpu_sched_env.mig.model.release_time`),
one minute-unit per instance-minute on an instance that holds the unit's memory, a job's units in order,
one at a time. Its ``problem``:

* ``"pausing"`` (default): a stoppable job may pause at any minute boundary and resume on any instance
  that holds its next minute (free migration); a job that is not stoppable runs contiguously on one
  instance that holds its peak. These are the rules of :class:`~gpu_sched_env.mig.preempt.MinuteSim`
  (``best_fit_pausing``) and of the CP-SAT model; a whole-job placement (every other registered rule,
  ``MIG-v0``) is such a schedule that never pauses. So the value is at most the makespan of **every**
  registered policy: for the pausing ones it is their problem's optimum, for the whole-job ones a
  lower bound on theirs.
* ``"whole"``: every job runs whole and contiguously on one instance that holds its peak (the rules of
  :class:`~gpu_sched_env.mig.sim.PlacementSim` and ``MIG-v0``): the optimum for the whole-job rules,
  **not** a bound for the pausing ones (they may beat it).

Both are the *offline* problems (every release known in advance), whose optimum no online policy beats
(the online loops only add the restriction of not knowing later jobs); online CP-SAT and the rules may
end above it.

Method (``method="auto"``, what the protocol calls):

1. ``LB`` = :func:`gpu_sched_env.mig.bound.makespan_lower_bound` on the problem's jobs (for ``"whole"``
   every job is marked not stoppable, so the memory-level term counts a job's peak for all its units).
   **Proof sketch** (that module's docstring): every feasible schedule with makespan ``C`` has
   ``C >= r_j + L_j`` (one unit per minute); and for a memory level ``c`` and a release time ``tau``,
   the ``U_c(tau)`` units needing more than ``c`` MB of the jobs released at or after ``tau`` all run in
   ``[tau, C)`` on the ``M_c`` instances holding more than ``c`` MB, one per instance-minute, so
   ``C >= tau + ceil(U_c(tau) / M_c)``. Both hold for every schedule of either problem (whole-job
   schedules are pausing ones), hence ``LB <= OPT``.
2. An upper bound ``UB``: the smallest makespan of the registered rules that play the problem's rules
   (``"pausing"``: ``best_fit_pausing`` and the whole-job rules; ``"whole"``: the whole-job rules) on
   the instance, each a feasible schedule. ``UB == LB`` proves ``LB`` optimal (kind ``"optimum"``,
   method ``"lower bound met by <rule>"``); this settles the study's data sets without a solver.
3. Otherwise, with ``time_limit_s > 0``: tiny sets (at most :data:`BRUTE_MAX_JOBS` jobs and
   :data:`BRUTE_MAX_UNITS` units) by exhaustive search (:mod:`~gpu_sched_agents.heuristics.mig.bruteforce`,
   kind ``"optimum"``), larger ones by one offline CP-SAT solve of the problem
   (:func:`~gpu_sched_agents.heuristics.mig.cpsat.solve_poll` from the first release with every job,
   hinted with the best rule's schedule, ``workers`` search workers). Proved optimal, or its objective
   equal to the best lower bound: kind ``"optimum"``. Else kind ``"lower_bound"`` with value
   ``max(LB, ceil(CP-SAT's best bound))`` (CP-SAT's bound is a valid bound of the model, which is the problem).
4. ``time_limit_s = 0``: steps 1-2 only (``"lower_bound"`` = ``LB`` when no rule meets it).

``method="lower_bound"`` returns ``LB`` alone (the relaxation, no schedule, no solver); ``method="exact"``
skips step 2's shortcut and always asks the exact solver (the tests' check of the shortcut).

Measured reach (selection seeds, 1 worker, the shared 2-core machine; commands in docs/mig.md, "Strong
rules and the bound"): on the Part B preset ``best_fit_pausing`` meets ``LB`` on 20/20 seeds at 8, 50 and
100 jobs, so the pausing bound is an optimum there without the solver (0.01-0.2 s). Where no rule meets
``LB`` (the whole-job problem on a (2000, 2000, 1000) MB partition, seeds 10 000-10 004), CP-SAT within
10 s proved every such set optimal at 25 jobs (0.3 s) and 50 jobs (at most 1.5 s), and 1 of 3 at 100
jobs (the others return ``"lower_bound"``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from gpu_sched_agents.heuristics.mig.bruteforce import brute_force_makespan
from gpu_sched_agents.heuristics.mig.cpsat import Plan, solve_poll
from gpu_sched_env.core.bounds import Bound, check_request
from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.mig.bound import makespan_lower_bound
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES, Job, check_capacities, check_poll, release_time
from gpu_sched_env.mig.policies import POLICIES
from gpu_sched_env.mig.sim import RunResult, run_policy

PROBLEMS = ("pausing", "whole")
METHODS = ("auto", "lower_bound", "exact")
BRUTE_MAX_JOBS = 4  # brute force's states grow exponentially: keep it to a handful of short jobs
BRUTE_MAX_UNITS = 8


def _problem_jobs(jobs: Sequence[Job], problem: str) -> list[Job]:
    """The jobs as the problem treats them: for ``"whole"`` none may pause (so each runs whole on one instance)."""
    if problem == "pausing":
        return list(jobs)
    return [Job(j.id, j.arrival, j.mem, j.deadline, False, j.priority) for j in jobs]


def _rules(problem: str) -> list[str]:
    """The registered rules whose schedules are feasible for ``problem`` (whole-job rules fit both)."""
    return [
        n
        for n in POLICIES.names()
        if problem == "pausing" or not getattr(POLICIES.entry(n).factory, "minute_by_minute", False)
    ]


def _best_rule(jobs: list[Job], caps: tuple[int, ...], poll: int, problem: str) -> tuple[str, RunResult]:
    """The rule with the smallest makespan on ``jobs`` (ties: registration order) and its run."""
    runs = {n: run_policy(jobs, n, caps, poll) for n in _rules(problem)}
    name = min(runs, key=lambda n: runs[n].metrics.makespan)
    return name, runs[name]


def bound(
    jobs: Sequence[Job],
    capacities: Sequence[int] = DEFAULT_CAPACITIES,
    poll_interval: int = 1,
    time_limit_s: float = 10.0,
    method: str = "auto",
    problem: str = "pausing",
    workers: int = 1,
) -> Bound:
    """The optimum or a lower bound [min] of the makespan of ``jobs`` (see the module docstring).

    Args:
        jobs: the job set (jobs whose peak exceeds every instance are left out, as the simulators skip them).
        capacities: memory of each instance [MB].
        poll_interval: [min] between polls (releases are the polls at or after the arrivals).
        time_limit_s: [s] the exact solver's wall-clock limit, in [0, 1e6]; 0: no exact solver.
        method: ``"auto"``, ``"lower_bound"`` (the relaxation only) or ``"exact"`` (no shortcut).
        problem: ``"pausing"`` (a bound for every registered policy) or ``"whole"`` (whole-job rules).
        workers: CP-SAT search workers, an integer in [1, 64].

    Raises:
        ConfigError: a value outside what is allowed above.
    """
    caps = check_capacities(capacities)
    poll = check_poll(poll_interval)
    workers = check_request(time_limit_s, method, METHODS, workers)
    check_choice("problem", problem, PROBLEMS)
    t0 = time.perf_counter()
    todo = [j for j in _problem_jobs(jobs, problem) if j.peak <= max(caps)]
    lb = makespan_lower_bound(todo, caps, poll)
    if method == "lower_bound" or not todo:
        kind = "lower_bound" if todo else "optimum"  # nothing to run: makespan 0 is exact
        return Bound(float(lb), kind, time.perf_counter() - t0, "chain + memory level")
    name, best = _best_rule(todo, caps, poll, problem)
    ub = best.metrics.makespan
    if ub == lb and method == "auto":
        return Bound(float(lb), "optimum", time.perf_counter() - t0, f"lower bound met by {name}")
    if time_limit_s == 0:
        return Bound(float(lb), "lower_bound", time.perf_counter() - t0, "chain + memory level")
    rel = {j.id: release_time(j.arrival, poll) for j in todo}
    if len(todo) <= BRUTE_MAX_JOBS and sum(j.length for j in todo) <= BRUTE_MAX_UNITS:
        opt = brute_force_makespan(todo, caps, rel, t0=min(rel.values()), max_t=ub + 1)
        return Bound(float(opt), "optimum", time.perf_counter() - t0, "brute force")
    hint: Plan = {(j, k): (i, s) for j, k, i, s in best.schedule[["job", "k", "instance", "start"]].itertuples(False)}
    res = solve_poll(todo, caps, min(rel.values()), rel, {}, hint, float(time_limit_s), workers)
    low = max(lb, math.ceil(res.bound - 1e-9))
    if res.status == "optimal" or res.objective <= low:
        return Bound(float(res.objective), "optimum", time.perf_counter() - t0, f"cp-sat ({problem})")
    return Bound(float(low), "lower_bound", time.perf_counter() - t0, f"cp-sat bound ({res.status}, {problem})")


__all__ = ["BRUTE_MAX_JOBS", "BRUTE_MAX_UNITS", "METHODS", "PROBLEMS", "bound"]
