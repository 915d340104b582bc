"""Local search for the edge cluster (ours), seeded by a list rule's plan."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from gpu_sched_agents.heuristics.edge.rules import LIST_RULES, BestRule, Board, EdgePlanner, _caps
from gpu_sched_env.core.errors import check_choice, check_number
from gpu_sched_env.edge.model import EdgeProblem, task_arrays
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.sim import EPS

NEIGHBOURHOODS = ("move", "move_swap", "move_swap_shift")


def _lex_key(finish: Sequence[float]) -> tuple[float, ...]:
    return tuple(sorted(finish, reverse=True))


class LocalSearch(EdgePlanner):
    """Descent from a rule's plan over move, swap and shift neighbourhoods (ours).

    Fanjul-Peyro & Ruiz (2010), "Iterated greedy local search methods for unrelated parallel machine scheduling",
    EJOR 207(1), §3 (insertion and interchange neighbourhoods), for FIFO devices that co-run tasks. The state is
    one FIFO queue per device. Moves, tried from the latest-finishing device down: *move* a task to another
    device (into the place its dispatch priority gives it); *swap* a task of a last-finishing device with a task
    of another device that runs shorter there; *shift* a task of a last-finishing device to another place in its
    queue. The first move that lowers the devices' finish times read from the largest down (lexicographically)
    is taken; the search stops at a local optimum or after ``max_moves`` moves.

    Args:
        start: the rule whose plan seeds the search (``best_rule`` or a list rule, default knobs); default
            ``"lp_round"`` is tune()'s best.
        neighbourhood: ``"move"``, ``"move_swap"`` or ``"move_swap_shift"``; default ``"move_swap_shift"`` is
            tune()'s best.
        max_moves: accepted moves at most (>= 0; 0 returns the start plan).
        split_threshold_gb: the shared task model's split threshold [GB].
        split: whether tasks above it are split (the shared task model).
    """

    name = "local_search"

    def __init__(
        self,
        start: str = "lp_round",
        neighbourhood: str = "move_swap_shift",
        max_moves: int = 200,
        split_threshold_gb: float | None = None,
        split: bool = True,
    ) -> None:
        self.start = check_choice("start", start, ("best_rule", *LIST_RULES), section="local_search")
        self.neighbourhood = check_choice("neighbourhood", neighbourhood, NEIGHBOURHOODS, section="local_search")
        self.max_moves = int(check_number("max_moves", max_moves, lo=0, integer=True, section="local_search"))
        cls = BestRule if start == "best_rule" else LIST_RULES[start]
        self.seed_rule = cls(split_threshold_gb=split_threshold_gb, split=split)

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """Improve the start rule's plan until no move of the neighbourhood helps (or ``max_moves``)."""
        t_start = time.perf_counter()
        first = self.seed_rule.plan(problem)
        t, g, m, fits = task_arrays(first.tasks, problem.cluster)
        board = Board(t, g, m, fits, _caps(problem.cluster))
        d = problem.cluster.n
        prio = {i: float(k) for k, i in enumerate(first.order)}
        queues = [[i for i in first.order if first.device[i] == j] for j in range(d)]
        finish = [board.device_finish(q, j) for j, q in enumerate(queues)]
        for _ in range(self.max_moves):
            step = self._improve(board, queues, finish, prio)
            if step is None:
                break
            for j, q in step.items():
                queues[j] = q
                finish[j] = board.device_finish(q, j)
        dev = [0] * len(first.tasks)
        for j, q in enumerate(queues):
            for i in q:
                dev[i] = j
        order = tuple(sorted(range(len(dev)), key=lambda i: (queues[dev[i]].index(i), dev[i])))
        runtime = time.perf_counter() - t_start
        return Plan(self.name, first.tasks, tuple(dev), order, first.batch, first.round, (), runtime)

    def _improve(
        self, board: Board, queues: list[list[int]], finish: list[float], prio: dict[int, float]
    ) -> dict[int, list[int]] | None:
        """The first improving move as {device: new queue} (``prio`` updated for a shift), or None."""
        key = _lex_key(finish)
        top = max(finish)
        d = len(queues)

        def insert(q: list[int], i: int) -> list[int]:
            return sorted([*q, i], key=prio.__getitem__)

        def better(changed: dict[int, list[int]]) -> bool:
            f = list(finish)
            for j, q in changed.items():
                f[j] = board.device_finish(q, j, cap=top + EPS)  # a device ending after the makespan: worse
                if f[j] == math.inf:
                    return False
            return _lex_key(f) < key

        by_finish = sorted(range(d), key=lambda j: (-finish[j], j))
        for c in by_finish:
            for i in sorted(queues[c], key=lambda x: (-board.t[x, c], x)):
                rest = [x for x in queues[c] if x != i]
                for k in by_finish:
                    if k != c and board.fits[i, k]:
                        cand = {c: rest, k: insert(queues[k], i)}
                        if better(cand):
                            return cand
        if self.neighbourhood == "move":
            return None
        for c in (j for j in by_finish if finish[j] >= top - EPS):
            for i in sorted(queues[c], key=lambda x: (-board.t[x, c], x)):
                rest = [x for x in queues[c] if x != i]
                for k in by_finish:
                    if k == c or not board.fits[i, k]:
                        continue
                    for i2 in queues[k]:
                        if board.fits[i2, c] and board.t[i2, c] < board.t[i, c]:
                            cand = {c: insert(rest, i2), k: insert([x for x in queues[k] if x != i2], i)}
                            if better(cand):
                                return cand
        if self.neighbourhood == "move_swap":
            return None
        for c in (j for j in by_finish if finish[j] >= top - EPS):
            q = queues[c]
            for a, i in enumerate(q):
                rest = q[:a] + q[a + 1 :]
                for b in range(len(q)):
                    if b == a:
                        continue
                    cand_q = rest[:b] + [i] + rest[b:]
                    if better({c: cand_q}):
                        ps = [prio[x] for x in cand_q]  # new priorities: the queue's old ones, in its new order
                        for x, p in zip(cand_q, sorted(ps), strict=True):
                            prio[x] = p
                        return {c: cand_q}
        return None


__all__ = ["NEIGHBOURHOODS", "LocalSearch"]
