"""Shared machinery of the CGRSP heuristics: the protocol, slot-choice rules, job orders.

Slot rules are ``rule(view, job, idle) -> slot``; those with knobs are built from them
(``slot_spt(weights, penalty)``). A policy is called at every decision point with the
simulator's :class:`~gpu_sched_env.cgrsp.view.SimView` (what a scheduler can know; no
``assign``, no realised draws) and returns an ordered list of ``(job, idle slot)`` assignments.
Jobs are picked in the policy's order and each is placed, in turn, on the best slot still idle for it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any

from gpu_sched_agents.heuristics.cgrsp.config import Knobs, NoKnobs
from gpu_sched_env.cgrsp.fleet import LOW
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.view import SimView

Assignment = tuple[int, int]


class CGRSPPolicy:
    """Base class: built for a world and knobs, ``reset`` once per run, ``decide`` at every decision point.

    Args:
        params: the simulator's parameters (the world).
        **knobs: fields of the policy's :attr:`Config`; unknown or invalid ones raise
            ConfigError naming the knob and what is allowed.
    """

    name = "base"
    Config: type[Knobs] = NoKnobs

    def __init__(self, params: CGRSPParams, **knobs: Any) -> None:
        self.params = params
        self.cfg = self.Config.build(self.name, **knobs)
        self.check(params)

    def check(self, params: CGRSPParams) -> None:
        """Knob checks that need the world (raise ConfigError); none by default."""

    def reset(self, view: SimView, rng: Any = None) -> None:
        """Start a run on ``view``; ``rng`` is the run's policy stream (used by Random)."""

    def decide(self, view: SimView) -> list[Assignment]:
        """Assignments for the current decision point."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# ---------------------------------------------------------------------------- slot rules
SlotRule = Callable[[SimView, int, list[int]], int]


def slot_spt(weights: tuple[float, float], sp: tuple[float, float, float]) -> SlotRule:
    """SPT score ww·W̄/W̄_min + wp·price/price_min + sp(stock), minima over the idle slots."""
    ww, wp = weights

    def rule(view: SimView, job: int, idle: list[int]) -> int:
        fl = view.fleet
        w_row = fl.wbar[view.complexity[job]]
        types = [fl.slot_type[s] for s in idle]
        w_min = min(w_row[g] for g in types)
        p_min = min(fl.price_per_s[g] for g in types) or 1.0
        stock = view.stock
        best, best_v = idle[0], float("inf")
        for s, g in zip(idle, types):
            v = ww * w_row[g] / w_min + wp * fl.price_per_s[g] / p_min + sp[stock[g]]
            if v < best_v:
                best, best_v = s, v
        return best

    return rule


def slot_edf(view: SimView, job: int, idle: list[int]) -> int:
    """Highest stock tier first, then the smallest W̄ for the job (ties: registration order)."""
    fl = view.fleet
    w_row = fl.wbar[view.complexity[job]]
    stock = view.stock
    return min(idle, key=lambda s: (stock[fl.slot_type[s]], w_row[fl.slot_type[s]], s))


def slot_lcf(f: tuple[float, float, float]) -> SlotRule:
    """Minimise price·W̄·f(stock) (default f = 1.0/1.05/1.15)."""

    def rule(view: SimView, job: int, idle: list[int]) -> int:
        fl = view.fleet
        w_row = fl.wbar[view.complexity[job]]
        stock = view.stock
        return min(
            idle,
            key=lambda s: (fl.price_per_s[fl.slot_type[s]] * w_row[fl.slot_type[s]] * f[stock[fl.slot_type[s]]], s),
        )

    return rule


def slot_balanced(weights: tuple[float, float], sp: tuple[float, float, float]) -> SlotRule:
    """Minimise ww·W̄/W̄_max(job, fleet) + wp·price/price_max(fleet) + sp(stock) (0.8, 0.2 by default)."""
    ww, wp = weights

    def rule(view: SimView, job: int, idle: list[int]) -> int:
        fl = view.fleet
        w_row = fl.wbar[view.complexity[job]]
        fleet_types = set(fl.slot_type)
        w_max = max(w_row[g] for g in fleet_types)
        p_max = max(fl.price_per_s[g] for g in fleet_types) or 1.0
        stock = view.stock
        return min(
            idle,
            key=lambda s: (
                ww * w_row[fl.slot_type[s]] / w_max
                + wp * fl.price_per_s[fl.slot_type[s]] / p_max
                + sp[stock[fl.slot_type[s]]],
                s,
            ),
        )

    return rule


def slot_delay(view: SimView, job: int, idle: list[int]) -> int:
    """The least expected delay + W̄: mean provisioning delay of the status now plus the job's W̄ [s].

    The job's expected completion, so a status is weighed in seconds against speed (ties: the
    cheaper type, then registration order). Used by the deferring rules (SPT's price
    term, +0.25 for an RTX 3090, outweighed the Medium penalty of 0.2 and sent jobs to a cheap
    Medium slot beside an idle High one).
    """
    fl = view.fleet
    w_row = fl.wbar[view.complexity[job]]
    stock, dm, st, price = view.stock, fl.delay_mean, fl.slot_type, fl.price_per_s
    return min(idle, key=lambda s: (dm[stock[st[s]]] + w_row[st[s]], price[st[s]], s))


def slot_first(view: SimView, job: int, idle: list[int]) -> int:
    """First idle slot in registration order."""
    return idle[0]


def slot_cadr(view: SimView, job: int, idle: list[int]) -> int:
    """CADR slot rule: the cheapest non-Low idle slot that finishes by the deadline.

    Candidates are the idle slots not in Low stock (all, if every one is Low); among those
    whose finish t + W̄ ≤ d, the cheapest (ties: faster); if none can, the fastest.
    """
    fl = view.fleet
    w_row = fl.wbar[view.complexity[job]]
    stock = view.stock
    cand = [s for s in idle if stock[fl.slot_type[s]] != LOW] or idle
    slack = view.deadline[job] - view.t
    feasible = [s for s in cand if w_row[fl.slot_type[s]] <= slack]
    if feasible:
        return min(feasible, key=lambda s: (fl.price_per_s[fl.slot_type[s]], w_row[fl.slot_type[s]], s))
    return min(cand, key=lambda s: (w_row[fl.slot_type[s]], s))


def place_in_order(
    view: SimView, jobs: Iterable[int], rule: SlotRule, idle: list[int] | None = None
) -> list[Assignment]:
    """Give each job, in order, the best still-idle slot under ``rule``.

    ``idle`` (default: every idle slot) is consumed: slots given out are removed from it,
    so a policy can place one tier with one rule and the next tier with another.
    """
    if idle is None:
        idle = view.idle_slots()
    if len(idle) == 1:  # the argmin over one slot is that slot: skip the scoring
        for j in jobs:
            return [(j, idle.pop())]
        return []
    out: list[Assignment] = []
    for j in jobs:
        if not idle:
            break
        s = rule(view, j, idle)
        idle.remove(s)
        out.append((j, s))
    return out


# ---------------------------------------------------------------------------- job orders
class HeapOrder:
    """Waiting jobs ordered by a static key, kept incrementally in a heap.

    New arrivals are pushed as they appear (``view.n_arrived`` grows; job ids are in submit
    order). Entries for jobs no longer waiting are dropped lazily. Jobs handed out by
    :meth:`take` are re-inserted at the next call if they were not dispatched, so a caller
    that dispatches only some of them (the env with a small window) loses nothing.
    """

    __slots__ = ("_key", "_heap", "_seen", "_held")

    def __init__(self, key: Callable[[int], tuple]) -> None:
        self._key = key
        self._heap: list[tuple] = []
        self._seen = 0
        self._held: list[tuple] = []

    def sync(self, view: SimView) -> None:
        """Add arrivals since the last call and re-insert undispatched handed-out jobs."""
        heap, key, waiting, n = self._heap, self._key, view.waiting, view.n_arrived
        for e in self._held:
            if e[-1] in waiting:
                heapq.heappush(heap, e)
        self._held = []
        for j in range(self._seen, n):
            heapq.heappush(heap, key(j) + (j,))
        self._seen = n

    def take(self, view: SimView, k: int, skip: Callable[[int], bool] | None = None) -> list[int]:
        """Up to ``k`` waiting jobs in key order; jobs for which ``skip`` is true are passed over."""
        heap, waiting = self._heap, view.waiting
        stash: list[tuple] = []
        out: list[int] = []
        while heap and len(out) < k:
            e = heapq.heappop(heap)
            j = e[-1]
            if j not in waiting:
                continue
            if skip is not None and skip(j):
                stash.append(e)
                continue
            self._held.append(e)
            out.append(j)
        for e in stash:
            heapq.heappush(heap, e)
        return out
