"""The source study's HGSP rules: FIFO, Greedy (earliest finish time) and SAGreedy.

They are the base classes of the strong rules in :mod:`.strong`, so they live in a module both the
package and :mod:`.strong` import (the package registers every rule by name).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gpu_sched_env.core.errors import check_choice, check_number
from gpu_sched_env.hgsp.sim import (
    DECODERS,
    Decision,
    Problem,
    decode,
    earliest_finish_gpu,
    earliest_start_gpu,
    weighted_tardiness,
)


class FIFO:
    """Tasks by arrival; the GPU with enough memory that can start the task earliest."""

    name = "fifo"
    # Declares that decide() is exactly the simulator's built-in "fifo" placement rule, so
    # hgsp.run may decode without Decision objects. A subclass that overrides decide() and
    # does not declare its own decode_rule gets None (see __init_subclass__).
    decode_rule: str | None = "fifo"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "decide" in cls.__dict__ and "decode_rule" not in cls.__dict__:
            cls.decode_rule = None

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        """Nothing to reset (deterministic)."""

    def order(self, problem: Problem) -> np.ndarray | None:
        """Arrival order."""
        return None

    def decide(self, d: Decision) -> int:
        """Earliest start ``max(a, avail_j)``; ties -> lowest GPU index."""
        return earliest_start_gpu(d.arrival, d.avail, d.p_row, d.gpus)


class Greedy(FIFO):
    """Tasks by arrival; the GPU that finishes the task earliest (EFT)."""

    name = "greedy"
    decode_rule = "eft"

    def decide(self, d: Decision) -> int:
        """Earliest finish ``max(a, avail_j) + L / v_j``; ties -> lowest GPU index."""
        return earliest_finish_gpu(d.arrival, d.avail, d.p_row, d.gpus)


class SAGreedy(Greedy):
    """Simulated annealing over task orderings with the EFT decoder (spec Part A).

    Starts from the Greedy (arrival) ordering. Each iteration builds the neighbour of the
    current ordering: with ``rho = clip((T - t_min) / (t0 - t_min), 0.1, 0.8)``, the
    ``floor(rho * |tardy|)`` tardy tasks with the largest weighted tardiness move to the front
    (largest first), the rest keep their order. A worse neighbour is accepted with
    probability ``exp(-delta / T)``; ``T`` is multiplied by ``alpha`` after each iteration;
    the search stops after ``iters`` iterations, when ``T < t_min`` or when nothing is tardy.
    The best ordering seen is kept.

    ``decoder`` turns an ordering into a schedule (see :mod:`gpu_sched_env.hgsp.sim`):
    ``"list"`` (default, the study's decoder) places the tasks strictly in list order, each on
    its earliest-finish GPU; ``"release"`` (ours) is release-aware: the next task is the
    highest-priority one among those that have arrived by the earliest time any task could
    start, so a late task moved to the front cannot reserve a GPU ahead of waiting ones.
    """

    name = "sagreedy"

    def __init__(
        self, iters: int = 100, t0: float = 1000.0, alpha: float = 0.95, t_min: float = 1.0, decoder: str = "list"
    ) -> None:
        self.iters = check_number("sagreedy.iters", iters, lo=0, integer=True)
        self.t0 = check_number("sagreedy.t0", t0, lo=0, lo_open=True)
        self.alpha = check_number("sagreedy.alpha", alpha, lo=0, hi=1, lo_open=True, hi_open=True)
        self.t_min = check_number("sagreedy.t_min", t_min, lo=0, hi=t0, hi_open=True)
        self.decoder = check_choice("sagreedy.decoder", decoder, DECODERS)
        self.serial = DECODERS[decoder]  # read by hgsp.run when it decodes the returned order
        self.rng = np.random.default_rng(0)
        self.trace: list[dict[str, float]] = []  # one row per iteration (for plots/tests)

    def reset(self, problem: Problem, rng: np.random.Generator) -> None:
        """Use ``rng`` (the run's policy stream) for the acceptance draws."""
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def order(self, problem: Problem) -> np.ndarray:
        """Run the annealing; return the best ordering found."""
        cur = np.concatenate([problem.arrival_order, problem.skipped])
        cur_wt_i = weighted_tardiness(problem, decode(problem, cur, "eft", self.serial).end)
        cur_wt = best_wt = float(cur_wt_i.sum())
        best = cur
        t = self.t0
        self.trace = []
        for k in range(self.iters):
            if t < self.t_min:
                break
            tardy = np.flatnonzero(cur_wt_i > 0)
            if tardy.size == 0:
                break
            rho = min(0.8, max(0.1, (t - self.t_min) / (self.t0 - self.t_min)))
            n_move = math.floor(rho * tardy.size)
            if n_move > 0:  # n_move == 0: the neighbour is the current ordering (delta 0)
                pos = np.empty(problem.n, int)
                pos[cur] = np.arange(problem.n)
                tardy = tardy[np.argsort(pos[tardy], kind="stable")]  # ties: current order
                moved = tardy[np.argsort(-cur_wt_i[tardy], kind="stable")[:n_move]]
                keep = np.ones(problem.n, bool)
                keep[moved] = False
                cand = np.concatenate([moved, cur[keep[cur]]])
                cand_wt_i = weighted_tardiness(problem, decode(problem, cand, "eft", self.serial).end)
                cand_wt = float(cand_wt_i.sum())
                delta = cand_wt - cur_wt
                if delta <= 0 or self.rng.random() < math.exp(-delta / t):
                    cur, cur_wt, cur_wt_i = cand, cand_wt, cand_wt_i
                    if cur_wt < best_wt:
                        best, best_wt = cur, cur_wt
            self.trace.append({"iter": k, "temperature": t, "current_wt": cur_wt, "best_wt": best_wt})
            t *= self.alpha
        return best
