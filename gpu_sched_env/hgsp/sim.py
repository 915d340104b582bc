"""HGSP list-scheduling simulator.

A schedule is built one task at a time: the next task is taken from a priority list, a
placement rule (or an agent) picks a GPU with enough memory, and the task starts at
``max(arrival, GPU available)`` and runs ``workload / speed`` without preemption. So every
schedule honours memory, arrival and no-overlap constraints by construction.

The *next task* is chosen release-aware: let ``t*`` be the earliest time any unscheduled
task could start (on any GPU that can hold it); among the tasks that have arrived by ``t*``
the one highest in the priority list goes next. For the arrival-order list this is exactly
the next task in arrival order (the first unscheduled task always arrives by ``t*``), so
FIFO and Greedy are the plain sequential list schedulers of the spec; for other lists
(SAGreedy's orderings) it keeps a task that has not arrived yet from reserving a GPU ahead
of tasks that are already waiting. ``serial=True`` gives the plain decoder instead: tasks
strictly in list order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_env.hgsp.model import Cluster, TaskSet


class Problem:
    """Static data of one instance, precomputed once and shared by every decode.

    What an HGSP policy is handed at ``reset(problem, rng)`` (HGSP is offline: the whole task
    set is known). Read-only: its arrays are not writeable and its rows are tuples.
    """

    def __init__(self, tasks: TaskSet, cluster: Cluster) -> None:
        self.tasks = tasks
        self.cluster = cluster
        self.n, self.m = tasks.n, cluster.m
        self.fit = tasks.memory[:, None] <= cluster.memory[None, :]  # [n, m]
        self.p = tasks.workload[:, None] / cluster.speed[None, :]  # [n, m] run time
        self.schedulable = self.fit.any(axis=1)
        self.skipped = np.flatnonzero(~self.schedulable)
        # arrival order, ties by task index; unschedulable tasks left out
        seq = np.lexsort((np.arange(self.n), tasks.arrival))
        self.arrival_order = seq[self.schedulable[seq]]
        # plain Python rows: the decode loop is scalar and lists beat NumPy for m <= ~16
        self.a = tuple(tasks.arrival.tolist())
        self.p_rows = tuple(tuple(r) for r in self.p.tolist())
        self.fit_rows = tuple(tuple(np.flatnonzero(r).tolist()) for r in self.fit)
        # tasks with the same set of feasible GPUs form a class (nested memory tiers)
        keys: dict[bytes, int] = {}
        cls = np.full(self.n, -1)
        for i in self.arrival_order:
            cls[i] = keys.setdefault(self.fit[i].tobytes(), len(keys))
        self.cls_gpus = tuple(tuple(np.flatnonzero(np.frombuffer(k, bool)).tolist()) for k in keys)
        self.cls_tasks = tuple(
            tuple(self.arrival_order[cls[self.arrival_order] == c].tolist()) for c in range(len(keys))
        )
        for arr in (self.fit, self.p, self.schedulable, self.skipped, self.arrival_order):
            arr.flags.writeable = False


@dataclass
class Schedule:
    """Result of a decode: GPU, start and end per task (-1 / NaN for skipped tasks)."""

    problem: Problem
    gpu: np.ndarray
    start: np.ndarray
    end: np.ndarray
    sequence: np.ndarray  # task indices in the order they were placed

    @property
    def scheduled(self) -> np.ndarray:
        """Boolean mask of tasks that got a GPU."""
        return self.gpu >= 0

    def to_frame(self) -> pd.DataFrame:
        """One row per task: attributes, GPU, start, end, tardiness, missed flag."""
        t = self.problem.tasks
        df = t.to_frame()
        names = np.array(self.problem.cluster.names + ("-",), dtype=object)
        df["gpu"] = self.gpu
        df["gpu_name"] = names[self.gpu]
        df["start"] = self.start
        df["end"] = self.end
        df["tardiness"] = np.maximum(0.0, self.end - t.deadline)
        df["missed"] = self.end > t.deadline
        df["skipped"] = self.gpu < 0
        return df


class ListScheduler:
    """Step-wise list scheduler: ``next_task()`` then ``place(task, gpu)`` until done."""

    def __init__(self, problem: Problem, order: np.ndarray | None = None, serial: bool = False) -> None:
        pr = self.problem = problem
        self.gpu = np.full(pr.n, -1)
        self.start = np.full(pr.n, np.nan)
        self.end = np.full(pr.n, np.nan)
        self.avail = [-np.inf] * pr.m  # time each GPU becomes free
        self.sequence: list[int] = []
        self._done = [False] * pr.n
        self._left = len(pr.arrival_order)
        if order is None:
            self._fixed = pr.arrival_order.tolist()
        else:
            order = np.asarray(order)
            if sorted(order.tolist()) != list(range(pr.n)):
                raise ValueError(f"order must be a permutation of 0..{pr.n - 1}")
            self._fixed = order[pr.schedulable[order]].tolist() if serial else None
        self._k = 0
        if self._fixed is None:  # release-aware decode needs ranks, pointers and a heap
            self._rank = np.empty(pr.n, int)
            self._rank[order] = np.arange(pr.n)
            self._rank = self._rank.tolist()
            self._cls_ptr = [0] * len(pr.cls_tasks)
            self._rel = 0
            self._heap: list[tuple[int, int]] = []
        self._pending: int | None = None

    @property
    def done(self) -> bool:
        """True when every schedulable task is placed."""
        return self._left == 0

    def next_task(self) -> int | None:
        """Index of the task to place next (the same until it is placed); None when done."""
        if self._pending is not None:
            return self._pending
        if self._left == 0:
            return None
        if self._fixed is not None:
            i = self._fixed[self._k]
        else:
            i = self._next_release_aware()
        self._pending = i
        return i

    def _next_release_aware(self) -> int:
        pr, a, avail, done = self.problem, self.problem.a, self.avail, self._done
        t_star = np.inf
        for c, tasks in enumerate(pr.cls_tasks):
            k = self._cls_ptr[c]
            while k < len(tasks) and done[tasks[k]]:
                k += 1
            self._cls_ptr[c] = k
            if k < len(tasks):
                free = min(avail[j] for j in pr.cls_gpus[c])
                ai = a[tasks[k]]
                t = ai if ai > free else free
                if t < t_star:
                    t_star = t
        seq, rank, heap = pr.arrival_order, self._rank, self._heap
        while self._rel < len(seq) and a[seq[self._rel]] <= t_star:
            i = int(seq[self._rel])
            heapq.heappush(heap, (rank[i], i))
            self._rel += 1
        return heapq.heappop(heap)[1]

    def place(self, i: int, j: int) -> float:
        """Place task ``i`` (must be ``next_task()``) on GPU ``j``; return its end time."""
        if i != self._pending:
            raise ValueError(f"task {i} is not the next task ({self._pending})")
        if not self.problem.fit[i, j]:
            raise ValueError(f"task {i} does not fit on GPU {j}")
        a = self.problem.a[i]
        s = self.avail[j] if self.avail[j] > a else a
        e = s + self.problem.p_rows[i][j]
        self.avail[j] = e
        self.gpu[i], self.start[i], self.end[i] = j, s, e
        self._done[i] = True
        self.sequence.append(i)
        self._left -= 1
        self._k += 1
        self._pending = None
        return e

    def result(self) -> Schedule:
        """The schedule so far (complete once ``done``)."""
        return Schedule(self.problem, self.gpu, self.start, self.end, np.array(self.sequence, int))


def earliest_start_gpu(a: float, avail: list[float], p_row: list[float], gpus: list[int]) -> int:
    """FIFO placement: GPU with the earliest start ``max(a, avail)``; ties -> lowest index."""
    best, best_s = -1, np.inf
    for j in gpus:
        s = avail[j] if avail[j] > a else a
        if s < best_s:
            best, best_s = j, s
    return best


def earliest_finish_gpu(a: float, avail: list[float], p_row: list[float], gpus: list[int]) -> int:
    """Greedy (EFT) placement: GPU minimising ``max(a, avail) + p``; ties -> lowest index."""
    best, best_f = -1, np.inf
    for j in gpus:
        f = (avail[j] if avail[j] > a else a) + p_row[j]
        if f < best_f:
            best, best_f = j, f
    return best


RULES: dict[str, Callable[[float, list[float], list[float], list[int]], int]] = {
    "fifo": earliest_start_gpu,
    "eft": earliest_finish_gpu,
}


# SAGreedy's decoder names -> ``serial`` flag of :func:`decode`: "list" = strictly in list
# order (the study's), "release" = release-aware (ours; see the module docstring)
DECODERS: dict[str, bool] = {"list": True, "release": False}


def decode(problem: Problem, order: np.ndarray | None = None, rule: str = "eft", serial: bool = False) -> Schedule:
    """Build the schedule for a priority list with a fixed placement rule (fast path)."""
    choose = RULES[rule]
    ls = ListScheduler(problem, order, serial)
    a, p_rows, fit_rows, avail = problem.a, problem.p_rows, problem.fit_rows, ls.avail
    while (i := ls.next_task()) is not None:
        ls.place(i, choose(a[i], avail, p_rows[i], fit_rows[i]))
    return ls.result()


def weighted_tardiness(problem: Problem, end: np.ndarray) -> np.ndarray:
    """Per-task w * max(0, c - d) (0 for skipped tasks)."""
    t = problem.tasks
    return np.nan_to_num(t.weight * np.maximum(0.0, end - t.deadline), nan=0.0)


@dataclass(frozen=True)
class Decision:
    """What a placement policy sees for one task: its data and the GPUs' state.

    ``p_row[j]`` is the task's run time on GPU ``j``; ``gpus`` are the GPUs with enough
    memory; ``avail[j]`` is when GPU ``j`` becomes free (-inf if never used). Read-only.
    """

    task: int
    arrival: float
    deadline: float
    weight: float
    memory: float
    p_row: tuple[float, ...]
    gpus: tuple[int, ...]
    avail: tuple[float, ...]


def decision(ls: ListScheduler, i: int) -> Decision:
    """The :class:`Decision` for task ``i`` in scheduler ``ls``."""
    pr, t = ls.problem, ls.problem.tasks
    return Decision(
        i,
        pr.a[i],
        float(t.deadline[i]),
        float(t.weight[i]),
        float(t.memory[i]),
        pr.p_rows[i],
        pr.fit_rows[i],
        tuple(ls.avail),
    )
