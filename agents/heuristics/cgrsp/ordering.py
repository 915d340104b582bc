"""Static-order heuristics: FIFO, SPT, EDF, LCF, Balanced, Random (spec §3, 1–6)."""

from __future__ import annotations

from typing import Any

from gpu_sched_agents.heuristics.cgrsp.base import (
    Assignment,
    CGRSPPolicy,
    HeapOrder,
    SlotRule,
    place_in_order,
    slot_balanced,
    slot_edf,
    slot_first,
    slot_lcf,
    slot_spt,
)
from gpu_sched_agents.heuristics.cgrsp.config import BalancedKnobs, LCFKnobs, SPTSlotKnobs
from gpu_sched_agents.heuristics.cgrsp.queues import WaitingIds
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.rng import ChunkedUniforms


class _KeyOrder(CGRSPPolicy):
    """Jobs by a static key kept in a heap (O(log queue) per decision); placed by :meth:`slot_rule`."""

    def slot_rule(self) -> SlotRule:
        """The slot rule, bound to this policy's knobs."""
        return slot_first

    def key(self, view: SimView, j: int) -> tuple:
        return (view.submit[j],)

    def reset(self, view: SimView, rng: Any = None) -> None:
        self.rule = self.slot_rule()
        self._order = HeapOrder(lambda j: self.key(view, j))

    def decide(self, view: SimView) -> list[Assignment]:
        self._order.sync(view)
        idle = view.idle_slots()
        return place_in_order(view, self._order.take(view, len(idle)), self.rule, idle)


class FIFO(_KeyOrder):
    """1. FIFO: jobs by submit time; first idle slot in registration order."""

    name = "fifo"


class LCF(_KeyOrder):
    """4. Least-cost-first: jobs by submit time; slot minimising price·W̄·f(stock)."""

    name = "lcf"
    Config = LCFKnobs

    def slot_rule(self) -> SlotRule:
        return slot_lcf(self.cfg.lcf_stock_factor)


class Balanced(_KeyOrder):
    """5. Balanced: jobs by submit time; slot by 0.8·speed + 0.2·price + stock penalty."""

    name = "balanced"
    Config = BalancedKnobs

    def slot_rule(self) -> SlotRule:
        return slot_balanced(self.cfg.balanced_weights, self.cfg.stock_penalty)


class SPT(_KeyOrder):
    """2. SPT: nominal estimate W̄(κ, RTX 3090), ties by deadline then submit; SPT slot score."""

    name = "spt"
    Config = SPTSlotKnobs

    def slot_rule(self) -> SlotRule:
        return slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)

    def key(self, view: SimView, j: int) -> tuple:
        return (view.fleet.wbar[view.complexity[j]][view.fleet.nominal_type], view.deadline[j], view.submit[j])


class EDF(_KeyOrder):
    """3. EDF: jobs by deadline (ties: submit); best stock tier, then fastest slot."""

    name = "edf"

    def slot_rule(self) -> SlotRule:
        return slot_edf

    def key(self, view: SimView, j: int) -> tuple:
        return (view.deadline[j], view.submit[j])


class Random(CGRSPPolicy):
    """6. Random: a uniformly random waiting job to a uniformly random idle slot, repeatedly.

    The waiting ids are kept in submit order in a sorted list, so drawing the i-th waiting
    job costs O(log queue) instead of copying the queue at every decision.
    """

    name = "random"

    def reset(self, view: SimView, rng: Any = None) -> None:
        if rng is None:
            raise ValueError("Random policy needs the run's policy stream (rng)")
        self._u = ChunkedUniforms(rng)
        self._waiting = WaitingIds()

    def decide(self, view: SimView) -> list[Assignment]:
        jobs = self._waiting.sync(view)
        idle = view.idle_slots()
        out: list[Assignment] = []
        n = len(jobs)
        while n and idle:
            a, b = self._u.take(2)
            i = int(a * n)
            # the last draw leaves the list alone; earlier ones take their job out of it
            j = jobs[i] if n == 1 or len(idle) == 1 else jobs.pop(i)
            out.append((j, idle.pop(int(b * len(idle)))))
            n -= 1
        if len(out) > 1:
            jobs.update(j for j, _ in out[:-1])  # still waiting until dispatched (the log removes them)
        return out
