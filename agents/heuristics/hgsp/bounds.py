"""A bound on an HGSP instance's total weighted tardiness: CP-SAT's optimum on small instances, else relaxations.

``bound(problem, time_limit_s)`` is never above the weighted tardiness ``hgsp.run(...).summary()["wt"]``
of any policy on ``problem`` (of any feasible schedule: the bound does not assume list scheduling).
Tasks no GPU can hold are outside the objective, as in ``run``.

* ``kind="optimum"``: :func:`~gpu_sched_agents.heuristics.hgsp.exact.solve_exact` (CP-SAT) reported
  OPTIMAL within ``time_limit_s`` on a time grid fine enough that the presets' data are integers on
  it (:func:`exact_scale`: arrivals and deadlines have 3 decimals, run times ``L / v`` are multiples
  of ``1 / (1000 lcm(numerators of v))``), and its re-timed schedule's weighted tardiness ``ub`` (the
  value returned) lies within :func:`exact_tolerance` of its proved lower bound ``lb``. On that grid
  the solver's rounding towards the relaxation only meets the float error of ``x * scale`` (at most
  one grid unit per value), so ``lb <= OPT <= ub`` with ``ub - lb`` that small: ``ub`` is the
  optimum up to the float rounding of the data. It is also ``"optimum"`` when a relaxation meets
  the weighted tardiness of a rule's schedule (e.g. both 0).
* ``kind="lower_bound"``: the largest of the relaxations below, and of CP-SAT's own bound when it ran
  and did not finish. CP-SAT stops at its time limit, so near its reach the kind can depend on the
  machine; the relaxations are deterministic.

**The relaxations** (:func:`relaxation`). Task ``i`` arrives at ``a_i``, is due at ``d_i`` with weight
``w_i``, runs ``p_ik = L_i / v_k`` on a GPU of model ``k`` that holds it (``c_k`` such GPUs) and
``p_i = min_k p_ik``. In every schedule ``C_i >= S_i + p_i``, ``S_i >= a_i``.

1. *Trivial*: ``sum w_i (a_i + p_i - d_i)^+``.
2. *Pooled mean busy time* (Goemans, Queyranne, Schulz, Skutella and Wang (2002), "Single machine
   scheduling with release dates", *SIAM J. Discrete Math.* 15(2):165-192, the mean-busy-time
   relaxation). Take a set ``G`` of GPUs, total speed ``V``, and tasks ``S`` that fit only GPUs of
   ``G`` (a memory tier). Task ``i`` running on GPU ``j`` holds the share ``x_i(t) = v_j / V`` of the
   pooled speed on ``[S_i, C_i)``: ``sum_i x_i <= 1``, ``x_i = 0`` before ``a_i``, ``int x_i = L_i / V``,
   and its mean busy time is ``M_i = S_i + p_ij / 2``, so ``C_i >= M_i + p_i / 2``. The minimum of
   ``sum w_i M_i`` over such ``x`` is the preemptive WSPT schedule by ``w_i V / L_i`` on one machine
   (the LP optimum of Goemans et al.), computed exactly. As ``T_i >= C_i - d_i``,
   ``sum_S w_i T_i >= min sum_S w_i M_i + sum_S w_i (p_i / 2 - d_i)``, for each tier and for the
   subsets of it tried (all its tasks, those tardy in a rule's schedule, arrival prefixes); a subset's
   value bounds the whole objective, as dropping tasks only lowers what the others can reach.
3. *Time-indexed Lagrangian* (Fisher (1973), "Optimal solution of scheduling problems using Lagrange
   multipliers: Part I", *Operations Research* 21(5):1114-1127; subgradient steps as in Held, Wolfe and
   Crowder (1974), "Validation of subgradient optimization", *Mathematical Programming* 6:62-88).
   Time is cut into cells of ``delta``. A task starting at ``s`` in cell ``sigma`` on model ``k`` costs
   at least ``w_i (max(a_i, sigma delta) + p_ik - d_i)^+`` and surely holds one GPU of model ``k`` over
   the cells ``sigma + 1 .. floor((max(a_i, sigma delta) + p_ik) / delta) - 1``; every schedule holds
   at most ``c_k`` GPUs of model ``k`` in a cell. Pricing that constraint with ``lambda >= 0`` gives
   ``L(lambda) = sum_i min_{k, sigma} [cost + sum of lambda over the cells held] - sum c_k lambda``,
   at most every schedule's weighted tardiness (weak duality). Each task's starts are scanned over a
   window of cells from its arrival; every later start costs at least ``w_i`` times its tardiness at
   the window's end, which stands for them, so the value stays a bound. ``bound`` keeps the best of
   :data:`LAG_ITERS` projected subgradient steps (Polyak's length towards a rule's weighted
   tardiness, halved after 5 steps without gain), deterministic.

The relaxations are weak where tardiness comes from a long backlog of a lightly tardy instance
(``tasks1``/``tasks2`` on their clusters: often 0) and useful on congested bursts (``tiny``) and
overloaded sets; docs/hgsp.md, *Strong rules and the bound*, gives the measurements.
"""

from __future__ import annotations

import heapq
import math
import time
from fractions import Fraction

import numpy as np

from gpu_sched_agents.heuristics.hgsp.exact import solve_exact
from gpu_sched_agents.heuristics.hgsp.strong import LocalSearch
from gpu_sched_env.core.bounds import Bound, check_request
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.hgsp.sim import Problem, Schedule, decode

METHODS = ("auto", "cp-sat", "relaxation")
# Schedulable tasks up to which method "auto" runs CP-SAT. Its reach within 10 s (4 workers) depends on
# the congestion: tiny bursts on the small cluster to n = 10 (all of 6 selection seeds), 12 (five), 14
# (three); sparse tasks1 prefixes of 100 tasks (docs/hgsp.md, "Strong rules and the bound").
EXACT_MAX_N = 100
LAG_ITERS = 150  # subgradient steps of the Lagrangian
LAG_MAX_ENTRIES = 400_000  # tasks x models x window cells; cells widen beyond it (time and memory ~ this)
LAG_CELLS_PER_TASK = 24  # the cell is at most the median run time / this (resolution)
_FLOAT_MARGIN = 1e-9  # relative: a relaxation's value is lowered by it, for the rounding of its float sums
_GRID_DECIMALS = 1000  # the presets' data have 3 decimals


def exact_scale(problem: Problem) -> tuple[int, int]:
    """(time scale, weight scale) that make the instance's data integers for CP-SAT, where they can.

    Times: ``1000 * lcm`` of the numerators of the GPU speeds (57, 30, 111/2 -> 21 090 000), so
    arrivals and deadlines with 3 decimals and run times ``L / v`` with ``L`` on 3 decimals are
    integers; weights: 1 if all are integers, else 100. Data off that grid are rounded by the solver
    towards the relaxation (its bound stays valid; optimality is then rarely proved).
    """
    lcm = 1
    for v in problem.cluster.speed:
        lcm = math.lcm(lcm, Fraction(float(v)).limit_denominator(1000).numerator)
    w = problem.tasks.weight
    return _GRID_DECIMALS * lcm, 1 if np.all(w == np.round(w)) else 100


def exact_tolerance(problem: Problem, scale: int) -> float:
    """How far CP-SAT's re-timed optimum may lie above its bound from the float rounding of the data.

    Each arrival, deadline and run time is off its grid value by at most one unit (``1 / scale``)
    after the float product, so in the solver's model a task ends at most ``n + 1`` units earlier and
    is due at most one unit later: ``(n + 2) sum w / scale``, plus 1e-9 of ``sum w`` for the float sums.
    Whatever the cause of a gap this small, ``ub`` is then within it of the optimum.
    """
    w = float(problem.tasks.weight[problem.arrival_order].sum())
    return (len(problem.arrival_order) + 2) * w / scale + 1e-9 * max(1.0, w)


def trivial(problem: Problem) -> float:
    """``sum w (a + p - d)^+`` over the schedulable tasks (``p`` on the fastest GPU that holds it)."""
    t, idx = problem.tasks, problem.arrival_order
    p = np.where(problem.fit, problem.p, np.inf).min(axis=1)[idx]
    return float(np.sum(t.weight[idx] * np.maximum(0.0, t.arrival[idx] + p - t.deadline[idx])))


def _mean_busy(a: np.ndarray, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Mean busy times of the preemptive WSPT schedule (ratio ``w / q``) on one unit-speed machine."""
    n = len(a)
    ratio = np.where(q > 0, w / np.where(q > 0, q, 1.0), np.inf)
    order = np.lexsort((np.arange(n), a))
    rem, busy = q.copy(), np.zeros(n)  # busy: int t x_i dt
    heap: list[tuple[float, int]] = []
    t, k = 0.0, 0
    while k < n or heap:
        if not heap:
            t = max(t, float(a[order[k]]))
        while k < n and a[order[k]] <= t:
            j = int(order[k])
            heapq.heappush(heap, (-ratio[j], j))
            k += 1
        j = heap[0][1]
        nxt = float(a[order[k]]) if k < n else math.inf
        run = min(rem[j], nxt - t)
        busy[j] += (t + run / 2) * run
        rem[j] -= run
        t += run
        if rem[j] <= 1e-12 * max(1.0, q[j]):
            heapq.heappop(heap)
    return np.where(q > 0, busy / np.where(q > 0, q, 1.0), a)


def pooled(problem: Problem, tardy: np.ndarray | None = None) -> float:
    """Relaxation 2: the best pooled mean-busy-time bound over the memory tiers and the subsets tried.

    ``tardy``: a boolean mask of the tasks tardy in some schedule (one of the subsets tried).
    """
    t, fit = problem.tasks, problem.fit
    p = np.where(fit, problem.p, np.inf).min(axis=1)
    best = 0.0
    for gpus in problem.cls_gpus:
        g = np.zeros(problem.m, bool)
        g[list(gpus)] = True
        tier = problem.schedulable & ~(fit & ~g[None, :]).any(axis=1)  # fits only GPUs of g
        speed = float(problem.cluster.speed[g].sum())
        members = np.flatnonzero(tier)
        subsets = [members]
        if tardy is not None:
            subsets.append(members[tardy[members]])
        by_arrival = members[np.lexsort((members, t.arrival[members]))]
        subsets += [by_arrival[: len(by_arrival) * k // 4] for k in (1, 2, 3)]
        for s in subsets:
            if len(s) == 0:
                continue
            mb = _mean_busy(t.arrival[s], t.workload[s] / speed, t.weight[s])
            best = max(best, float(np.sum(t.weight[s] * (mb + p[s] / 2 - t.deadline[s]))))
    return best


def lagrangian(problem: Problem, upper: float, horizon: float, iters: int = LAG_ITERS) -> float:
    """Relaxation 3: the time-indexed Lagrangian dual, by subgradient steps from ``lambda = 0``.

    ``upper`` (a rule's weighted tardiness) only sets the step length and ``horizon`` [time] (how long
    after its arrival a task may start within the scanned window) only the window; every iterate is a
    valid bound whatever they are.
    """
    idx = problem.arrival_order
    n = len(idx)
    if n == 0:
        return 0.0
    t, cl = problem.tasks, problem.cluster
    a, d, w = t.arrival[idx], t.deadline[idx], t.weight[idx]
    models = list(dict.fromkeys(cl.models))
    col = [cl.models.index(mo) for mo in models]  # the GPUs of a model are identical
    cap = np.array([cl.models.count(mo) for mo in models], float)
    p, fit = problem.p[idx][:, col], problem.fit[idx][:, col]  # [n, K]
    n_k = len(models)
    p_min = np.where(fit, p, np.inf).min(axis=1)
    delta = float(np.median(p_min)) / LAG_CELLS_PER_TASK
    span = max(horizon, float(p_min.max())) + float(p.max())
    delta = max(delta, span * n * n_k / LAG_MAX_ENTRIES)
    n_win = int(math.ceil(span / delta)) + 1
    first = np.floor(a / delta).astype(np.int64)
    sig = first[:, None] + np.arange(n_win)[None, :]  # [n, W] start cells
    s0 = np.maximum(a[:, None], sig * delta)  # earliest start in the cell
    e0 = s0[:, None, :] + p[:, :, None]  # [n, K, W]
    cost = np.where(fit[:, :, None], w[:, None, None] * np.maximum(0.0, e0 - d[:, None, None]), np.inf)
    lo = np.broadcast_to(sig[:, None, :] + 1, e0.shape)  # first cell surely held
    hi = np.maximum(np.floor(e0 / delta - 1e-9).astype(np.int64) - 1, lo - 1)  # last one (lo - 1: none)
    outside = w * np.maximum(0.0, (first + n_win) * delta * (1 - 1e-12) + p_min - d)  # any later start
    n_cells = int(hi.max()) + 1
    kk = np.arange(n_k)[None, :, None] * (n_cells + 1)
    flat_lo, flat_hi = (kk + lo).reshape(n, -1), (kk + hi + 1).reshape(n, -1)
    cost = cost.reshape(n, -1)
    lam = np.zeros((n_k, n_cells))
    rows = np.arange(n)
    best, theta, stale = -math.inf, 2.0, 0
    for _ in range(iters):
        prefix = np.zeros((n_k, n_cells + 1))
        np.cumsum(lam, axis=1, out=prefix[:, 1:])
        pf = prefix.ravel()
        total = cost + (pf[flat_hi] - pf[flat_lo])
        pick = np.argmin(total, axis=1)
        low = total[rows, pick]
        inside = low <= outside
        value = float(np.where(inside, low, outside).sum()) - float((cap[:, None] * lam).sum())
        if value > best + 1e-12:
            best, stale = value, 0
        else:
            stale += 1
            if stale >= 5:
                theta, stale = theta / 2, 0
        use = np.zeros(n_k * (n_cells + 1))
        sel = rows[inside]
        np.add.at(use, flat_lo[sel, pick[sel]], 1.0)
        np.add.at(use, flat_hi[sel, pick[sel]], -1.0)
        grad = np.cumsum(use.reshape(n_k, n_cells + 1), axis=1)[:, :n_cells] - cap[:, None]
        grad[(lam <= 0) & (grad < 0)] = 0.0  # projected: a price at 0 cannot fall
        norm = float((grad * grad).sum())
        if norm == 0 or upper - value <= 1e-9:
            break
        lam = np.maximum(0.0, lam + theta * (upper - value) / norm * grad)
    return max(0.0, best)


def _weighted_tardiness(problem: Problem, sched: Schedule) -> np.ndarray:
    t = problem.tasks
    return np.nan_to_num(t.weight * np.maximum(0.0, sched.end - t.deadline))


def rule_schedule(problem: Problem) -> Schedule:
    """The best of the ``ls`` rule's (the strongest registered rule), Greedy's and FIFO's schedules."""
    pol = LocalSearch()
    scheds = [decode(problem, pol.order(problem), pol.decode_rule, serial=True)]
    scheds += [decode(problem, None, "eft"), decode(problem, None, "fifo")]
    return min(scheds, key=lambda s: float(_weighted_tardiness(problem, s).sum()))


def relaxation(problem: Problem, schedule: Schedule | None = None) -> tuple[float, str]:
    """The largest of the three relaxations (module docstring) and its name.

    ``schedule`` (default :func:`rule_schedule`) sets the Lagrangian's step length and window and one
    pooled subset (its tardy tasks); the value is a bound whatever it is.
    """
    sched = rule_schedule(problem) if schedule is None else schedule
    tard = _weighted_tardiness(problem, sched)
    ok = sched.scheduled
    horizon = float(np.max(sched.end[ok] - problem.tasks.arrival[ok])) if ok.any() else 0.0
    vals = {"trivial": trivial(problem), "pooled mean busy time": pooled(problem, tard > 0)}
    if float(tard.sum()) > max(vals.values()):
        vals["time-indexed Lagrangian"] = lagrangian(problem, float(tard.sum()), horizon)
    name = max(vals, key=vals.__getitem__)
    return max(0.0, vals[name] * (1 - _FLOAT_MARGIN)), name


def bound(problem: Problem, time_limit_s: float = 10.0, *, method: str = "auto", workers: int = 4) -> Bound:
    """A bound on ``problem``'s total weighted tardiness (``summary()["wt"]`` of ``hgsp.run``).

    Args:
        problem: the instance (a :class:`~gpu_sched_env.hgsp.sim.Problem`).
        time_limit_s: CP-SAT's limit [s], >= 0; 0 turns the exact solver off (relaxations only).
        method: ``auto`` (CP-SAT on instances of at most :data:`EXACT_MAX_N` schedulable tasks),
            ``cp-sat`` (whatever the size) or ``relaxation``.
        workers: CP-SAT's worker threads, an integer in [1, 64] (its portfolio of strategies: with one
            worker the proofs take far longer on the exact grid).

    Returns:
        ``Bound(value, "optimum" | "lower_bound", solver_s, method)``; see the module docstring.
    """
    t0 = time.perf_counter()
    if not isinstance(problem, Problem):
        raise ConfigError(f"problem = {problem!r} is not allowed; allowed: a gpu_sched_env.hgsp.sim.Problem")
    check_request(time_limit_s, method, METHODS, workers)
    n = len(problem.arrival_order)
    sched = rule_schedule(problem)
    upper = float(_weighted_tardiness(problem, sched).sum())
    value, name = relaxation(problem, sched)
    if value >= upper * (1 - 2 * _FLOAT_MARGIN):  # a rule's schedule meets the bound: it is optimal
        return Bound(upper, "optimum", time.perf_counter() - t0, f"relaxation ({name}) meets a rule's schedule")
    how = f"relaxation: {name}"
    if time_limit_s > 0 and method != "relaxation" and (method == "cp-sat" or n <= EXACT_MAX_N):
        scale, weight_scale = exact_scale(problem)
        ex = solve_exact(
            problem.tasks,
            problem.cluster,
            time_limit_s=time_limit_s,
            scale=scale,
            weight_scale=weight_scale,
            workers=workers,
        )
        if ex.status == "OPTIMAL" and ex.upper_bound - ex.lower_bound <= exact_tolerance(problem, scale):
            return Bound(ex.upper_bound, "optimum", time.perf_counter() - t0, "cp-sat")
        if ex.lower_bound > value:
            value, how = ex.lower_bound, f"cp-sat bound ({ex.status})"
    return Bound(value, "lower_bound", time.perf_counter() - t0, how)


__all__ = [
    "EXACT_MAX_N",
    "METHODS",
    "bound",
    "exact_scale",
    "exact_tolerance",
    "lagrangian",
    "pooled",
    "relaxation",
    "rule_schedule",
    "trivial",
]
