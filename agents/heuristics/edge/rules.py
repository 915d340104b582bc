"""The list-scheduling rules of the edge cluster: HEFT, min-min, max-min, sufferage, MCT, LP rounding, best-of.

Each is a planner (``plan(problem, rng) -> Plan``; ``rng`` unused: all are deterministic). They split tasks above
the threshold (the shared task model) and place a (sub-)task only on a device it fits alone; co-running on a
device follows the simulator's rule. :class:`Line` replays the simulator's per-device FIFO timeline to the last
bit, so a rule's completion time of task i on device j is what
:func:`~gpu_sched_env.edge.sim.simulate` gives i when it is appended to j's queue now; a plan's dispatch order is
the order the rule assigned the tasks in. Citations: each class; an overview in
:mod:`gpu_sched_agents.heuristics.edge.strong`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence

import numpy as np

from gpu_sched_agents.heuristics.edge.energetic import energetic_lp
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.edge.model import Cluster, EdgeProblem, Task, check_placeable, task_arrays
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.sim import EPS
from gpu_sched_env.edge.workload import split_tasks, split_threshold

RANKS = ("mean", "median", "best", "worst")
LP_ORDERS = ("arrival", "longest")


class EdgePlanner:
    """Base of the strong planners: ``name`` and ``plan(problem, rng) -> Plan`` (the Planner protocol).

    The package's own base (``gpu_sched_agents.heuristics.edge.EdgePlanner``) is not imported: the package
    imports these modules to register them, so they import only its submodules (no import cycle).
    """

    name = "base"

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """Return a plan for every task of ``problem``; ``rng`` is the run's planner stream."""
        raise NotImplementedError


# ---- the simulator's per-device timeline, incremental ------------------------------------------------------
class Line:
    """One device's FIFO timeline, as :class:`gpu_sched_env.edge.sim.DeviceTimeline` computes it.

    Only the tasks still running at the last start are kept (starts never decrease, so an earlier task that
    ended by then can never matter again); the sums run over the same tasks in the same order as the
    simulator's, so start and end times are the simulator's to the last bit.
    """

    __slots__ = ("mem_cap", "gpu_cap", "t0", "ends", "mems", "gpus", "finish")

    def __init__(self, mem_cap: float, gpu_cap: float) -> None:
        self.mem_cap, self.gpu_cap = float(mem_cap), float(gpu_cap)
        self.t0 = 0.0  # the last start [s]
        self.ends: list[float] = []
        self.mems: list[float] = []
        self.gpus: list[float] = []
        self.finish = 0.0  # [s]

    def start(self, mem: float, gpu: float) -> float:
        """When a task fitting the device alone would start if appended now [s]."""
        t0 = self.t0
        for t in sorted({t0, *(e for e in self.ends if e > t0)}):
            used_m = sum(m for e, m in zip(self.ends, self.mems, strict=True) if e > t + EPS)
            used_g = sum(g for e, g in zip(self.ends, self.gpus, strict=True) if e > t + EPS)
            if used_m + mem <= self.mem_cap + EPS and used_g + gpu <= self.gpu_cap + EPS:
                return t
        raise AssertionError("unreachable: the device is empty after its last end")

    def add(self, duration: float, mem: float, gpu: float) -> float:
        """Append a task; return its end [s]."""
        s = self.start(mem, gpu)
        e = s + float(duration)
        keep = [k for k, x in enumerate(self.ends) if x > s]
        self.ends = [self.ends[k] for k in keep] + [e]
        self.mems = [self.mems[k] for k in keep] + [float(mem)]
        self.gpus = [self.gpus[k] for k in keep] + [float(gpu)]
        self.t0 = s
        self.finish = max(self.finish, e)
        return e


class Board:
    """The device timelines of a partial plan over (task, device) arrays ``t`` [s], ``g`` [%], ``m`` [GB]."""

    def __init__(self, t: np.ndarray, g: np.ndarray, m: np.ndarray, fits: np.ndarray, caps: Sequence[tuple]) -> None:
        self.t, self.g, self.m, self.fits = t, g, m, fits
        self.caps = list(caps)
        self.lines = [Line(mc, gc) for mc, gc in self.caps]

    def completion(self, i: int, j: int) -> float:
        """Task i's end if appended to device j now [s]; inf where it does not fit j."""
        if not self.fits[i, j]:
            return math.inf
        return self.lines[j].start(self.m[i, j], self.g[i, j]) + self.t[i, j]

    def add(self, i: int, j: int) -> float:
        """Append task i to device j; return its end [s]."""
        return self.lines[j].add(self.t[i, j], self.m[i, j], self.g[i, j])

    def device_finish(self, tasks_in_order: Iterable[int], j: int, cap: float = math.inf) -> float:
        """Finish time of device j running ``tasks_in_order`` alone [s]; inf as soon as a task ends after ``cap``."""
        ln = Line(*self.caps[j])
        for i in tasks_in_order:
            if ln.add(self.t[i, j], self.m[i, j], self.g[i, j]) > cap:
                return math.inf
        return ln.finish


def _work(problem: EdgeProblem, split: bool, threshold_gb: float | None) -> list[Task]:
    thr = split_threshold(problem.cluster, split, threshold_gb)
    work = split_tasks(problem.tasks, thr) if thr is not None else list(problem.tasks)
    check_placeable(work, problem.cluster)
    return work


def _caps(cluster: Cluster) -> list[tuple[float, float]]:
    return [(d.mem_gb, d.gpu_cap) for d in cluster.devices]


class _ListPlanner(EdgePlanner):
    """Base of the list rules: split, build the (task, device) arrays, let :meth:`_assign` fill a board."""

    def __init__(self, split_threshold_gb: float | None = None, split: bool = True) -> None:
        if split_threshold_gb is not None:
            check_number("split_threshold_gb", split_threshold_gb, lo=0.0, lo_open=True, section=self.name)
        self.split_threshold_gb = split_threshold_gb
        self.split = bool(split)

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """Plan every task of ``problem`` (deterministic: ``rng`` is not used)."""
        t0 = time.perf_counter()
        work = _work(problem, self.split, self.split_threshold_gb)
        t, g, m, fits = self._arrays(work, problem.cluster)
        order, dev = self._assign(Board(t, g, m, fits, self._board_caps(problem.cluster)), problem.cluster)
        device = [0] * len(work)
        for i, j in zip(order, dev, strict=True):
            device[i] = j
        n, runtime = len(work), time.perf_counter() - t0
        return Plan(self.name, tuple(work), tuple(device), tuple(order), (0,) * n, (0,) * n, (), runtime)

    def _arrays(self, work: Sequence[Task], cluster: Cluster) -> tuple[np.ndarray, ...]:
        return task_arrays(work, cluster)

    def _board_caps(self, cluster: Cluster) -> list[tuple[float, float]]:
        return _caps(cluster)

    def _assign(self, board: Board, cluster: Cluster) -> tuple[list[int], list[int]]:
        """(tasks in dispatch order, the device of each) on ``cluster``'s ``board``."""
        raise NotImplementedError


def _best_device(board: Board, i: int) -> tuple[float, int]:
    """(completion [s], device) of task i's earliest-finish device; ties: the shorter run time, then the index."""
    cts = [(board.completion(i, j), board.t[i, j], j) for j in range(board.t.shape[1])]
    ct, _, j = min(cts)
    return ct, j


class HEFT(_ListPlanner):
    """HEFT for independent tasks: decreasing rank, each task on its earliest-finish device.

    Topcuoglu, Hariri & Wu (2002), "Performance-effective and low-complexity task scheduling for heterogeneous
    computing", IEEE TPDS 13(3), §4.1: without precedence the upward rank is the task's mean cost; a device
    runs its queue FIFO, so there is no insertion into idle gaps. Ties: arrival order; devices: earliest finish,
    then the shorter run time, then the index.

    Args:
        rank: the task's cost aggregated over the devices it fits (Zhao & Sakellariou (2003), "An experimental
            investigation into the rank function of the heterogeneous earliest finish time scheduling
            algorithm", Euro-Par, LNCS 2790, §3): ``mean`` (HEFT's), ``median``, ``best``, ``worst``; default
            ``"mean"`` is tune()'s best (the four tie on the default profiles).
        split_threshold_gb: the shared task model's split threshold [GB] (None: the smallest device memory).
        split: whether tasks above it are split (the shared task model).
    """

    name = "heft"

    def __init__(self, rank: str = "mean", split_threshold_gb: float | None = None, split: bool = True) -> None:
        super().__init__(split_threshold_gb, split)
        self.rank = check_choice("rank", rank, RANKS, section="heft")

    def _assign(self, board: Board, cluster: Cluster) -> tuple[list[int], list[int]]:
        agg = {"mean": np.mean, "median": np.median, "best": np.min, "worst": np.max}[self.rank]
        rank = [float(agg(board.t[i][board.fits[i]])) for i in range(board.t.shape[0])]
        order = sorted(range(len(rank)), key=lambda i: (-rank[i], i))
        dev = []
        for i in order:
            _, j = _best_device(board, i)
            board.add(i, j)
            dev.append(j)
        return order, dev


class _BatchPlanner(_ListPlanner):
    """Min-min / max-min: the completion matrix of the unplaced tasks, one column updated per placement."""

    pick_max = False

    def _assign(self, board: Board, cluster: Cluster) -> tuple[list[int], list[int]]:
        n, d = board.t.shape
        ct = np.array([[board.completion(i, j) for j in range(d)] for i in range(n)])
        left = list(range(n))
        order, dev = [], []
        while left:
            best = [(float(ct[i].min()), i) for i in left]
            # min-min: smallest minimum completion; max-min: largest; ties: arrival order
            _, i = max(best, key=lambda x: (x[0], -x[1])) if self.pick_max else min(best)
            j = min(range(d), key=lambda k: (ct[i, k], board.t[i, k], k))
            board.add(i, j)
            order.append(i)
            dev.append(j)
            left.remove(i)
            for k in left:
                ct[k, j] = board.completion(k, j)
        return order, dev


class MinMin(_BatchPlanner):
    """Min-min: repeatedly the unplaced task with the smallest minimum completion time, on that device.

    Ibarra & Kim (1977), "Heuristic algorithms for scheduling independent tasks on nonidentical processors",
    JACM 24(2); Braun et al. (2001), "A comparison of eleven static heuristics for mapping a class of
    independent tasks onto heterogeneous distributed computing systems", JPDC 61(6), §2.4. Ties: arrival order.
    """

    name = "min_min"


class MaxMin(_BatchPlanner):
    """Max-min: repeatedly the unplaced task with the largest minimum completion time, on that device.

    Ibarra & Kim (1977), "Heuristic algorithms for scheduling independent tasks on nonidentical processors",
    JACM 24(2); Braun et al. (2001), "A comparison of eleven static heuristics ...", JPDC 61(6), §2.5. Ties:
    arrival order.
    """

    name = "max_min"
    pick_max = True


class Sufferage(_ListPlanner):
    """Sufferage: in each pass every device takes the task that would suffer most elsewhere.

    Maheswaran, Ali, Siegel, Hensgen & Freund (1999), "Dynamic mapping of a class of independent tasks onto
    heterogeneous computing systems", JPDC 59(2), §3 (batch-mode heuristics).

    A task bids for its earliest-finish device with its sufferage (second-best minus best completion time;
    a task that fits one device only suffers infinitely). Ties: the earlier bidder keeps the device.
    """

    name = "sufferage"

    def _assign(self, board: Board, cluster: Cluster) -> tuple[list[int], list[int]]:
        n, d = board.t.shape
        left = list(range(n))
        order, dev = [], []
        while left:
            holder: dict[int, tuple[float, int]] = {}
            for i in left:
                cts = sorted((board.completion(i, j), board.t[i, j], j) for j in range(d))
                j = cts[0][2]
                suff = (cts[1][0] - cts[0][0]) if len(cts) > 1 and math.isfinite(cts[1][0]) else math.inf
                if j not in holder or suff > holder[j][0]:
                    holder[j] = (suff, i)
            for j in sorted(holder):  # distinct devices: their completion times stay as computed
                i = holder[j][1]
                board.add(i, j)
                order.append(i)
                dev.append(j)
                left.remove(i)
        return order, dev


# ---- MCT: planner and env policy share the float32 numbers of the observation ------------------------------
def _obs_units(t: np.ndarray, g: np.ndarray, m: np.ndarray, cluster: Cluster) -> tuple[np.ndarray, ...]:
    """(time [h], GPU fraction, memory fraction) as the env's observation carries them (float32, widened)."""
    gpu_caps = np.array([dv.gpu_cap for dv in cluster.devices])
    if not np.all(gpu_caps == 100.0):
        raise ConfigError(f"mct: every device must offer 100 % GPU (the env's gpu_frac is share / 100), got {gpu_caps}")
    mem_caps = np.array([dv.mem_gb for dv in cluster.devices])
    f32 = np.float32
    return tuple(x.astype(f32).astype(float) for x in (t / 3600.0, g / 100.0, m / mem_caps))


def mct_pick(board: Board, i: int) -> int:
    """MCT's device for task i: earliest completion on ``board``; ties: shorter run time, then the index."""
    return _best_device(board, i)[1]


class MCT(_ListPlanner):
    """MCT: each task in arrival order on its earliest-completion device.

    Braun et al. (2001), "A comparison of eleven static heuristics for mapping a class of independent tasks onto
    heterogeneous distributed computing systems", JPDC 61(6), §2.3. It computes on the float32 numbers the
    ``EdgeBatch-v0`` observation carries (run time [h], memory and GPU as fractions of the device), so this
    planner and the env policy ``mct`` choose alike.
    """

    name = "mct"

    def _arrays(self, work: Sequence[Task], cluster: Cluster) -> tuple[np.ndarray, ...]:
        t, g, m, fits = task_arrays(work, cluster)
        th, gf, mf = _obs_units(t, g, m, cluster)
        return np.where(fits, th, 0.0), np.where(fits, gf, 0.0), np.where(fits, mf, 0.0), fits

    def _board_caps(self, cluster: Cluster) -> list[tuple[float, float]]:
        return [(1.0, 1.0)] * cluster.n  # fractions of the device's memory and GPU

    def _assign(self, board: Board, cluster: Cluster) -> tuple[list[int], list[int]]:
        order = list(range(board.t.shape[0]))
        dev = []
        for i in order:
            j = mct_pick(board, i)
            board.add(i, j)
            dev.append(j)
        return order, dev


# ---- rules of ours ---------------------------------------------------------------------------------------
def plan_makespan(plan: Plan, cluster: Cluster) -> float:
    """The plan's simulated makespan without noise [s] (the simulator's timelines, without its tables)."""
    t, g, m, fits = task_arrays(plan.tasks, cluster)
    board = Board(t, g, m, fits, _caps(cluster))
    return max((board.add(i, plan.device[i]) for i in plan.order), default=0.0)


class LPRound(_ListPlanner):
    """LP rounding (ours): each task on the device holding its largest share in the energetic LP's optimum.

    Lenstra, Shmoys & Tardos (1990), "Approximation algorithms for scheduling unrelated parallel machines",
    Math. Programming 46, §2 (round an LP relaxation of the assignment), with the LP of
    :mod:`~gpu_sched_agents.heuristics.edge.energetic` (it counts co-running by memory and GPU share, which the
    list rules' greedy choice does not look ahead at). Ties: the faster device, then the index. Dispatch order:
    ``order``: ``"arrival"`` or ``"longest"`` (longest run time on its device first); default ``"arrival"`` is
    tune()'s best.
    """

    name = "lp_round"

    def __init__(self, order: str = "arrival", split_threshold_gb: float | None = None, split: bool = True) -> None:
        super().__init__(split_threshold_gb, split)
        self.order = check_choice("order", order, LP_ORDERS, section="lp_round")

    def _assign(self, board: Board, cluster: Cluster) -> tuple[list[int], list[int]]:
        x = energetic_lp(board.t, board.g, board.m, board.fits, cluster).x
        n, d = board.t.shape
        dev = [
            min((j for j in range(d) if board.fits[i, j]), key=lambda j: (-x[i, j], board.t[i, j], j)) for i in range(n)
        ]
        if self.order == "arrival":
            order = list(range(n))
        else:
            order = sorted(range(n), key=lambda i: (-board.t[i, dev[i]], i))
        for i in order:
            board.add(i, dev[i])
        return order, [dev[i] for i in order]


LIST_RULES: dict[str, type[_ListPlanner]] = {c.name: c for c in (HEFT, MinMin, MaxMin, Sufferage, MCT, LPRound)}
DEFAULT_BEST_OF = tuple(LIST_RULES)


class BestRule(EdgePlanner):
    """Runs the named list rules and keeps the plan with the smallest makespan (ties: the first named).

    Ours: Braun et al. (2001) §2.6's Duplex (the better of min-min and max-min) over any set of the list rules.

    Args:
        rules: names from ``heft``, ``min_min``, ``max_min``, ``sufferage``, ``mct``, ``lp_round`` (default:
            all six, each with its default knobs).
        split_threshold_gb: the shared task model's split threshold [GB], passed to every rule.
        split: whether tasks above it are split, passed to every rule.
    """

    name = "best_rule"

    def __init__(
        self, rules: Sequence[str] = DEFAULT_BEST_OF, split_threshold_gb: float | None = None, split: bool = True
    ) -> None:
        if isinstance(rules, str) or not rules:
            raise ConfigError(f"best_rule.rules = {rules!r}: give a non-empty list of {', '.join(LIST_RULES)}")
        self.rules = tuple(check_choice("rules", r, LIST_RULES, section="best_rule") for r in rules)
        self.members = [LIST_RULES[r](split_threshold_gb=split_threshold_gb, split=split) for r in self.rules]

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """The best member's plan, renamed ``best_rule`` (its runtime: all members together)."""
        t0 = time.perf_counter()
        plans = [p.plan(problem) for p in self.members]
        spans = [plan_makespan(p, problem.cluster) for p in plans]
        b = plans[int(np.argmin(spans))]
        return Plan(self.name, b.tasks, b.device, b.order, b.batch, b.round, (), time.perf_counter() - t0)


__all__ = [
    "LIST_RULES",
    "LP_ORDERS",
    "MCT",
    "RANKS",
    "HEFT",
    "BestRule",
    "Board",
    "LPRound",
    "Line",
    "MaxMin",
    "MinMin",
    "Sufferage",
    "mct_pick",
    "plan_makespan",
]
