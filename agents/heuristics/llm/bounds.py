"""A bound on an LLM-serving instance's weighted wait: CP-SAT's optimum on small instances, else a relaxation.

``bound(workload, time_limit_s)`` is judged under ``simulate(policy, workload, dt, engine)`` with the same
``engine`` and ``dt`` (by default simulate's own: the discrete reference at 0.01 s; on workloads whose
arrivals and run times lie on the 0.01 s grid, such as both presets, the event engine plays the same
schedules, so one bound serves both). Its value is never above the weighted wait ``sum w (c - a)`` of
any policy on that instance:

* ``kind="optimum"``: :func:`~gpu_sched_agents.heuristics.llm.exact.solve_exact` (CP-SAT over every
  schedule the non-delay simulator can play, see its module) proved its best schedule optimal within
  ``time_limit_s``; it is the best any policy can do.
  It is also ``"optimum"`` when the best relaxation meets the weighted wait of WSRPT or ``rollout``
  (a schedule a policy plays, so nothing lower exists), e.g. on the ``discriminating`` preset.
* ``kind="lower_bound"``: the largest of the relaxations below (and of CP-SAT's own bound when it ran
  and did not finish). CP-SAT stops at its time limit, so on instances near its reach the kind can
  depend on the machine; the relaxations are deterministic.

**The relaxations** (:func:`relaxation`). Request ``j`` (feasible ones only; skipped requests are
outside the objective) is released at ``r_j`` (``a_j``; the discrete engine: its step's time
``ceil(a_j / dt) dt``), needs ``tau_j`` of the ``m`` GPUs for its realised run time, at least
``p_j = p_est`` (the run time on the fastest GPU type that holds it), and completes at
``C_j >= S_j + p_j`` for its start ``S_j >= r_j``.

1. *Trivial*: ``C_j - a_j >= r_j + p_j - a_j``.
2. *Pooled, preemptive* (Eastman, Even and Isaacs (1964), "Bounds for the optimal scheduling of n
   jobs on m processors", *Management Science* 11(2):268-279, extended with release dates by the
   mean-busy-time relaxation of Goemans (1997), "Improved approximation algorithms for scheduling with
   release dates", *SODA* pp. 591-598, and Goemans, Queyranne, Schulz, Skutella and Wang (2002),
   "Single machine scheduling with release dates", *SIAM J. Discrete Math.* 15(2):165-192).
   Let ``x_j(t) = tau_j / m`` on ``[S_j, S_j + p_j)`` and 0 elsewhere: the share of the pooled
   cluster ``j`` holds. In any schedule ``sum_j x_j(t) <= 1``, ``x_j = 0`` before ``r_j`` and
   ``int x_j = q_j = tau_j p_j / m``; ``j``'s mean busy time ``M_j = int t x_j / q_j`` is
   ``S_j + p_j / 2``, so ``C_j >= M_j + p_j / 2`` and
   ``sum w (C - a) >= min_x sum w_j M_j(x) + sum w_j (p_j / 2 - a_j)``, the minimum over every ``x``
   with those three properties (a preemptive schedule of one machine of speed 1). Moving work of a
   higher ratio ``w_j / q_j`` earlier in exchange for lower-ratio work changes the sum by
   ``eps (rho_j - rho_k)(t1 - t2) < 0``, so the minimum is the preemptive WSPT schedule by
   ``w_j / q_j`` (Goemans et al., the LP's optimum), computed exactly here.
3. *Time-indexed Lagrangian* (Fisher (1973), "Optimal solution of scheduling problems using Lagrange
   multipliers: Part I", *Operations Research* 21(5):1114-1127; subgradient steps as in
   Held, Wolfe and Crowder (1974), "Validation of subgradient optimization", *Mathematical
   Programming* 6:62-88). Time is cut into cells; request ``j`` starts in a cell ``sigma >= first_j``,
   costs ``w_j`` times its earliest possible start in that cell, and surely holds ``tau_j`` GPUs over
   the ``h_j`` cells its run covers whatever its start inside the cell (cells of ``k`` steps on the
   grid: ``h_j = floor((D_j + 1) / k) - 1``, ``D_j`` when ``k = 1``; off the grid, cells of ``delta``:
   ``h_j = floor(p_j / delta) - 1``). Every schedule maps to such starts with at most ``m`` GPUs held
   per cell. Pricing that constraint with any ``lambda >= 0`` gives
   ``L(lambda) = sum_j min_sigma [w_j start_j(sigma) + tau_j sum_{c in window} lambda_c] - m sum_c lambda_c
   + sum_j w_j (p_j - a_j)`` (``lambda = 0`` beyond the last cell, so later starts only cost more),
   at most the objective of every schedule (weak duality). ``bound`` keeps the best of
   :data:`LAG_ITERS` projected subgradient steps (Polyak's length towards WSRPT's weighted wait,
   halved after 5 steps without gain), deterministic. On the grid with ``k = 1`` (up to
   :data:`LAG_MAX_CELLS` request-cells) the cells are the engine's own steps.

The relaxations bound every schedule, also those that keep GPUs idle while a request that fits
waits, which the non-delay simulator never plays; on congested instances the best non-delay
schedule can lie far above them (docs/hgsp.md, *Strong rules and the bound*). The tests check them
against CP-SAT's optimum where it is proved.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from gpu_sched_agents.heuristics.llm import WSRPT
from gpu_sched_agents.heuristics.llm.exact import Instance, instance, solve_exact
from gpu_sched_agents.heuristics.llm.strong import Rollout
from gpu_sched_env.core.bounds import Bound, check_request
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.llm.api import simulate
from gpu_sched_env.llm.model import Workload

METHODS = ("auto", "cp-sat", "relaxation")
# Feasible requests up to which method "auto" runs CP-SAT: LLMServe-v0's default size. What CP-SAT
# proves within 10 s (1 worker, mixed(seed, n) on 5 selection seeds from 10 000 per size): on the preset's
# 16 H100 at 4 /s, n = 8 .. 30 all within 1 s, n = 40 all within 7 s, n = 50 14 of 20 seeds; on a congested
# 4-GPU cluster, n = 8 .. 12 all within 2 s, n = 16 three of five, n = 20 one of five.
EXACT_MAX_N = 50
LAG_ITERS = 100  # subgradient steps of the Lagrangian (its bound changes little after ~100)
LAG_MAX_CELLS = 1_500_000  # requests x time cells; cells widen beyond it (time and memory ~ this)
_EPS = 1e-9  # [cells] tolerance of float cell boundaries
_FLOAT_MARGIN = 1e-9  # relative: a relaxation's value is lowered by it, for the rounding of its float sums


def trivial(ins: Instance) -> float:
    """``sum w (r + p - a)``: every request waits for its release and runs ``p_est`` at least."""
    return float(np.sum(ins.weight * (ins.release + ins.p - ins.arrival)))


def pooled_wspt(ins: Instance) -> float:
    """Relaxation 2: preemptive WSPT on the pooled cluster (mean busy times, exact)."""
    if ins.n == 0:
        return 0.0
    q = ins.tau * ins.p / ins.m  # [s] work on one machine of speed 1
    ratio = ins.weight / q
    order = np.lexsort((np.arange(ins.n), ins.release))
    rem, busy = q.copy(), np.zeros(ins.n)  # busy: int t x_j dt
    heap: list[tuple[float, int]] = []
    t, k = 0.0, 0
    while k < ins.n or heap:
        if not heap:
            t = max(t, float(ins.release[order[k]]))
        while k < ins.n and ins.release[order[k]] <= t:
            j = int(order[k])
            heapq.heappush(heap, (-ratio[j], j))
            k += 1
        j = heap[0][1]
        nxt = float(ins.release[order[k]]) if k < ins.n else math.inf
        run = min(rem[j], nxt - t)
        busy[j] += (t + run / 2) * run
        rem[j] -= run
        t += run
        if rem[j] <= 1e-12 * max(1.0, q[j]):
            heapq.heappop(heap)
    mean_busy = busy / q
    return float(np.sum(ins.weight * (mean_busy + ins.p / 2 - ins.arrival)))


def lagrangian(ins: Instance, upper: float, iters: int = LAG_ITERS) -> float:
    """Relaxation 3: the time-indexed Lagrangian dual, by subgradient steps from ``lambda = 0``.

    ``upper`` (a policy's weighted wait) only sets the step length; every iterate is a valid bound.
    """
    if ins.n == 0:
        return 0.0
    tau, w, m = ins.tau.astype(float), ins.weight, ins.m
    if ins.engine == "discrete" or ins.on_grid:  # starts on the dt grid: cells of k steps
        steps, dur = ins.release_step, ins.hold_steps
        span = float(steps.max() + np.sum(tau * dur) / m + dur.max())
        k = max(1, math.ceil(ins.n * span / LAG_MAX_CELLS))
        first = -(-steps // k)
        hold = dur if k == 1 else np.maximum(0, (dur + 1) // k - 1)

        def start(sig: np.ndarray) -> np.ndarray:  # [s] earliest start of each request in cell sig
            return ins.dt * np.maximum(steps[:, None], sig[None, :] * k - (k - 1))
    else:  # continuous starts: cells of delta seconds
        span = float(ins.release.max() + np.sum(tau * ins.p) / m + ins.p.max())
        delta = max(ins.dt, span * ins.n / LAG_MAX_CELLS)
        first = np.ceil(ins.release / delta - _EPS).astype(np.int64)
        hold = np.maximum(0, np.floor(ins.p / delta + _EPS).astype(np.int64) - 1)

        def start(sig: np.ndarray) -> np.ndarray:
            return np.maximum(ins.release[:, None], (sig[None, :] - 1) * delta)

    n_cells = int(first.max() + math.ceil(float(np.sum(tau * hold)) / m) + hold.max()) + 1
    sig = np.arange(n_cells + 1)  # a start in cell n_cells stands for every later one
    base = w[:, None] * start(sig)
    base[sig[None, :] < first[:, None]] = np.inf
    end = np.minimum(sig[None, :] + hold[:, None], n_cells)
    const = float(np.sum(w * (ins.p - ins.arrival)))
    lam = np.zeros(n_cells)
    rows = np.arange(ins.n)
    best, theta, stale = -math.inf, 1.0, 0
    for _ in range(iters):
        prefix = np.concatenate([[0.0], np.cumsum(lam)])
        cost = base + tau[:, None] * (prefix[end] - prefix[sig][None, :])
        pick = np.argmin(cost, axis=1)
        value = float(cost[rows, pick].sum()) + const - m * float(lam.sum())
        if value > best + 1e-12:
            best, stale = value, 0
        else:
            stale += 1
            if stale >= 5:
                theta, stale = theta / 2, 0
        diff = np.zeros(n_cells + 1)
        np.add.at(diff, pick, tau)
        np.add.at(diff, np.minimum(pick + hold, n_cells), -tau)
        grad = np.cumsum(diff)[:n_cells] - m
        grad[(lam <= 0) & (grad < 0)] = 0.0  # projected: a price at 0 cannot fall
        norm = float(grad @ grad)
        if norm == 0 or upper - value <= 1e-9:
            break
        lam = np.maximum(0.0, lam + theta * (upper - value) / norm * grad)
    return best


def relaxation(ins: Instance, upper: float) -> tuple[float, str]:
    """The largest of the three relaxations (module docstring) and its name; ``upper``: a policy's value."""
    vals = {"trivial": trivial(ins), "pooled WSPT": pooled_wspt(ins)}
    vals["time-indexed Lagrangian"] = lagrangian(ins, upper)
    best = max(vals, key=vals.__getitem__)
    return max(0.0, vals[best] * (1 - _FLOAT_MARGIN)), best


def bound(
    workload: Workload,
    time_limit_s: float = 10.0,
    *,
    engine: str = "discrete",
    dt: float = 0.01,
    method: str = "auto",
    workers: int = 1,
) -> Bound:
    """A bound on ``workload``'s weighted wait under ``simulate(..., dt=dt, engine=engine)``.

    Args:
        workload: the instance (a :class:`~gpu_sched_env.llm.model.Workload`).
        time_limit_s: CP-SAT's limit [s], >= 0; 0 turns the exact solver off (relaxations only).
        engine: the engine the policies are judged under (``discrete`` or ``event``).
        dt: the discrete engine's step [s].
        method: ``auto`` (CP-SAT where it models the instance exactly and it has at most
            :data:`EXACT_MAX_N` feasible requests), ``cp-sat`` (whatever the size; ConfigError where it
            does not model the instance) or ``relaxation``.
        workers: CP-SAT's worker threads.

    Returns:
        ``Bound(value, "optimum" | "lower_bound", solver_s, method)``; see the module docstring.
    """
    t0 = time.perf_counter()
    if not isinstance(workload, Workload):
        raise ConfigError(f"workload = {workload!r} is not allowed; allowed: a gpu_sched_env.llm.model.Workload")
    workers = check_request(time_limit_s, method, METHODS, workers)
    ins = instance(workload, engine, dt)
    if method == "cp-sat" and not ins.exact_scope:
        raise ConfigError(
            f"method = 'cp-sat': workload {workload.name!r} under engine = {engine!r} is beyond the exact model "
            "(it needs one GPU type, and for the event engine arrivals and run times on the dt grid); "
            "allowed: method = 'auto' or 'relaxation'"
        )
    upper = min(simulate(p, workload, dt=dt, engine=engine).summary()["weighted_wait"] for p in (WSRPT(), Rollout()))
    value, name = relaxation(ins, upper)
    if value >= upper * (1 - 2 * _FLOAT_MARGIN):  # a policy's schedule meets the bound: it is optimal
        return Bound(upper, "optimum", time.perf_counter() - t0, f"relaxation ({name}) meets a rule's schedule")
    how = f"relaxation: {name}"
    run_exact = time_limit_s > 0 and (
        method == "cp-sat" or (method == "auto" and ins.exact_scope and ins.n <= EXACT_MAX_N)
    )
    if run_exact:
        ex = solve_exact(workload, engine, dt, time_limit_s=time_limit_s, workers=workers)
        if ex.proven_optimal:
            return Bound(ex.upper_bound, "optimum", time.perf_counter() - t0, "cp-sat")
        if ex.lower_bound > value:
            value, how = ex.lower_bound, f"cp-sat bound ({ex.status})"
    return Bound(value, "lower_bound", time.perf_counter() - t0, how)


__all__ = ["EXACT_MAX_N", "METHODS", "bound", "lagrangian", "pooled_wspt", "relaxation", "trivial"]
