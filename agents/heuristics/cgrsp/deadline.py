"""Deadline-aware heuristics: SPT+Rescue, Adaptive, CADR and CADR-OO (spec §3, 7, 8, 10, 11).

SPT+Rescue and Adaptive use laxity against the *idle* slots, which changes with the idle set,
so they classify the waiting queue with NumPy at each decision (O(queue) per decision).
CADR's tiers depend only on static keys (x = d − e, y = d − CR*·e) and move one way
(safe → at-risk → doomed), so it keeps them incrementally in heaps (O(log queue)).
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from agents.heuristics.cgrsp.base import (
    Assignment,
    CGRSPPolicy,
    SlotRule,
    place_in_order,
    slot_cadr,
    slot_edf,
    slot_spt,
)
from agents.heuristics.cgrsp.config import AdaptiveKnobs, CADRKnobs, CADROOKnobs, RescueKnobs
from gpu_sched_env.cgrsp.sim import Simulator


class _QueueArrays(CGRSPPolicy):
    """Vectorised view of the waiting queue (deadline, complexity, submit, SPT estimate)."""

    def reset(self, sim: Simulator, rng: Any = None) -> None:
        wl = sim.workload
        self._d = wl.deadline
        self._cx = wl.complexity
        self._sub = wl.submit
        nominal = np.array([row[sim.fleet.nominal_type] for row in sim.fleet.wbar])
        self._est = nominal[wl.complexity]

    def _waiting(self, sim: Simulator) -> np.ndarray:
        return np.fromiter(sim.waiting, dtype=np.int64, count=len(sim.waiting))

    def _laxity(self, sim: Simulator, ids: np.ndarray, idle: list[int]) -> np.ndarray:
        """L = d − t − min over idle slots of W̄(κ, g)."""
        fl = sim.fleet
        m = np.array([min(fl.wbar[k][fl.slot_type[s]] for s in idle) for k in range(3)])
        return self._d[ids] - sim.t - m[self._cx[ids]]

    def _by_deadline(self, ids: np.ndarray, k: int) -> list[int]:
        if ids.size == 0 or k <= 0:
            return []
        if ids.size > 4 * k:  # only the first k matter: partial sort first
            part = np.argpartition(self._d[ids], k - 1)[:k]
            ids = ids[part]
        order = np.lexsort((self._sub[ids], self._d[ids]))
        return ids[order[:k]].tolist()

    def _by_spt(self, ids: np.ndarray, k: int) -> list[int]:
        if ids.size == 0 or k <= 0:
            return []
        order = np.lexsort((self._sub[ids], self._d[ids], self._est[ids]))
        return ids[order[:k]].tolist()


class SPTRescue(_QueueArrays):
    """7. SPT+Rescue: urgent tier (laxity < θ) by deadline first, the rest in SPT order; SPT slot."""

    name = "spt_rescue"
    Config = RescueKnobs

    def reset(self, sim: Simulator, rng: Any = None) -> None:
        super().reset(sim, rng)
        self._slot_spt = slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)

    def decide(self, sim: Simulator) -> list[Assignment]:
        idle = sim.idle_slots()
        k = len(idle)
        ids = self._waiting(sim)
        urgent = self._laxity(sim, ids, idle) < self.cfg.theta
        order = self._by_deadline(ids[urgent], k)
        order += self._by_spt(ids[~urgent], k - len(order))
        return place_in_order(sim, order, self._slot_spt)


class Adaptive(_QueueArrays):
    """8. Adaptive: θ_eff = θ_pressure when the queue exceeds P, else θ.

    Tiers: critical (0 ≤ L < θ_eff) by deadline → fastest reliable slot (best stock tier,
    then fastest: the EDF rule); safe (L ≥ θ_eff) in SPT order → SPT slot score; hopeless
    (L < 0) by deadline, last → SPT slot score.
    """

    name = "adaptive"
    Config = AdaptiveKnobs

    def reset(self, sim: Simulator, rng: Any = None) -> None:
        super().reset(sim, rng)
        self._slot_spt = slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)

    def decide(self, sim: Simulator) -> list[Assignment]:
        p = self.cfg
        idle = sim.idle_slots()
        k = len(idle)
        ids = self._waiting(sim)
        theta_eff = p.theta_pressure if ids.size > p.pressure_queue else p.theta
        lax = self._laxity(sim, ids, idle)
        hopeless = lax < 0
        critical = ~hopeless & (lax < theta_eff)
        crit = self._by_deadline(ids[critical], k)
        rest = self._by_spt(ids[~hopeless & ~critical], k - len(crit))
        rest += self._by_deadline(ids[hopeless], k - len(crit) - len(rest))
        out = place_in_order(sim, crit, slot_edf, idle)  # consumes the slots it gives out
        return out + place_in_order(sim, rest, self._slot_spt, idle)


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

    def reset(self, sim: Simulator, rng: Any = None) -> None:
        self._rule = self.slot_rule()
        fl = sim.fleet
        fleet_types = set(fl.slot_type)
        self._e = [min(fl.wbar[k][g] for g in fleet_types) for k in range(3)]
        self._seen = 0
        self._y: list[tuple[float, int]] = []  # safe jobs keyed by y = d − CR*·e
        self._safe: list[tuple[float, float, float, int]] = []  # (e, d, submit, j)
        self._risk: list[tuple[float, float, int]] = []  # (d, submit, j)
        self._doomed: list[tuple[float, float, int]] = []  # (d, submit, j)
        self._tier: list[int] = [0] * sim.n_jobs  # 0 safe, 1 at-risk, 2 doomed
        self._held: list[tuple[int, tuple]] = []

    def _sync(self, sim: Simulator) -> None:
        t, d, sub, cx, waiting = sim.t, sim.deadline, sim.submit, sim.complexity, sim.waiting
        cr = self.cfg.cr_star
        for tier, e in self._held:  # handed out last time but not dispatched: put back
            if e[-1] in waiting:
                heapq.heappush((self._safe, self._risk, self._doomed)[tier], e)
        self._held = []
        for j in range(self._seen, sim.n_arrived):
            e = self._e[cx[j]]
            heapq.heappush(self._y, (d[j] - cr * e, j))
            heapq.heappush(self._safe, (e, d[j], sub[j], j))
        self._seen = sim.n_arrived
        y = self._y
        while y and y[0][0] <= t:  # safe → at-risk (monotone in t)
            _, j = heapq.heappop(y)
            if j in waiting:
                self._tier[j] = 1
                heapq.heappush(self._risk, (d[j], sub[j], j))

    def _take(self, heap: list, tier: int, k: int, sim: Simulator, out: list[int]) -> None:
        waiting, t, d, cx = sim.waiting, sim.t, sim.deadline, sim.complexity
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

    def order(self, sim: Simulator, k: int) -> list[int]:
        """The next ``k`` jobs in CADR order."""
        self._sync(sim)
        out: list[int] = []
        self._take(self._risk, 1, k, sim, out)
        self._take(self._safe, 0, k, sim, out)
        self._take(self._doomed, 2, k, sim, out)
        return out

    def decide(self, sim: Simulator) -> list[Assignment]:
        return place_in_order(sim, self.order(sim, sim.n_idle), self._rule)


class CADROO(CADR):
    """11. CADR-OO (ablation): CADR's ordering with SPT's fastest-slot placement."""

    name = "cadr_oo"
    Config = CADROOKnobs

    def slot_rule(self) -> SlotRule:
        return slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)
