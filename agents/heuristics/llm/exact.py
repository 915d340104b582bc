"""The best schedule any LLM-serving policy can reach on a small instance, with CP-SAT (OR-Tools).

The simulator is *non-delay*: whenever a queued request fits the free GPUs, the policy must
start one (``LLMSim.advance`` stops exactly then), so a policy chooses only which of the
startable requests go first. This module models that set of schedules exactly, on the discrete
engine's integer steps:

* request ``j`` (the feasible ones; skipped requests are outside the objective) joins the queue
  at step ``R_j = ceil(a_j / dt)``, holds ``tau_j`` GPUs from its start step ``S_j >= R_j`` for
  ``D_j = max(1, ceil(p_j / dt))`` steps and completes at ``S_j dt + p_j``;
* at every step at most ``m`` GPUs are held (a cumulative constraint: on a cluster of one GPU
  type any set of ``tau`` free GPUs serves, so counts decide);
* non-delay: at every step ``x`` with ``R_j <= x < S_j`` the held GPUs number more than
  ``m - tau_j`` (``j`` did not fit). Held GPUs change only at starts and ends, so it is enough to
  check ``x`` at ``R_j`` and at every other request's start and end step.

Any schedule these constraints admit is what the engine plays when a policy starts, at each
step, the requests the schedule starts there (they fit together, and afterwards no queued
request fits); conversely every policy's run satisfies them. So the CP-SAT optimum is the best
weighted wait ``sum w (c - a)`` over all policies (``tests/llm/test_llm_strong.py`` replays the
solver's schedule through ``simulate`` and gets its value).

Scope: clusters of one GPU type (a request that fits one GPU fits all), the discrete engine at
``dt``, and the event engine where arrivals and run times lie on the ``dt`` grid (both presets;
there the two engines play the same schedules). Elsewhere :func:`solve_exact` raises
ConfigError. Weights are scaled to integers by ``weight_scale`` and rounded down; the solver's
bound is then a valid lower bound, its schedule re-valued with the true weights an upper bound,
and ``proven_optimal`` needs CP-SAT's OPTIMAL *and* the two within ``1e-6`` relative (exact for
weights on the ``1 / weight_scale`` grid, such as the presets' 1 and 10).

The GPUs are a cumulative resource (Baptiste, Le Pape and Nuijten (2001), *Constraint-Based
Scheduling*, Kluwer: the cumulative constraint), and the schedules are the non-delay class of
Baker (1974), *Introduction to Sequencing and Scheduling*, Wiley (no resource idles while an
operation that fits it waits).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.llm.model import Workload
from gpu_sched_env.llm.sim import ENGINES, LLMSim

_EPS = 1e-9  # the simulator's tolerance for event times and steps
_GRID_TOL = 1e-6  # [steps] how far from the dt grid a time may lie and still count as on it


@dataclass(frozen=True)
class Instance:
    """A workload's feasible requests as the bound and the solver see them (row ``k`` is request ``idx[k]``)."""

    idx: np.ndarray  # request indices (skipped requests left out)
    arrival: np.ndarray  # [s] a
    release: np.ndarray  # [s] when the request can start under the engine (discrete: its step's time)
    p: np.ndarray  # [s] estimated run time p_est (the realised one on a cluster of one GPU type)
    tau: np.ndarray  # GPUs per request
    weight: np.ndarray
    m: int  # GPUs in the cluster
    one_type: bool  # every GPU of the same type
    on_grid: bool  # arrivals and run times on the dt grid
    engine: str
    dt: float  # [s]

    @property
    def n(self) -> int:
        """Number of feasible requests."""
        return len(self.idx)

    @property
    def release_step(self) -> np.ndarray:
        """Step at which each request joins the queue (the discrete engine's ``ceil(a / dt)``)."""
        return np.array([math.ceil(a / self.dt - _EPS) for a in self.arrival], dtype=np.int64)

    @property
    def hold_steps(self) -> np.ndarray:
        """Steps each request holds its GPUs (``max(1, ceil(p / dt))``)."""
        return np.array([max(1, math.ceil(p / self.dt - _EPS)) for p in self.p], dtype=np.int64)

    @property
    def exact_scope(self) -> bool:
        """Whether :func:`solve_exact` models this instance's engine exactly."""
        return self.one_type and (self.engine == "discrete" or self.on_grid)


def instance(workload: Workload, engine: str = "discrete", dt: float = 0.01) -> Instance:
    """The feasible requests of ``workload`` under ``engine`` at step ``dt`` [s]."""
    check_choice("engine", engine, ENGINES)
    check_number("dt", dt, lo=0, lo_open=True)
    sim = LLMSim(workload, dt, engine)
    r = workload.requests
    idx = np.flatnonzero(~sim.skipped)
    a, p = r.arrival[idx].astype(float), sim.p_est[idx].astype(float)
    if engine == "discrete":
        release = np.array([math.ceil(x / dt - _EPS) * dt for x in a])
    else:
        release = a.copy()

    def grid(x: np.ndarray) -> bool:
        return bool(np.all(np.abs(x / dt - np.round(x / dt)) <= _GRID_TOL))

    types = workload.cluster.types
    return Instance(
        idx,
        a,
        release,
        p,
        r.tp[idx].astype(np.int64),
        r.weight[idx].astype(float),
        workload.cluster.m,
        all(t == types[0] for t in types),
        grid(a) and grid(p),
        engine,
        float(dt),
    )


@dataclass(frozen=True)
class ExactResult:
    """CP-SAT outcome on one instance."""

    status: str  # CP-SAT status name: OPTIMAL, FEASIBLE, UNKNOWN, ...
    lower_bound: float  # valid lower bound on every policy's weighted wait
    upper_bound: float  # weighted wait of the solver's best schedule (inf if none)
    proven_optimal: bool
    wall_s: float
    start: np.ndarray | None  # [s] start time per request of the best schedule (NaN: skipped)


def solve_exact(
    workload: Workload,
    engine: str = "discrete",
    dt: float = 0.01,
    time_limit_s: float = 10.0,
    workers: int = 1,
    seed: int = 0,
    weight_scale: int = 1000,
) -> ExactResult:
    """The best weighted wait over all policies, by CP-SAT; see the module docstring for the model.

    Long by design: the CP-SAT model (start and end variables, the cumulative GPU count, the GPUs
    held at each event, the rule that a request waits only when it does not fit, the objective), its
    solve and the read-back are one model read top to bottom against the module docstring; split,
    each part would need the others' variables.
    """
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    check_number("time_limit_s", time_limit_s, lo=0, lo_open=True)
    check_number("workers", workers, lo=1, integer=True)
    check_number("weight_scale", weight_scale, lo=1, integer=True)
    ins = instance(workload, engine, dt)
    if not ins.one_type:
        raise ConfigError(f"workload {workload.name!r}: the exact model needs a cluster of one GPU type")
    if not ins.exact_scope:
        raise ConfigError(
            f"workload {workload.name!r}: engine = 'event' is modelled exactly only when arrivals and run times "
            f"lie on the dt = {dt:g} s grid; allowed: engine = 'discrete', or a grid-aligned workload"
        )
    n, m, tau = ins.n, ins.m, ins.tau.tolist()
    const = float(np.sum(ins.weight * (ins.p - ins.arrival)))
    if n == 0:
        return ExactResult("OPTIMAL", 0.0, 0.0, True, time.perf_counter() - t0, np.full(workload.requests.n, np.nan))
    rel, hold = ins.release_step.tolist(), ins.hold_steps.tolist()
    horizon = max(rel) + sum(hold)  # a non-delay schedule has ended by then
    model = cp_model.CpModel()
    s = [model.new_int_var(rel[j], horizon, f"s{j}") for j in range(n)]
    e = [model.new_int_var(rel[j] + hold[j], horizon + hold[j], f"e{j}") for j in range(n)]
    ivs = [model.new_interval_var(s[j], hold[j], e[j], f"iv{j}") for j in range(n)]
    model.add_cumulative(ivs, tau, m)

    def held(x, tag: str) -> list:
        """Booleans [S_k <= x < E_k] times tau_k: GPUs held at step ``x`` (a variable or a constant)."""
        terms = []
        for k in range(n):
            on = model.new_bool_var(f"on{tag}_{k}")
            started, running = model.new_bool_var(""), model.new_bool_var("")
            model.add(s[k] <= x).only_enforce_if(started)
            model.add(s[k] > x).only_enforce_if(~started)
            model.add(e[k] > x).only_enforce_if(running)
            model.add(e[k] <= x).only_enforce_if(~running)
            model.add_bool_and([started, running]).only_enforce_if(on)
            model.add_bool_or([~started, ~running]).only_enforce_if(~on)
            terms.append(tau[k] * on)
        return terms

    points = [(s[k], f"s{k}", k) for k in range(n)] + [(e[k], f"e{k}", k) for k in range(n)]
    usage = {tag: held(x, tag) for x, tag, _ in points}
    for j in range(n):
        if tau[j] > m:
            continue  # skipped already (cannot happen: such a request is not feasible)
        need = m - tau[j] + 1  # held GPUs that keep j from fitting
        # at its own release step: j waits only if it did not fit
        waits = model.new_bool_var(f"w{j}")
        model.add(s[j] > rel[j]).only_enforce_if(waits)
        model.add(s[j] == rel[j]).only_enforce_if(~waits)
        model.add(sum(held(rel[j], f"r{j}")) >= need).only_enforce_if(waits)
        for x, tag, k in points:
            if k == j:
                continue
            inside = model.new_bool_var(f"in{j}_{tag}")  # R_j <= x < S_j
            after, before = model.new_bool_var(""), model.new_bool_var("")
            model.add(x >= rel[j]).only_enforce_if(after)
            model.add(x < rel[j]).only_enforce_if(~after)
            model.add(x < s[j]).only_enforce_if(before)
            model.add(x >= s[j]).only_enforce_if(~before)
            model.add_bool_and([after, before]).only_enforce_if(inside)
            model.add_bool_or([~after, ~before]).only_enforce_if(~inside)
            model.add(sum(usage[tag]) >= need).only_enforce_if(inside)
    w_int = [math.floor(w * weight_scale + 1e-9) for w in ins.weight]
    model.minimize(sum(w_int[j] * s[j] for j in range(n)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = int(seed)
    code = solver.solve(model)
    status = solver.status_name(code)
    wall = time.perf_counter() - t0
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ExactResult(status, 0.0, math.inf, False, wall, None)
    # w >= floor(w * scale) / scale and S >= 0, so the scaled bound stays below the true objective
    lb = max(0.0, ins.dt * solver.best_objective_bound / weight_scale + const)
    steps = np.array([solver.value(v) for v in s], dtype=float)
    ub = float(np.sum(ins.weight * (steps * ins.dt + ins.p - ins.arrival)))
    start = np.full(workload.requests.n, np.nan)
    start[ins.idx] = steps * ins.dt
    proven = code == cp_model.OPTIMAL and ub - lb <= 1e-6 * max(1.0, ub)
    return ExactResult(status, min(lb, ub), ub, proven, wall, start)


__all__ = ["ExactResult", "Instance", "instance", "solve_exact"]
