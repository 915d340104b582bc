"""A planning reference: rollout policy improvement over a rule, screened then confirmed.

At each decision point where the choice matters, :class:`Rollout` builds candidate plans
from its base rule (a deferring rule of :mod:`.extensions`, or a published one):

1. the base rule's own plan (with its deferral);
2. the plans of the rules named in ``portfolio`` (other job orders and slot choices);
3. joint plans: the base rule filling every idle slot; leaving every Low slot idle and
   filling the rest; leaving every non-High slot idle;
4. the base plan with one more (or one fewer) non-High slot left idle, one slot at a time;

(deduplicated, at most ``max_candidates``; a plan that leaves every slot idle is offered
only while an event is still to come, so the planner never stalls a day).

**Selection that accounts for choosing among noisy candidates** (:func:`select`). *Screen*:
every candidate is applied to the same ``n_rollouts`` public forks of the day
(:meth:`~gpu_sched_env.cgrsp.sim.Simulator.fork`, common random numbers) and the base rule
runs on for ``horizon_s`` seconds; the cost is α1·Σ wait + α2·Σ misses of the jobs waiting
now and arriving in the horizon, plus a terminal term for the slots still busy (:func:`cost`).
The best-looking candidate goes on only if it leads the base plan by more than
``confidence_z`` paired standard errors. *Confirm*: that one candidate and the base plan are
rolled out on ``n_confirm`` *new, independent* forks to ``confirm_horizon_s`` (0: the end of
the day, where no terminal term is needed), and the planner leaves the base plan only if a
one-sided paired t-test rejects "no better" at level ``error_rate``. Because the confirming
futures are independent of the screen that chose the candidate, the winner's curse does not
reach the test: with equal candidates the base plan is left at rate ≤ ``error_rate`` per
decision (tested), and a plan worse than the base is taken even more rarely.

**What the model knows**: only the public model (:mod:`gpu_sched_env.cgrsp.fork`). Futures of
decision ``n`` are seeded from the run's policy stream, ``n`` and the future's index, so a
run is deterministic for a seed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from gpu_sched_agents.heuristics.cgrsp.base import Assignment, CGRSPPolicy
from gpu_sched_agents.heuristics.cgrsp.config import RolloutKnobs
from gpu_sched_agents.heuristics.cgrsp.extensions import RULES, IdleView
from gpu_sched_env.cgrsp.fleet import HIGH, LOW
from gpu_sched_env.cgrsp.fork import Snapshot, sample_future, snapshot
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.policies import POLICIES
from gpu_sched_env.cgrsp.sim import Fork
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.errors import check_choice

RULE_BASES: tuple[str, ...] = ("spt", "spt_rescue", "cadr", "edf", *RULES)
_INF = float("inf")
_CONFIRM = 1 << 20  # offset of the confirming futures' indices: never a screen future's


# ----------------------------------------------------------------------------- cost of a rollout
def cost(model: Fork, t_end: float) -> float:
    """α1·(waits + slot backlog) + α2·misses of the jobs not on a slot at the fork, as of ``t_end``.

    A dispatched job's wait runs to its (model) start; a job still waiting counts its wait up
    to ``t_end`` and a miss if its deadline has passed by then. Terminal term (finite
    ``t_end`` only): a slot still busy at ``t_end`` for b more seconds delays each of the Q
    jobs still waiting by about b/C (the capacity it withholds, shared by the C slots):
    α1·Q·b/C. With ``t_end = inf`` (a rollout to the end of the day) every job has finished
    and the cost is exact in the model.
    """
    p, fl = model.params, model.fleet
    wait = miss = 0.0
    sub, dl, comp = model.submit, model.deadline, model.completion
    queued = 0
    for i in range(model.n_busy0, model.n_jobs):
        if sub[i] > t_end:
            break
        s = model.dispatch[i]
        if s < _INF:
            s = model.realised(i)[0]
        wait += (s if s < _INF else t_end) - sub[i]
        c = comp[i]
        if c < _INF:
            miss += c > dl[i]
        elif s < _INF:
            miss += s + fl.wbar[model.complexity[i]][fl.slot_type[model.job_slot[i]]] > dl[i]
        else:
            miss += dl[i] < t_end
            queued += 1
    if queued:
        backlog = sum(max(0.0, model.slot_end(s) - t_end) for s in range(len(model.slot_job)) if model.slot_job[s] >= 0)
        wait += queued * backlog / len(model.slot_job)
    return p.alpha1 * wait + p.alpha2 * miss


def roll(model: Fork, plan: list[Assignment], policy: CGRSPPolicy, t_end: float) -> float:
    """Apply ``plan`` (model ids) now, then run ``policy`` on ``model`` until ``t_end``; the cost.

    A model whose arrivals end at the horizon may be left with nothing to happen by a plan
    that leaves every slot idle: then nothing happens until ``t_end`` and the cost is taken there.
    """
    for j, s in plan:
        model.assign(j, s)
    view = model.view
    policy.reset(view, None)
    while model.t <= t_end and (model.has_future_event() or not model.waiting) and model.advance():
        for j, s in policy.decide(view):
            model.assign(j, s)
    return cost(model, t_end)


# ----------------------------------------------------------------------------- selection
def screen_pick(costs: np.ndarray, z: float) -> int:
    """The screened candidate (rollouts × candidates; column 0 the base plan): the least mean cost if it leads by > z SE, else 0."""
    k = int(np.argmin(costs.mean(axis=0)))
    if k == 0:
        return 0
    d = costs[:, k] - costs[:, 0]
    se = float(d.std(ddof=1)) / math.sqrt(len(d)) if len(d) > 1 else 0.0
    return k if float(d.mean()) < -z * se else 0


def confirmed(diff: np.ndarray, error_rate: float) -> bool:
    """One-sided paired t-test at level ``error_rate`` that the candidate is better (``diff`` = candidate − base cost).

    A degenerate sample (every difference equal) is confirmed only if that difference is negative.
    """
    sd = float(diff.std(ddof=1))
    m = float(diff.mean())
    if sd == 0.0:
        return m < 0.0
    t = m / (sd / math.sqrt(len(diff)))
    return t < stats.t.ppf(error_rate, len(diff) - 1)


def select(screen: Callable[[], np.ndarray], confirm: Callable[[int], np.ndarray], z: float, error_rate: float) -> tuple[int, bool]:
    """Screen then confirm: ``(chosen candidate, whether a confirmation ran)``.

    ``screen()`` returns costs (rollouts × candidates, column 0 the base plan) on shared
    futures; ``confirm(k)`` returns costs (futures × 2: base, candidate ``k``) on futures
    independent of the screen's. The base plan (0) unless candidate ``k`` passes both.
    """
    k = screen_pick(screen(), z)
    if k == 0:
        return 0, False
    c = confirm(k)
    return (k if confirmed(c[:, 1] - c[:, 0], error_rate) else 0), True


# ----------------------------------------------------------------------------- policy
class Rollout(CGRSPPolicy):
    """Rollout policy improvement over a rule, screened then confirmed (see the module doc).

    Knobs (:class:`~gpu_sched_agents.heuristics.cgrsp.config.RolloutKnobs`): ``base_rule``,
    screen ``n_rollouts`` / ``horizon_s`` / ``max_candidates`` / ``confidence_z``,
    confirmation ``n_confirm`` / ``confirm_horizon_s`` / ``error_rate``, ``portfolio``. After a
    run: ``n_planned`` decision points with a choice, ``n_confirmed`` confirmations run,
    ``n_deviated`` plans other than the base rule's taken, ``plan_seconds`` their time.
    """

    name = "rollout"
    Config = RolloutKnobs

    def check(self, params: CGRSPParams) -> None:
        check_choice("base_rule", self.cfg.base_rule, RULE_BASES)
        for name in self.cfg.portfolio:
            check_choice("portfolio", name, RULE_BASES)

    def reset(self, view: SimView, rng: Any = None) -> None:
        if rng is None:
            raise ValueError("Rollout planner needs the run's policy stream (rng)")
        base = self.cfg.base_rule
        self._base = POLICIES.make(base, self.params)
        self._base.reset(view, rng)
        # the same rule without deferral fills the offered slots of every candidate
        self._fill = POLICIES.make(base, self.params, defer="none") if base in RULES else self._base
        if self._fill is not self._base:
            self._fill.reset(view, rng)
        self._key = int(rng.integers(2**62))
        self._portfolio = [POLICIES.make(name, self.params) for name in self.cfg.portfolio]
        for rule in self._portfolio:
            rule.reset(view, rng)
        self.n_planned = self.n_confirmed = self.n_deviated = 0
        self.plan_seconds = 0.0

    def candidates(self, view: SimView) -> list[list[Assignment]]:
        """Distinct candidate plans at this decision point, the base rule's first."""
        idle = view.idle_slots()
        out: list[list[Assignment]] = [list(self._base.decide(view))]
        stock, st = view.stock, view.fleet.slot_type
        poor = [s for s in idle if stock[st[s]] != HIGH]
        low = {s for s in poor if stock[st[s]] == LOW}
        held0 = set(idle) - {s for _, s in out[0]}
        can_wait = view.has_future_event()
        seen = {tuple(sorted(out[0]))}

        def add(plan: list[Assignment]) -> None:  # a new plan, not an all-idle one when nothing is to come
            key = tuple(sorted(plan))
            if len(out) < self.cfg.max_candidates and (plan or can_wait) and key not in seen:
                seen.add(key)
                out.append(plan)

        for rule in self._portfolio:
            add(list(rule.decide(view)))
        for held in [set(), low, set(poor)] + [held0 ^ {s} for s in poor]:
            if len(out) >= self.cfg.max_candidates:
                break
            offered = [s for s in idle if s not in held]
            if offered or can_wait:
                add(list(self._fill.decide(IdleView(view, offered))) if offered else [])  # type: ignore[arg-type]
        return out

    def costs(self, view: SimView, snap: Snapshot, plans: list[list[Assignment]], futures: range, horizon_s: float) -> np.ndarray:
        """Rollout costs (futures × plans) on the public forks ``futures`` of this decision (0 horizon: the end of the day)."""
        index = {j: i for i, j in enumerate(snap.jobs)}
        mplans = [[(index[j], s) for j, s in plan] for plan in plans]
        t_end = view.t + horizon_s if horizon_s > 0 else _INF
        out = np.empty((len(futures), len(plans)))
        rule = POLICIES.make(self.cfg.base_rule, self.params)  # reset at the start of every rollout
        for r, f in enumerate(futures):
            fut = sample_future(snap, view.fleet, self.params, horizon_s if horizon_s > 0 else None, self._seed(view, f))
            for k, plan in enumerate(mplans):
                out[r, k] = roll(Fork(self.params, view.fleet, snap, fut), plan, rule, t_end)
        return out

    def _seed(self, view: SimView, f: int) -> int:
        return int(np.random.SeedSequence([self._key, view.n_decisions, f]).generate_state(1)[0])

    def decide(self, view: SimView) -> list[Assignment]:
        cands = self.candidates(view)
        if len(cands) == 1:
            return cands[0]
        t0 = time.perf_counter()
        cfg = self.cfg
        snap = snapshot(view)
        best, ran = select(
            lambda: self.costs(view, snap, cands, range(cfg.n_rollouts), cfg.horizon_s),
            lambda k: self.costs(view, snap, [cands[0], cands[k]], range(_CONFIRM, _CONFIRM + cfg.n_confirm), cfg.confirm_horizon_s),
            cfg.confidence_z, cfg.error_rate,
        )
        self.n_planned += 1
        self.n_confirmed += ran
        self.n_deviated += best != 0
        self.plan_seconds += time.perf_counter() - t0
        return cands[best]


__all__ = ["RULE_BASES", "Rollout", "confirmed", "cost", "roll", "screen_pick", "select"]
