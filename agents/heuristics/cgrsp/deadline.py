"""Deadline-aware heuristics: SPT+Rescue, Adaptive, CADR and CADR-OO (spec §3, 7, 8, 10, 11).

SPT+Rescue and Adaptive use laxity against the *idle* slots, L = d − t − m_κ with m_κ the
smallest W̄ of complexity κ over the idle slots. Within one complexity class L is monotone
in the deadline, so every laxity tier of the class is a run of its deadline order: the
waiting jobs are kept in one sorted list per class (:class:`~.queues.Groups`) and a decision
reads each list from the front only as far as it needs (at most k jobs per tier for k idle
slots), O(k log Q) instead of classifying the whole queue. Adaptive's hopeless tier
(L < 0) can grow without bound, so jobs that are hopeless under every idle set from now on
(L < 0 even against the fleet's fastest type; t only grows) move to a list of their own.
CADR's tiers depend only on static keys (x = d − e, y = d − CR*·e) and move one way
(safe → at-risk → doomed), so it keeps them incrementally in heaps (O(log queue)).
"""

from __future__ import annotations

import heapq
from itertools import islice
from typing import Any

from gpu_sched_agents.heuristics.cgrsp.base import (
    Assignment,
    CGRSPPolicy,
    SlotRule,
    place_in_order,
    slot_cadr,
    slot_edf,
    slot_spt,
)
from gpu_sched_agents.heuristics.cgrsp.config import (
    AdaptiveKnobs,
    CADRKnobs,
    CADROOKnobs,
    RescueKnobs,
)
from gpu_sched_agents.heuristics.cgrsp.queues import Groups, Key
from gpu_sched_env.cgrsp.view import SimView

N_CLASSES = 3  # complexity low / medium / high


class _LaxityTiers(CGRSPPolicy):
    """Waiting jobs in one deadline-ordered list per complexity class, and the SPT slot rule."""

    def reset(self, view: SimView, rng: Any = None) -> None:
        fl = view.fleet
        self._est = [row[fl.nominal_type] for row in fl.wbar]  # [s] SPT estimate per class
        self._slot_spt = self.slot_rule()
        cx = view.complexity
        self._q = Groups(N_CLASSES + 1, view.n_jobs, cx.__getitem__)  # + Adaptive's hopeless list

    def slot_rule(self) -> SlotRule:
        """The slot rule of the SPT-ordered tiers, bound to this policy's knobs."""
        return slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)

    def _m(self, view: SimView, idle: list[int]) -> list[float]:
        """m_κ = min over idle slots of W̄(κ, g), per class."""
        fl = view.fleet
        return [min(fl.wbar[k][fl.slot_type[s]] for s in idle) for k in range(N_CLASSES)]


def _ids(keys: list, k: int) -> list[int]:
    """Job ids of the first ``k`` keys in sorted order."""
    keys.sort()
    return [e[-1] for e in keys[: max(k, 0)]]


class SPTRescue(_LaxityTiers):
    """7. SPT+Rescue: urgent tier (laxity < θ) by deadline first, the rest in SPT order; SPT slot."""

    name = "spt_rescue"
    Config = RescueKnobs

    def decide(self, view: SimView) -> list[Assignment]:
        idle = view.idle_slots()
        k, t, theta = len(idle), view.t, self.cfg.theta
        lists = self._q.sync(view)
        m = self._m(view, idle)
        urgent: list[Key] = []
        rest: list[tuple] = []  # (SPT estimate, d, submit, j)
        for c in range(N_CLASSES):
            mc, est = m[c], self._est[c]
            nu = nr = 0
            for key in lists[c]:  # deadline order: urgent jobs first, then the rest
                if (key[0] - t) - mc < theta:
                    urgent.append(key)
                    nu += 1
                    if nu == k:
                        break
                else:
                    rest.append((est, *key))
                    nr += 1
                    if nr == k:
                        break
        order = _ids(urgent, k)
        order += _ids(rest, k - len(order))
        return place_in_order(view, order, self._slot_spt)


class Adaptive(_LaxityTiers):
    """8. Adaptive: θ_eff = θ_pressure when the queue exceeds P, else θ.

    Tiers: critical (0 ≤ L < θ_eff) by deadline → fastest reliable slot (best stock tier,
    then fastest: the EDF rule); safe (L ≥ θ_eff) in SPT order → SPT slot score; hopeless
    (L < 0) by deadline, last → SPT slot score.
    """

    name = "adaptive"
    Config = AdaptiveKnobs

    def reset(self, view: SimView, rng: Any = None) -> None:
        super().reset(view, rng)
        self._m_fast = list(view.fleet.fastest_wbar)

    def decide(self, view: SimView) -> list[Assignment]:
        p = self.cfg
        idle = view.idle_slots()
        k, t = len(idle), view.t
        theta_eff = p.theta_pressure if len(view.waiting) > p.pressure_queue else p.theta
        lists = self._q.sync(view)
        for c in range(N_CLASSES):  # hopeless for good: L < 0 even on the fastest type
            lst, mf = lists[c], self._m_fast[c]
            while lst and (lst[0][0] - t) - mf < 0:
                self._q.move_head(c, N_CLASSES)
        m = self._m(view, idle)
        crit: list[Key] = []
        safe: list[tuple] = []  # (SPT estimate, d, submit, j)
        hopeless: list[Key] = []
        for c in range(N_CLASSES):
            mc, est = m[c], self._est[c]
            nc = ns = 0
            for key in lists[c]:  # deadline order: hopeless now, critical, then safe
                lax = (key[0] - t) - mc
                if lax < 0:
                    hopeless.append(key)
                elif lax < theta_eff:
                    crit.append(key)
                    nc += 1
                    if nc == k:
                        break
                else:
                    safe.append((est, *key))
                    ns += 1
                    if ns == k:
                        break
        crit_ids = _ids(crit, k)
        rest = _ids(safe, k - len(crit_ids))
        need = k - len(crit_ids) - len(rest)
        if need > 0:
            hopeless += islice(lists[N_CLASSES], need)
            rest += _ids(hopeless, need)
        out = place_in_order(view, crit_ids, slot_edf, idle)  # consumes the slots it gives out
        return out + place_in_order(view, rest, self._slot_spt, idle)


class CADR(CGRSPPolicy):
    """10. CADR: critical ratio CR = (d − t)/e_j with e_j = min W̄ over the fleet.

    Doomed (CR ≤ 1) last; at-risk (1 < CR ≤ CR*) by deadline; safe (CR > CR*) by e_j
    (ties: deadline, submit). Slot: CADR's cost-aware rule (:func:`slot_cadr`).
    """

    name = "cadr"
    Config: type[CADRKnobs] = CADRKnobs

    def slot_rule(self) -> SlotRule:
        """The slot rule, bound to this policy's knobs."""
        return slot_cadr

    def reset(self, view: SimView, rng: Any = None) -> None:
        self._rule = self.slot_rule()
        self._e = list(view.fleet.fastest_wbar)
        self._seen = 0
        self._y: list[tuple[float, int]] = []  # safe jobs keyed by y = d − CR*·e
        self._safe: list[tuple[float, float, float, int]] = []  # (e, d, submit, j)
        self._risk: list[tuple[float, float, int]] = []  # (d, submit, j)
        self._doomed: list[tuple[float, float, int]] = []  # (d, submit, j)
        self._tier: list[int] = [0] * view.n_jobs  # 0 safe, 1 at-risk, 2 doomed
        self._held: list[tuple[int, tuple]] = []

    def _sync(self, view: SimView, t: float) -> None:
        d, sub, cx, waiting = view.deadline, view.submit, view.complexity, view.waiting
        cr = self.cfg.cr_star
        for tier, e in self._held:  # handed out last time but not dispatched: put back
            if e[-1] in waiting:
                heapq.heappush((self._safe, self._risk, self._doomed)[tier], e)
        self._held = []
        n = view.n_arrived
        for j in range(self._seen, n):
            e = self._e[cx[j]]
            heapq.heappush(self._y, (d[j] - cr * e, j))
            heapq.heappush(self._safe, (e, d[j], sub[j], j))
        self._seen = n
        y = self._y
        while y and y[0][0] <= t:  # safe → at-risk (monotone in t)
            _, j = heapq.heappop(y)
            if j in waiting:
                self._tier[j] = 1
                heapq.heappush(self._risk, (d[j], sub[j], j))

    def _take(self, heap: list, tier: int, k: int, view: SimView, t: float, out: list[int]) -> None:
        waiting, d, cx = view.waiting, view.deadline, view.complexity
        while heap and len(out) < k:
            e = heapq.heappop(heap)
            j = e[-1]
            if j not in waiting or self._tier[j] != tier:
                continue  # dispatched, or moved to a later tier (stale entry)
            if tier == 1 and d[j] - t <= self._e[cx[j]]:  # at-risk → doomed (CR ≤ 1)
                self._tier[j] = 2
                heapq.heappush(self._doomed, e)
                continue
            self._held.append((tier, e))
            out.append(j)

    def order(self, view: SimView, k: int) -> list[int]:
        """The next ``k`` jobs in CADR order."""
        t = view.t  # read once: a view's clock is a property
        self._sync(view, t)
        out: list[int] = []
        self._take(self._risk, 1, k, view, t, out)
        self._take(self._safe, 0, k, view, t, out)
        self._take(self._doomed, 2, k, view, t, out)
        return out

    def decide(self, view: SimView) -> list[Assignment]:
        idle = view.idle_slots()
        return place_in_order(view, self.order(view, len(idle)), self._rule, idle)


class CADROO(CADR):
    """11. CADR-OO (ablation): CADR's ordering with SPT's fastest-slot placement."""

    name = "cadr_oo"
    Config = CADROOKnobs

    def slot_rule(self) -> SlotRule:
        return slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)
