"""RH: rolling-horizon planning with load-gated anticipation (spec §3, 9).

At each decision RH builds every slot's availability timeline (idle now, or busy until its
job's expected completion), orders the waiting jobs in tiers and places each candidate at
its earliest feasible start on the slot minimising

    w_qos·(α1·wait + α2·miss) + w_cost·cost + sp(stock)

where *wait* runs from now to the expected start **including the expected provisioning
delay** (the stock status the scheduler sees now for an idle slot; the stock model's
expectation at the slot's free time for a busy one): this is how the stock penalty enters
the objective's units, since sp(s) alone (≤ 1) is negligible beside waits in seconds.
Only placements that start now on an idle slot are committed; the rest is re-planned at
the next event.

Deferral (our reading of "earliest feasible start" under a stock status that is redrawn at
every decision): an idle slot may also be left idle until the next re-plan, expected at
t_next = min(t_free, t + 1/λ), when its stock is redrawn. Its earliest start is then
t_next + the stock model's expected delay. Where that beats dispatching now under the
status seen now (typically a Low-stock slot), the slot is treated like a busy one that
frees at t_next, and nothing is committed to it at this decision. Deferral is used only
while some slot is busy, so a completion is sure to trigger the re-plan. ``rh_defer``
selects the rule: ``never`` (default: no deferral; with ``rh_plan="timeline"`` an idle slot is still left
to a later candidate whose best placement it is, as the timeline dictates), ``expected``
(the comparison above; it relies on re-rolling the stock: 2.4 % hectic miss, below the
published 7.5 %, but out of the pack on every day type and cap, see docs/results.md) or
``low`` (the comparison, for Low-stock slots only). The stock model's expected delay at a
future time is :meth:`~gpu_sched_env.cgrsp.fleet.Fleet.expected_delay` (the level
probabilities the draw realises).

Placement (``rh_plan``): ``idle`` (default) places each candidate on its best idle slot
only; ``timeline`` is the full rolling horizon above (busy slots' timelines, reserved
slots). See the class comment.

Tiers (e_j = min W̄ over the fleet's types; t_free = soonest expected free time of a busy
slot, or t + min e if every slot is idle): hopeless (t + e_j > d) last, by deadline;
urgent (t + e_j ≤ d < t_free + e_j) first, by deadline; normal in between, by e_j (ties:
deadline, submit).

Anticipation (the reservation): offered load ρ = λ·W̄_mean / C_max (W̄_mean averaged over
the complexity mix and the slots; :attr:`~gpu_sched_env.cgrsp.fleet.Fleet.offered_load`).
While ρ < ``rho_gate`` (0.95) and more jobs can still arrive, with r = ``rho_res``:

* tight jobs that can still meet their deadline are *eager*: they lead the order, by
  deadline, each onto its best idle slot (hopeless tight jobs keep their place last);
* a loose job may take an idle slot only while more than r idle slots are still free at
  this decision (idle slots not yet given out by it, deferred slots not counted), so the
  last r idle slots are left to tight jobs: those waiting now (the eager ones and the
  hopeless ones) or those arriving later. Which idle slots stay free is whatever the loose
  jobs' placements leave: each loose job still takes its own best idle slot.

At or above the gate there is no reservation (no eager tier, no held slot). The holding
ends with the day's arrivals: once the last of the day's N jobs (a parameter, like λ) has
arrived no tight job can come, and the r slots are released (:meth:`RH.reserve_now`). RH
knows λ, N and the deadline mix, never the future jobs themselves. The policy cannot
stall: holding needs at most r < C_max idle slots (``check``), so some slot is busy and its
completion is a future event; after the last arrival nothing is held at all.

Data structures: x_j = d − e_j is static, so hopeless (x < t) is for good and the other tiers
are runs of the deadline order within a complexity class (e is one value per class). The
waiting jobs live in sorted lists (:class:`~.queues.Groups`): per class for tight jobs
(eager, while reserving) and for the others, plus two hopeless lists (tight, loose). A
decision merges the lists lazily in RH order and reads only as far as its placement loop
goes; once only reserved slots are left it jumps straight to the tight jobs still waiting
(the only ones that may use them). The order is the one the O(queue) classification gave:
``tests/cgrsp/test_incremental_policies.py`` checks it decision by decision.
"""

from __future__ import annotations

from heapq import merge
from itertools import dropwhile, takewhile
from typing import Any

import numpy as np

from gpu_sched_agents.heuristics.cgrsp.base import Assignment, CGRSPPolicy
from gpu_sched_agents.heuristics.cgrsp.config import RHKnobs
from gpu_sched_agents.heuristics.cgrsp.queues import Groups
from gpu_sched_env.cgrsp.fleet import LOW
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.errors import ConfigError

# group indices: EAGER + κ tight jobs (while reserving), OTHER + κ the rest, then hopeless
EAGER, OTHER, HOPELESS_TIGHT, HOPELESS = 0, 3, 6, 7


def _merged(sources: list) -> Any:
    """Sorted merge of sorted iterables (the lone non-empty one is read directly)."""
    if len(sources) == 1:
        return iter(sources[0])
    return merge(*sources)


class RH(CGRSPPolicy):
    """9. Rolling horizon with load-gated reservation for tight jobs."""

    name = "rh"
    Config = RHKnobs
    # rh_plan="idle" (default): every candidate is placed like an eager job, on its best idle
    # slot in RH order; nothing is planned on busy slots. The reservation applies all the
    # same (loose jobs stop at rho_res free idle slots below the gate): until 2026-11-25 it
    # did not, because every candidate counted as eager, and rho_res only moved the tight
    # jobs to the front. rh_plan="timeline" is the documented rolling horizon (placement on
    # busy slots too). Both are tested against their reference decision by decision in
    # tests/cgrsp/test_incremental_policies.py.

    def check(self, params: CGRSPParams) -> None:
        """RH must keep at least one slot for loose jobs: ``rho_res < c_max``."""
        r = self.cfg.rho_res
        if r >= params.c_max:
            raise ConfigError(
                f"rho_res = {r!r} must be below c_max = {params.c_max} (RH must keep a slot for loose jobs); "
                f"allowed: 0..{params.c_max - 1}"
            )

    def reset(self, view: SimView, rng: Any = None) -> None:
        p, kn, fl = self.params, self.cfg, view.fleet
        e_k = np.array(fl.fastest_wbar)
        self._e_min = float(e_k.min())
        self._e_class = e_k.tolist()  # [s] e_j per complexity class
        # classes with equal e share the normal tier's order (merged by deadline)
        self._e_groups = [[c for c in range(3) if self._e_class[c] == v] for v in sorted(set(self._e_class))]
        self.rho = fl.offered_load
        self.reserve = int(kn.rho_res) if self.rho < kn.rho_gate else 0
        wq, wc = kn.rh_weights
        self._wq_a1, self._wq_a2 = wq * p.alpha1, wq * p.alpha2
        # per slot: W̄ by complexity, cost term by complexity
        self._w_slot = [[fl.wbar[k][g] for k in range(3)] for g in fl.slot_type]
        self._c_slot = [[wc * fl.wbar[k][g] * fl.price_per_s[g] for k in range(3)] for g in fl.slot_type]
        # expected delay of a slot's type at a future time, per band (stock model expectation)
        self._band_delay = [[fl.expected_delay(b, g) for g in range(fl.n_types)] for b in range(len(fl.band_starts))]
        cx, tight, eager = view.complexity, view.tight, bool(self.reserve)
        self._q = Groups(8, view.n_jobs, lambda j: cx[j] + (EAGER if eager and tight[j] else OTHER))

    def _sync(self, view: SimView) -> None:
        """Arrivals and dispatches in; jobs that became hopeless (x = d − e < t) move for good."""
        lists, t, tight, eager = self._q.sync(view), view.t, view.tight, bool(self.reserve)
        for g in range(HOPELESS_TIGHT):
            lst, e = lists[g], self._e_class[g % 3]
            while lst and lst[0][0] - e < t:
                self._q.move_head(g, HOPELESS_TIGHT if eager and tight[lst[0][2]] else HOPELESS)

    def order(self, view: SimView, t_free: float, tight_only: list[bool]) -> Any:
        """Waiting jobs in RH order, lazily, as ``(job, eager)``.

        Eager tight jobs (while reserving) by deadline; urgent (x < t_free) by deadline;
        normal by (e, deadline); hopeless by deadline. Once the caller sets
        ``tight_only[0]``, only the tight jobs still to come are given (all of them are then
        in the hopeless tier: the others led as eager).
        """
        lists = self._q.lists
        e = self._e_class
        if self.reserve:
            for key in _merged([lists[EAGER + c] for c in range(3)]):
                yield key[2], True
        urgent = [
            takewhile(lambda k, e=e[c]: k[0] - e < t_free, lists[OTHER + c]) for c in range(3) if lists[OTHER + c]
        ]
        for key in _merged(urgent):
            if tight_only[0]:
                break
            yield key[2], False
        for group in self._e_groups:
            if tight_only[0]:
                break
            normal = [
                dropwhile(lambda k, e=e[c]: k[0] - e < t_free, lists[OTHER + c]) for c in group if lists[OTHER + c]
            ]
            for key in _merged(normal):
                if tight_only[0]:
                    break
                yield key[2], False
        last = None
        if not tight_only[0]:
            for key in _merged([lists[HOPELESS_TIGHT], lists[HOPELESS]]):
                if tight_only[0]:
                    break
                last = key
                yield key[2], False
        tail = (
            lists[HOPELESS_TIGHT]
            if last is None
            else lists[HOPELESS_TIGHT].irange(minimum=last, inclusive=(False, True))
        )
        if tight_only[0]:
            for key in tail:
                yield key[2], False

    def decide(self, view: SimView) -> list[Assignment]:
        fl, t = view.fleet, view.t
        c = len(view.slot_job)
        idle = view.idle_slots()
        stock, slot_type = view.stock, fl.slot_type
        avail = [view.expected_free(s) for s in range(c)]
        busy_avail = [avail[s] for s in range(c) if view.slot_job[s] >= 0]
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
        self._sync(view)
        lists = self._q.lists
        reserve = self.reserve_now(view)
        n_tight = sum(len(lists[g]) for g in (EAGER, EAGER + 1, EAGER + 2, HOPELESS_TIGHT)) if reserve else 0
        sp = self.cfg.stock_penalty
        sp_slot = [sp[stock[slot_type[s]]] for s in range(c)]
        wq_a1, wq_a2, w_slot, c_slot = self._wq_a1, self._wq_a2, self._w_slot, self._c_slot
        deadline, cx, tight = view.deadline, view.complexity, view.tight
        out: list[Assignment] = []
        seen_tight = 0
        tight_only = [False]
        all_eager = self.cfg.rh_plan == "idle"
        for j, eager in self.order(view, t_free, tight_only):
            eager = eager or all_eager
            if tight[j]:
                seen_tight += 1
            elif n_free <= reserve:  # loose job, only reserved slots left
                if seen_tight >= n_tight:  # no tight job left to use them
                    break
                tight_only[0] = True  # loose jobs can do nothing more: on to the tight ones
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
                if n_free == 0:
                    break
        return out

    def reserve_now(self, view: SimView) -> int:
        """Idle slots held back from loose jobs at this decision.

        ``rho_res`` while ρ < gate and more jobs can still arrive (``n_arrived < n_jobs``:
        the day's job count is a parameter, like λ); 0 above the gate and once the day's
        last job has arrived, when no tight arrival is left to hold a slot for.
        """
        return self.reserve if view.n_arrived < view.n_jobs else 0

    def _busy_delay(self, fl: Any, a: float, g: int) -> float:
        return self._band_delay[fl.band(a)][g]
