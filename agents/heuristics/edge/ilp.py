"""Per-round assignment ILPs solved with OR-Tools CP-SAT: MemBatch and the baseline ILP.

One round places a subset of the remaining tasks on devices so that every device can hold
all of them at once (memory and GPU share); tasks left out (``u_i = 1``) are re-solved in
the next round, until all are placed. Variables: binary ``x_ij`` (task i on device j),
binary ``u_i`` (left for later), integer makespan ``C``. ``sum_j x_ij + u_i = 1``;
``sum_i mem_ij x_ij <= mem_j``; ``sum_i gpu_ij x_ij <= 100 %`` — the study's formulation for
*both* ILPs. Two named options (``SolverConfig``) change the model:

* ``gpu_share``: ``"enforce"`` (default, the study) or ``"ignore"`` (drop the GPU-share sum;
  a task must still fit a device alone). ``"ignore"`` was this project's earlier baseline,
  read from the study's five-task narrative (the baseline's second Chest X-ray sub-task on
  the Orin "although the first consumes 64 %"); kept for the sensitivity table.
* ``rounds``: ``"load_aware"`` (default) — the makespan of round r counts the work already
  committed in rounds < r: ``C >= F_j + (new work on j)`` for every device j, where ``F_j`` is
  device j's planned finish time [s] of the tasks placed so far (the simulator's FIFO
  timeline with profile times), so a round balances devices over the whole run ("all cores
  finish at about the same time"); ``"independent"`` — every round starts from idle
  devices (``F_j = 0``), the project's earlier model. Only the ``"makespan"`` objective uses
  ``C``, so the option does not change the baseline's (total-time) rounds.

New work on device j (``finish``): ``"max"`` (default) — the tasks of one round on a device
co-run, so the device is done when its longest task is: ``C >= F_j + t_ij x_ij``; ``"sum"`` —
the device runs them one after another: ``C >= F_j + sum_i t_ij x_ij``.

Objectives (CP-SAT needs integers: times are whole seconds rounded up, memory whole MB
rounded up, GPU share tenths of a percent rounded up, capacities rounded down, so a
solution of the integer model is feasible for the exact one):
  * ``"makespan"`` (MemBatch): ``P * sum u + W * C + sum t_ij x_ij``. ``P`` makes placing one
    more task worth more than any makespan; ``W`` makes one second of makespan worth more
    than the whole tie-break term, which only picks the fastest devices among assignments
    with the same makespan (lexicographic: placed tasks, then makespan, then total time).
  * ``"total"`` (baseline): ``sum t_ij x_ij`` (total computation time, the study's objective)
    plus a price for the tasks left for later, which the study does not state (without one
    the optimum places nothing); option ``deferral``: ``"best_time"`` (the baseline's default)
    ``sum (min_j t_ij + 1 s) u_i``, so a task waits for a later round rather than take a
    slower device — the round's optimum is the total computation time of all its tasks with
    the deferred ones counted at their best time; ties go to arrival order (a tiny extra
    term: the later task waits); ``"penalty"`` ``P * sum u`` with ``P`` larger than any
    total, so a round places as many tasks as it can, as MemBatch's does.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.edge.model import Cluster, Task, check_placeable, task_arrays
from gpu_sched_env.edge.plan import Plan, SolveReport
from gpu_sched_env.edge.sim import DeviceTimeline
from gpu_sched_env.edge.workload import memory_batches, split_tasks, split_threshold

OBJECTIVES = ("makespan", "total")
FINISH = ("max", "sum")
GPU_SHARE = ("enforce", "ignore")  # per-device GPU-share sum in each round: the study's / dropped
ROUNDS = ("load_aware", "independent")  # round makespan counts committed work / starts from idle devices
DEFERRAL = ("auto", "penalty", "best_time")  # price of leaving a task for the next round; auto = per objective


@dataclass(frozen=True)
class SolverConfig:
    """CP-SAT settings for every round.

    Args:
        time_limit_s: limit per solve. With ``deterministic`` it is CP-SAT's deterministic
            time (work units calibrated to roughly seconds; results reproducible on any
            machine), else wall seconds. When the limit stops the search the round's status
            is FEASIBLE and its gap says how far from proven optimal it may be.
        deterministic: use the deterministic limit (default) instead of wall time.
        workers: CP-SAT search workers (1 keeps runs reproducible and the 2 cores free).
        finish: device finish-time model, ``"max"`` or ``"sum"`` (module docstring).
        wall_cap_s: hard wall-clock cap per solve even in deterministic mode.
        gpu_share: ``"enforce"`` (the study) or ``"ignore"`` the per-device GPU-share sum.
        rounds: ``"load_aware"`` (committed work counts in a round's makespan) or
            ``"independent"`` (every round starts from idle devices).
        deferral: price of ``u_i = 1``: ``"penalty"`` (a large ``P``: place as many tasks
            as possible), ``"best_time"`` (the task's time on its fastest device + 1 s: a
            task waits for a later round rather than take a slower device; ``"total"``
            objective only) or ``"auto"`` (default: ``"best_time"`` for the baseline's
            ``"total"`` objective, ``"penalty"`` for MemBatch's ``"makespan"``).
    """

    time_limit_s: float = 1.0
    deterministic: bool = True
    workers: int = 1
    finish: str = "max"
    wall_cap_s: float = 30.0
    gpu_share: str = "enforce"
    rounds: str = "load_aware"
    deferral: str = "auto"

    def __post_init__(self) -> None:
        check_number("time_limit_s", self.time_limit_s, lo=0.0, lo_open=True, section="solver")
        check_number("workers", self.workers, lo=1, integer=True, section="solver")
        check_choice("finish", self.finish, FINISH, section="solver")
        check_number("wall_cap_s", self.wall_cap_s, lo=0.0, lo_open=True, section="solver")
        check_choice("gpu_share", self.gpu_share, GPU_SHARE, section="solver")
        check_choice("rounds", self.rounds, ROUNDS, section="solver")
        check_choice("deferral", self.deferral, DEFERRAL, section="solver")

    def replace(self, **changes: object) -> SolverConfig:
        """Copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


def _greedy(
    t: np.ndarray, g: np.ndarray, m: np.ndarray, fits: np.ndarray, mem_cap: np.ndarray, gpu_cap: np.ndarray
) -> np.ndarray:
    """First-fit in task order on the fastest device with room (hint and fallback)."""
    n, d = t.shape
    used_m = np.zeros(d, dtype=np.int64)
    used_g = np.zeros(d, dtype=np.int64)
    out = np.full(n, -1)
    for i in range(n):
        for j in np.argsort(t[i], kind="stable"):
            if fits[i, j] and used_m[j] + m[i, j] <= mem_cap[j] and used_g[j] + g[i, j] <= gpu_cap[j]:
                out[i] = j
                used_m[j] += m[i, j]
                used_g[j] += g[i, j]
                break
    return out


def _round_makespan(assign: np.ndarray, t: np.ndarray, finish: str, committed: np.ndarray) -> int:
    """The round's makespan in the ILP's own model: max_j committed_j + new work on j [s]."""
    d = t.shape[1]
    per_dev = []
    for j in range(d):
        ts = [int(t[i, j]) for i in np.flatnonzero(assign == j)]
        per_dev.append(int(committed[j]) + ((max(ts) if finish == "max" else sum(ts)) if ts else 0))
    return max(per_dev, default=0)


def solve_round(
    tasks: Sequence[Task],
    cluster: Cluster,
    objective: str,
    cfg: SolverConfig,
    batch: int = 0,
    rnd: int = 0,
    committed_s: Sequence[float] | None = None,
) -> tuple[np.ndarray, SolveReport]:
    """Solve one round; return the device per task (-1 = left for the next round) and a report.

    Args:
        tasks: the tasks still to place.
        cluster: the workers.
        objective: ``"makespan"`` (MemBatch) or ``"total"`` (baseline).
        cfg: solver settings, including the ``gpu_share`` and ``rounds`` options.
        batch: batch index (for the report).
        rnd: round index (for the report).
        committed_s: per device, the planned finish time of the work placed in earlier
            rounds [s]; used only when ``cfg.rounds == "load_aware"`` (None = idle devices).

    Long by design: the integer scaling, the CP-SAT model, its hint and the read-back of the
    solution share the variables ``x``/``u`` and the scaled arrays; the model is built in one place
    so its constraints and objective read together against the module docstring.
    """
    check_choice("objective", objective, OBJECTIVES)
    if objective == "makespan" and cfg.deferral == "best_time":
        raise ConfigError(
            "solver.deferral = 'best_time' is for the total-time objective; the makespan objective "
            "(MemBatch) prices an unplaced task with a large penalty; allowed: 'auto', 'penalty'"
        )
    tf, gf, mf, fits = task_arrays(tasks, cluster)
    n, d = tf.shape
    committed = np.zeros(d, dtype=np.int64)
    if committed_s is not None and cfg.rounds == "load_aware":
        committed = np.ceil(np.asarray(committed_s, dtype=float) - 1e-9).astype(np.int64)
        if committed.shape != (d,) or (committed < 0).any():
            raise ConfigError(f"committed_s: need {d} finish times >= 0 [s], got {list(committed_s)!r}")
    gpu_constraint = cfg.gpu_share == "enforce"
    t = np.ceil(tf - 1e-9).astype(np.int64)  # [s]
    g = np.ceil(gf * 10 - 1e-9).astype(np.int64)  # [0.1 %]
    m = np.ceil(mf * 1000 - 1e-9).astype(np.int64)  # [MB]
    mem_cap = np.array([math.floor(dev.mem_gb * 1000 + 1e-9) for dev in cluster.devices], dtype=np.int64)
    gpu_cap = np.array([math.floor(dev.gpu_cap * 10 + 1e-9) for dev in cluster.devices], dtype=np.int64)
    if not gpu_constraint:  # the hint must not enforce what the model does not
        gpu_cap = np.full_like(gpu_cap, np.iinfo(np.int32).max)
    tmax = np.where(fits, t, 0).max(axis=1)  # slowest allowed device per task
    c_ub = int(committed.max(initial=0)) + (int(tmax.max(initial=0)) if cfg.finish == "max" else int(tmax.sum()))

    mdl = cp_model.CpModel()
    x = {(i, j): mdl.NewBoolVar(f"x{i}_{j}") for i in range(n) for j in range(d) if fits[i, j]}
    u = [mdl.NewBoolVar(f"u{i}") for i in range(n)]
    cmax = mdl.NewIntVar(int(committed.max(initial=0)), c_ub, "C")  # C >= F_j on every device
    for i in range(n):
        mdl.Add(sum(x[i, j] for j in range(d) if fits[i, j]) + u[i] == 1)
    for j in range(d):
        on_j = [i for i in range(n) if fits[i, j]]
        if not on_j:
            continue
        mdl.Add(sum(int(m[i, j]) * x[i, j] for i in on_j) <= int(mem_cap[j]))
        if gpu_constraint:
            mdl.Add(sum(int(g[i, j]) * x[i, j] for i in on_j) <= int(gpu_cap[j]))
        if cfg.finish == "max":
            for i in on_j:
                mdl.Add(cmax >= int(committed[j]) + int(t[i, j]) * x[i, j])
        else:
            mdl.Add(cmax >= int(committed[j]) + sum(int(t[i, j]) * x[i, j] for i in on_j))
    total = sum(int(t[i, j]) * v for (i, j), v in x.items())
    if objective == "makespan":
        w = int(tmax.sum()) + 1
        p = w * (c_ub + 1)
        mdl.Minimize(p * sum(u) + w * cmax + total)
    elif cfg.deferral == "penalty":
        p = int(tmax.sum()) + 1
        mdl.Minimize(p * sum(u) + total)
    else:  # "best_time": a task left for later costs its time on its fastest device, plus 1 s;
        # ties (e.g. which of two sub-tasks waits) go to arrival order: a later task waits first
        tmin = np.where(fits, t, np.iinfo(np.int64).max).min(axis=1)
        k = n * (n + 1) // 2 + 1  # > the whole tie-break term
        mdl.Minimize(
            k * (sum((int(tmin[i]) + 1) * u[i] for i in range(n)) + total) + sum((n - i) * u[i] for i in range(n))
        )

    hint = _greedy(t, g, m, fits, mem_cap, gpu_cap)
    for (i, j), v in x.items():
        mdl.AddHint(v, int(hint[i] == j))
    for i in range(n):
        mdl.AddHint(u[i], int(hint[i] < 0))

    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_workers = int(cfg.workers)
    prm.random_seed = 0
    if cfg.deterministic:
        prm.max_deterministic_time = float(cfg.time_limit_s)
        prm.max_time_in_seconds = float(cfg.wall_cap_s)
    else:
        prm.max_time_in_seconds = float(cfg.time_limit_s)
    t0 = time.perf_counter()
    status = solver.Solve(mdl)
    wall = time.perf_counter() - t0
    name = solver.StatusName(status)

    fallback = False
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        assign = np.full(n, -1)
        for (i, j), v in x.items():
            if solver.Value(v):
                assign[i] = j
        obj, bound = float(solver.ObjectiveValue()), float(solver.BestObjectiveBound())
    else:
        assign, obj, bound = hint.copy(), float("nan"), float("nan")
        fallback = True
    if not (assign >= 0).any():  # never stall: every task fits some empty device
        assign, fallback = hint.copy(), True
    gap = (obj - bound) / max(1.0, abs(obj)) if not fallback else float("nan")
    rep = SolveReport(
        batch=batch,
        round=rnd,
        n_tasks=n,
        n_assigned=int((assign >= 0).sum()),
        status=name,
        objective=obj,
        bound=bound,
        gap=gap,
        round_makespan_s=float(_round_makespan(assign, t, cfg.finish, committed)),
        wall_s=wall,
        fallback=fallback,
    )
    return assign, rep


def ilp_schedule(
    tasks: Sequence[Task],
    cluster: Cluster,
    *,
    objective: str,
    cfg: SolverConfig | None = None,
    batching: bool = True,
    split: bool = True,
    split_threshold_gb: float | None = None,
    name: str = "ilp",
) -> Plan:
    """Batch (optional), split, then solve rounds per batch until all are placed.

    Args:
        tasks: in arrival order.
        cluster: the workers.
        objective: ``"makespan"`` (MemBatch) or ``"total"`` (baseline ILP).
        cfg: solver settings (finish model, ``gpu_share`` and ``rounds`` options).
        batching: memory-aware batching against the cluster's total memory.
        split: split tasks above the threshold (the shared task model; False for ablations).
        split_threshold_gb: threshold [GB]; None = the smallest device memory.
        name: plan name.
    """
    cfg = cfg or SolverConfig()
    thr = split_threshold(cluster, split, split_threshold_gb)
    t_start = time.perf_counter()
    batches = memory_batches(tasks, cluster.total_mem_gb) if batching else [list(tasks)]
    out_tasks: list[Task] = []
    dev: list[int] = []
    bidx: list[int] = []
    ridx: list[int] = []
    reports: list[SolveReport] = []
    rnd = 0
    # the plan so far on each device, with profile times: the committed finish F_j of load-aware rounds
    lines = [DeviceTimeline(dv.mem_gb, dv.gpu_cap) for dv in cluster.devices]
    for b, batch in enumerate(batches):
        work = split_tasks(batch, thr) if thr is not None else list(batch)
        check_placeable(work, cluster)
        remaining = work
        while remaining:
            committed = [ln.finish for ln in lines]
            assign, rep = solve_round(remaining, cluster, objective, cfg, batch=b, rnd=rnd, committed_s=committed)
            reports.append(rep)
            left = []
            tr, gr, mr, _ = task_arrays(remaining, cluster)
            for i, (task, j) in enumerate(zip(remaining, assign, strict=True)):
                if j >= 0:
                    lines[j].add(tr[i, j], mr[i, j], gr[i, j])  # as simulate() will run it, without noise
                    out_tasks.append(task)
                    dev.append(int(j))
                    bidx.append(b)
                    ridx.append(rnd)
                else:
                    left.append(task)
            remaining = left
            rnd += 1
    runtime = time.perf_counter() - t_start
    return Plan(
        name,
        tuple(out_tasks),
        tuple(dev),
        tuple(range(len(out_tasks))),
        tuple(bidx),
        tuple(ridx),
        tuple(reports),
        runtime,
    )


def membatch_schedule(
    tasks: Sequence[Task],
    cluster: Cluster,
    cfg: SolverConfig | None = None,
    split_threshold_gb: float | None = None,
    split: bool = True,
) -> Plan:
    """MemBatch ILP: memory-aware batching, splitting, per-batch makespan ILP rounds."""
    return ilp_schedule(
        tasks,
        cluster,
        objective="makespan",
        cfg=cfg,
        batching=True,
        split=split,
        split_threshold_gb=split_threshold_gb,
        name="membatch",
    )


def baseline_ilp_schedule(
    tasks: Sequence[Task],
    cluster: Cluster,
    cfg: SolverConfig | None = None,
    split_threshold_gb: float | None = None,
    split: bool = True,
) -> Plan:
    """Baseline ILP: splitting, then rounds minimising total computation time over the whole list.

    No batching. Memory and GPU share per device per round as in MemBatch (the study's
    formulation); ``cfg.gpu_share="ignore"`` drops the GPU-share sum (the project's earlier
    reading), so a round may stack more than a device's GPU on it.
    """
    return ilp_schedule(
        tasks,
        cluster,
        objective="total",
        cfg=cfg,
        batching=False,
        split=split,
        split_threshold_gb=split_threshold_gb,
        name="baseline_ilp",
    )
