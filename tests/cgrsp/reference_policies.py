"""Straightforward O(queue) references for the incremental policies (the code they replaced).

Each class re-classifies the whole waiting queue with NumPy at every decision, exactly as
the policies did before their incremental data structures; tests check that the policies
and these references make the same decisions, decision by decision.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_agents.heuristics.cgrsp.base import (
    Assignment,
    CGRSPPolicy,
    place_in_order,
    slot_edf,
    slot_spt,
)
from gpu_sched_agents.heuristics.cgrsp.deadline import Adaptive, SPTRescue
from gpu_sched_agents.heuristics.cgrsp.ordering import Random
from gpu_sched_agents.heuristics.cgrsp.rh import RH
from gpu_sched_env.cgrsp.fleet import LOW
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.rng import ChunkedUniforms


class _QueueArrays(CGRSPPolicy):
    """Vectorised view of the waiting queue (deadline, complexity, submit, SPT estimate).

    The arrays cover the arrived jobs (all a policy's view shows) and are rebuilt from the
    view whenever jobs have arrived since the last decision.
    """

    def reset(self, sim: SimView, rng: Any = None) -> None:
        self._n_seen = -1
        self._nominal = np.array([row[sim.fleet.nominal_type] for row in sim.fleet.wbar])
        self._refresh(sim)

    def _refresh(self, sim: SimView) -> None:
        if self._n_seen == len(sim.deadline):
            return
        self._n_seen = len(sim.deadline)
        self._d = np.asarray(sim.deadline, dtype=float)
        self._cx = np.asarray(sim.complexity, dtype=np.int64)
        self._sub = np.asarray(sim.submit, dtype=float)
        self._est = self._nominal[self._cx]
        self._derived(sim)

    def _derived(self, sim: SimView) -> None:
        """Arrays derived from the per-job ones (subclasses)."""

    def _waiting(self, sim: SimView) -> np.ndarray:
        self._refresh(sim)
        return np.fromiter(sim.waiting, dtype=np.int64, count=len(sim.waiting))

    def _laxity(self, sim: SimView, ids: np.ndarray, idle: list[int]) -> np.ndarray:
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


class RefSPTRescue(_QueueArrays, SPTRescue):
    def reset(self, sim: SimView, rng: Any = None) -> None:
        _QueueArrays.reset(self, sim, rng)
        self._slot_spt = slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)

    def decide(self, sim: SimView) -> list[Assignment]:
        idle = sim.idle_slots()
        k = len(idle)
        ids = self._waiting(sim)
        urgent = self._laxity(sim, ids, idle) < self.cfg.theta
        order = self._by_deadline(ids[urgent], k)
        order += self._by_spt(ids[~urgent], k - len(order))
        return place_in_order(sim, order, self._slot_spt)


class RefAdaptive(_QueueArrays, Adaptive):
    def reset(self, sim: SimView, rng: Any = None) -> None:
        _QueueArrays.reset(self, sim, rng)
        self._slot_spt = slot_spt(self.cfg.spt_weights, self.cfg.stock_penalty)

    def decide(self, sim: SimView) -> list[Assignment]:
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


class RefRandom(Random):
    def reset(self, sim: SimView, rng: Any = None) -> None:
        self._u = ChunkedUniforms(rng)

    def decide(self, sim: SimView) -> list[Assignment]:
        jobs = list(sim.waiting)
        idle = sim.idle_slots()
        out: list[Assignment] = []
        while jobs and idle:
            a, b = self._u.take(2)
            out.append((jobs.pop(int(a * len(jobs))), idle.pop(int(b * len(idle)))))
        return out


class RefRH(_QueueArrays, RH):
    # extended with RH's reservation under rh_plan="idle" (loose jobs stop at rho_res free
    # idle slots; eager only decides idle-slot placement) and its release after the last arrival
    @property
    def all_eager(self) -> bool:
        """Every candidate is placed on idle slots only under ``rh_plan="idle"`` (see :class:`RH`)."""
        return self.cfg.rh_plan == "idle"

    def _derived(self, sim: SimView) -> None:
        self._e = self._e_k[self._cx]
        self._x = self._d - self._e
        # key monotone in (e, d) for the partial cut of the normal tier: rank(e) + d·scale < rank + 1
        self._rank = self._rank_k[self._cx]
        self._d_scale = 1.0 / (float(self._d.max(initial=0.0)) + 1.0)
        self._tight = np.asarray(sim.tight, dtype=bool)

    def reset(self, sim: SimView, rng: Any = None) -> None:
        p, k, fl = self.params, self.cfg, sim.fleet
        fleet_types = set(fl.slot_type)
        e_k = np.array([min(fl.wbar[k][g] for g in fleet_types) for k in range(3)])
        self._e_min = float(e_k.min())
        self._e_k = e_k
        self._rank_k = np.unique(e_k, return_inverse=True)[1].astype(float)
        _QueueArrays.reset(self, sim, rng)
        probs = p.complexity_probs
        w_mean = float(np.mean([sum(probs[k] * fl.wbar[k][g] for k in range(3)) for g in fl.slot_type]))
        self.rho = p.arrival_rate * w_mean / p.c_max
        self.reserve = int(k.rho_res) if self.rho < k.rho_gate else 0
        wq, wc = k.rh_weights
        self._wq_a1, self._wq_a2 = wq * p.alpha1, wq * p.alpha2
        # per slot: W̄ by complexity, cost term by complexity
        self._w_slot = [[fl.wbar[k][g] for k in range(3)] for g in fl.slot_type]
        self._c_slot = [[wc * fl.wbar[k][g] * fl.price_per_s[g] for k in range(3)] for g in fl.slot_type]
        # expected delay of a slot's type at a future time, per band (stock model expectation)
        # (p_H + p_M is capped at 1: where it exceeds 1 the draw never reaches Low)
        dm = fl.delay_mean
        self._band_delay = [
            [
                ph[g] * dm[0] + (min(1.0, phm[g]) - ph[g]) * dm[1] + (1.0 - min(1.0, phm[g])) * dm[2]
                for g in range(fl.n_types)
            ]
            for ph, phm in zip(fl.p_high, fl.p_high_medium)
        ]

    def candidates(self, sim: SimView, t_free: float, head: int = 0) -> tuple[list[int], int, int, bool]:
        """Waiting jobs in RH order.

        Returns ``(order, n_eager, n_tight, complete)``: the order, how many lead as eager
        tight jobs, how many tight jobs wait in all, and whether ``order`` is the whole
        order. With ``head > 0`` a prefix of the whole order holding at least its first
        ``head`` jobs may be returned instead (the normal tier is cut with a partition on a
        key monotone in (e, d) that keeps every tie), which is all a decision usually needs.
        """
        t = sim.t
        ids = self._waiting(sim)
        x = self._x[ids]
        hopeless = x < t
        urgent = ~hopeless & (x < t_free)
        normal = x >= t_free
        eager: list[int] = []
        if self.reserve:
            tight_ok = self._tight[ids] & ~hopeless
            eager = self._by_deadline(ids[tight_ok], ids.size)
            keep = ~tight_ok
            urgent &= keep
            normal &= keep
        u = ids[urgent]
        n = ids[normal]
        # the shipped code aliased the two lists, so len(eager) below counts the whole order:
        # every candidate is "eager" (rh_plan="idle"); a copy gives the documented tiers
        order = eager if self.all_eager else list(eager)
        order += u[np.lexsort((self._sub[u], self._d[u]))].tolist()
        partial = head > 0 and len(order) < head and n.size > 4 * head
        if partial:  # keep only the normal jobs that can be among the first `head`
            key = self._rank[n] + self._d[n] * self._d_scale
            kth = np.partition(key, head - 1)[head - 1]
            n = n[key <= kth]
        order += n[np.lexsort((self._sub[n], self._d[n], self._e[n]))].tolist()
        if not partial:
            h = ids[hopeless]
            order += h[np.lexsort((self._sub[h], self._d[h]))].tolist()
        n_tight = int(self._tight[ids].sum()) if self.reserve else 0
        return order, len(eager), n_tight, not partial

    def decide(self, sim: SimView) -> list[Assignment]:
        fl, t = sim.fleet, sim.t
        c = len(sim.slot_job)
        idle = sim.idle_slots()
        stock, slot_type = sim.stock, fl.slot_type
        avail = [sim.expected_free(s) for s in range(c)]
        busy_avail = [avail[s] for s in range(c) if sim.slot_job[s] >= 0]
        t_free = min(busy_avail) if busy_avail else t + self._e_min
        idle_delay = [fl.delay_mean[stock[slot_type[s]]] for s in range(c)]
        free = [False] * c
        t_next = min(t_free, t + 1.0 / self.params.arrival_rate)
        mode = self.cfg.rh_defer
        for s in idle:
            if mode == "never" or (mode == "low" and stock[slot_type[s]] != LOW):
                free[s] = True
            elif busy_avail and t_next + self._busy_delay(fl, t_next, slot_type[s]) < t + idle_delay[s]:
                avail[s] = t_next  # defer: re-plan at the next event with a fresh stock draw
            else:
                free[s] = True
        n_free = sum(free)
        if n_free == 0:  # every idle slot deferred: nothing can be committed now
            return []
        order, n_eager, n_tight, complete = self.candidates(sim, t_free, head=16)
        sp = self.cfg.stock_penalty
        sp_slot = [sp[stock[slot_type[s]]] for s in range(c)]
        wq_a1, wq_a2, w_slot, c_slot = self._wq_a1, self._wq_a2, self._w_slot, self._c_slot
        reserve = self.reserve if sim.n_arrived < sim.n_jobs else 0  # released after the last arrival
        deadline, cx, tight = sim.deadline, sim.complexity, self._tight
        out: list[Assignment] = []
        i = seen_tight = 0
        while n_free:
            if i == len(order):
                if complete:
                    break
                order, n_eager, n_tight, complete = self.candidates(sim, t_free)  # prefix ran out
                continue
            j = order[i]
            eager = i < n_eager
            i += 1
            if tight[j]:
                seen_tight += 1
            elif n_free <= reserve:  # loose job, only reserved slots left
                if seen_tight >= n_tight:  # no tight job left to use them
                    break
                continue
            k, d = cx[j], deadline[j]
            can_idle = tight[j] or n_free > reserve
            best, best_v, best_fin = -1, float("inf"), 0.0
            for s in range(c):
                if free[s]:
                    if not can_idle:
                        continue
                    st = t + idle_delay[s]
                elif eager:
                    continue
                else:
                    a = avail[s]
                    st = a + self._busy_delay(fl, a, slot_type[s])
                fin = st + w_slot[s][k]
                v = wq_a1 * (st - t) + (wq_a2 if fin > d else 0.0) + c_slot[s][k] + sp_slot[s]
                if v < best_v:
                    best, best_v, best_fin = s, v, fin
            if best < 0:
                continue
            avail[best] = best_fin
            if free[best]:
                free[best] = False
                n_free -= 1
                out.append((j, best))
        return out

    def _busy_delay(self, fl: Any, a: float, g: int) -> float:
        return self._band_delay[fl.band(a)][g]
