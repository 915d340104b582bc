"""Placement sequences for HGSP: a dispatching loop for time-dependent priorities, and a descent.

A *sequence* is decoded in list order: each task goes, in turn, on the GPU its placement rule picks
(``hgsp.sim.RULES``: ``"fifo"`` = earliest start, ``"eft"`` = earliest finish; ties: lowest GPU
index) and starts at ``max(arrival, GPU free)``. That is the list-order decoder of
:mod:`gpu_sched_env.hgsp.sim` (``serial=True``), so every sequence made here replays there exactly.

:func:`dispatch` builds a sequence from a priority index: at each step ``t*`` is the earliest time
any unplaced task could start, the released tasks are those that have arrived by ``t*``, and the
one with the highest index at ``t = t*`` (ties: lowest task index) is placed next. For a static
index this is the simulator's release-aware decoder (``serial=False``) on the index's ordering.

:func:`descend` improves a sequence. A move takes a tardy task at position ``q`` and inserts it at
``q - o`` for ``o`` in :data:`OFFSETS` (the insert neighbourhood of Crauwels, Potts and Van
Wassenhove (1998), "Local search heuristics for the single machine total weighted tardiness
scheduling problem", *INFORMS Journal on Computing* 10(3):341-350, restricted to moving tardy tasks
earlier). The tardy tasks are tried by decreasing weighted tardiness; a task's best improving move
is taken and the scan restarts. A move is evaluated exactly and locally: decoding restarts at
``q - o`` from the GPUs' free times stored for that position and stops as soon as, past ``q``, the
free times equal the stored ones (the same tasks are placed and the GPUs are in the same state, so
the rest of the schedule is unchanged), or once its partial cost exceeds the whole remaining cost.
A task whose moves did not improve is skipped until an accepted move changes the sequence near it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.hgsp.sim import RULES, Problem

# placement knob -> the simulator's built-in rule (hgsp.sim.RULES) that places a dispatched task
PLACEMENTS = {"est": "fifo", "eft": "eft"}
OFFSETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)  # positions a tardy task is moved ahead by
_EPS = 1e-9  # an improvement must exceed this (relative to the weighted tardiness) to count


class _Pool:
    """The released, unscheduled tasks as parallel arrays (removal swaps the last entry in)."""

    def __init__(self, problem: Problem) -> None:
        t = problem.tasks
        n = problem.n
        self.p_all = np.where(problem.fit, problem.p, np.inf).min(axis=1)  # [time] fastest GPU that fits
        self.idx = np.empty(n, np.int64)
        self.w = np.empty(n)
        self.p = np.empty(n)
        self.d = np.empty(n)
        self.q = 0
        self._w, self._d = t.weight, t.deadline

    def add(self, i: int) -> None:
        """Release task ``i``."""
        q = self.q
        self.idx[q], self.w[q], self.p[q], self.d[q] = i, self._w[i], self.p_all[i], self._d[i]
        self.q = q + 1

    def take(self, k: int) -> int:
        """Remove the entry at position ``k``; return its task."""
        i = int(self.idx[k])
        q = self.q = self.q - 1
        self.idx[k], self.w[k], self.p[k], self.d[k] = self.idx[q], self.w[q], self.p[q], self.d[q]
        return i


def dispatch(problem: Problem, index: Callable[..., np.ndarray], placement: str = "est") -> np.ndarray:
    """The dispatch sequence of ``index(t, w, p, d) -> priorities`` (higher first; module docstring).

    ``w, p, d`` are the released tasks' weights, run times on their fastest GPU and deadlines
    (read-only views); ties go to the lowest task index. ``placement``: ``"est"`` puts the task on
    the GPU where it starts earliest, ``"eft"`` where it finishes earliest.
    """
    place = RULES[PLACEMENTS[check_choice("placement", placement, PLACEMENTS)]]
    pr = problem
    a, p_rows, fit_rows = pr.a, pr.p_rows, pr.fit_rows
    seq = pr.arrival_order.tolist()
    avail = [-math.inf] * pr.m
    done = [False] * pr.n
    cls_tasks, cls_gpus = pr.cls_tasks, pr.cls_gpus
    ptr = [0] * len(cls_tasks)
    pool = _Pool(pr)
    out: list[int] = []
    rel = 0
    for _ in range(len(seq)):
        t_star = math.inf
        for c, tasks in enumerate(cls_tasks):
            k = ptr[c]
            while k < len(tasks) and done[tasks[k]]:
                k += 1
            ptr[c] = k
            if k < len(tasks):
                free = min(avail[j] for j in cls_gpus[c])
                ai = a[tasks[k]]
                t = ai if ai > free else free
                if t < t_star:
                    t_star = t
        while rel < len(seq) and a[seq[rel]] <= t_star:
            pool.add(seq[rel])
            rel += 1
        q = pool.q
        if q == 1:
            k = 0
        else:
            v = index(t_star, pool.w[:q], pool.p[:q], pool.d[:q])
            top = np.flatnonzero(v == v.max())
            k = int(top[0]) if top.size == 1 else int(top[np.argmin(pool.idx[top])])
        i = pool.take(k)
        j = place(a[i], avail, p_rows[i], fit_rows[i])
        s = avail[j] if avail[j] > a[i] else a[i]
        avail[j] = s + p_rows[i][j]
        done[i] = True
        out.append(i)
    return np.array(out, np.int64)


def descend(problem: Problem, sequence: Sequence[int], rule: str, work: int) -> tuple[list[int], int]:
    """Improve ``sequence`` (the schedulable tasks, each once) by moves that decode at most ``work`` tasks.

    ``work`` caps the task placements all move evaluations decode together (a move's cost is the
    stretch it re-decodes), so the time is bounded whatever the load. Returns the improved sequence
    and the placements used. Deterministic.
    """
    place = RULES[rule]
    a, p_rows, fit_rows = problem.a, problem.p_rows, problem.fit_rows
    w, d = problem.tasks.weight.tolist(), problem.tasks.deadline.tolist()
    seq = [int(i) for i in sequence]
    n, m = len(seq), problem.m

    def run(first: int, av: list[float], tasks: Iterable[int], stop_after: int, ref, cap: float):
        """Decode ``tasks`` from position ``first``; stop at a state equal to ``ref`` past ``stop_after``.

        Returns (states, costs, total cost, stop position), or None once the total exceeds ``cap``.
        """
        states, costs, tot = [], [], 0.0
        r = first
        for t in tasks:
            if r > stop_after and ref is not None and tuple(av) == ref[r]:
                break
            states.append(tuple(av))
            j = place(a[t], av, p_rows[t], fit_rows[t])
            s = av[j] if av[j] > a[t] else a[t]
            e = av[j] = s + p_rows[t][j]
            c = w[t] * (e - d[t])
            c = c if c > 0.0 else 0.0
            costs.append(c)
            tot += c
            r += 1
            if tot > cap:
                return None, r - first
        return (states, costs, tot, r), r - first

    (states, cost, _, _), _ = run(0, [-math.inf] * m, seq, n, None, math.inf)
    states.append(None)  # position n: nothing left to place
    cum = np.concatenate([[0.0], np.cumsum(cost)])
    used = 0
    clean: set[int] = set()  # tasks whose moves were tried without gain since the last nearby change
    while used < work:
        cost_arr = np.asarray(cost)
        tardy = np.flatnonzero(cost_arr > 0)
        tardy = tardy[np.argsort(-cost_arr[tardy], kind="stable")]
        accepted = None
        for q in tardy.tolist():
            i = seq[q]
            if i in clean:
                continue
            best = -_EPS * max(1.0, float(cum[n]))
            for off in OFFSETS:
                p = q - off
                if p < 0 or used >= work:
                    break
                out, k = run(p, list(states[p]), _moved(seq, i, p, q), q, states, float(cum[n] - cum[p]))
                used += k
                if out is None:
                    continue
                st, co, tot, r = out
                delta = tot - float(cum[r] - cum[p])
                if delta < best:
                    best, accepted = delta, (q, p, r, st, co)
            if accepted is not None or used >= work:
                break
            clean.add(i)
        if accepted is None:
            break
        q, p, r, st, co = accepted
        seq[p : q + 1] = [seq[q], *seq[p:q]]
        states[p:r] = st
        cost[p:r] = co
        cum = np.concatenate([[0.0], np.cumsum(cost)])
        clean.difference_update(seq[max(0, p - OFFSETS[-1]) : min(n, r + OFFSETS[-1])])
    return seq, used


def _moved(seq: list[int], i: int, p: int, q: int) -> Iterator[int]:
    """``seq`` from position ``p`` on with task ``i`` (at ``q``) inserted at ``p``, without copying."""
    yield i
    for k in range(p, q):
        yield seq[k]
    for k in range(q + 1, len(seq)):
        yield seq[k]
