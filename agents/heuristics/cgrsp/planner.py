"""A planning reference: rollout policy improvement over a rule, the simulator as its model.

At each decision point where the choice matters, :class:`Rollout` builds a few candidate
plans from its base rule (a deferring rule of :mod:`.extensions`, or a published one):

1. the base rule's own plan (with its deferral);
2. the plans of the rules named in ``portfolio`` (other job orders and slot choices: *which*
   job goes where; empty by default);
3. the base rule filling every idle slot (no deferral);
4. the base rule leaving every idle slot that is not in High stock idle;
5. the base rule leaving one more (or one fewer) non-High slot idle, one slot at a time;

(deduplicated, at most ``max_candidates``; a plan that leaves every slot idle is offered
only while an event is still to come, so the planner never stalls a day). Each candidate
is applied to ``n_rollouts`` sampled futures and the base rule is simulated from there for
``horizon_s`` seconds; the candidate with the least mean objective
α1·Σ wait + α2·Σ misses (the params' weights, with a terminal term for slots still busy at
the horizon, :meth:`ModelSim.cost`) over the jobs waiting now and those arriving in the
horizon is taken, if it beats the base rule's plan by more than ``confidence_z`` paired
standard errors (:func:`pick`); otherwise the base rule's plan.

**What the model knows.** A future is drawn from the public model only: arrivals at rate λ
with the complexity and deadline mix (at most the number of jobs still to come, ``n_jobs``
being public), log-normal run times with the public means W̄ and σ, provisioning delays
uniform in the range of the stock level (for a slot still provisioning, conditioned on not
having started yet; for a running job, its run time conditioned on not having ended), and
the stock process: fresh draws, or under ``stock_process="markov"`` a chain that starts
from the status observed now and redraws at the public rate 1/τ. The snapshot copies only
what a scheduler sees (:func:`snapshot`): the clock, the queue (arrived jobs' submit,
deadline, complexity, tightness), the slots (job, dispatch time, stock level at dispatch,
observed start) and the observed stock. The simulator's realised draws (run times,
provisioning delays, future arrivals, future stock) are never read.

**Common random numbers.** Future ``r`` (arrivals, run times, delay quantiles, stock
stream) is the same for every candidate; the futures of a decision point are seeded from
the run's policy stream and the decision number, so a run is deterministic for a seed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from gpu_sched_agents.heuristics.cgrsp.base import Assignment, CGRSPPolicy
from gpu_sched_agents.heuristics.cgrsp.config import RolloutKnobs
from gpu_sched_agents.heuristics.cgrsp.extensions import RULES, IdleView
from gpu_sched_env.cgrsp.fleet import HIGH
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.policies import POLICIES
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.core.events import EventQueue

RULE_BASES: tuple[str, ...] = ("spt", "spt_rescue", "cadr", "edf", *RULES)
_INF = float("inf")
_N01 = NormalDist()


# ----------------------------------------------------------------------------- snapshot
@dataclass(frozen=True)
class Snapshot:
    """What a scheduler knows at a decision point (copied, never the realised draws)."""

    t: float
    jobs: list[int]  # real ids of the arrived, unfinished jobs: busy slots' jobs, then the queue
    n_busy: int  # jobs[:n_busy] are on slots
    submit: list[float]
    deadline: list[float]
    complexity: list[int]
    tight: list[bool]
    slot_job: list[int]  # index into jobs, -1 idle
    slot_dispatch: list[float]
    slot_level: list[int]
    slot_started: list[float]  # observed start [s] of a running job, inf while provisioning or idle
    stock: list[int]
    n_to_come: int  # jobs of the day not arrived yet


def snapshot(view: SimView) -> Snapshot:
    """Copy the public state a policy's ``view`` shows (arrived jobs only; no realised future draw)."""
    busy = [j for j in view.slot_job if j >= 0]
    jobs = busy + list(view.waiting)
    index = {j: i for i, j in enumerate(jobs)}
    c = len(view.slot_job)
    return Snapshot(
        t=view.t, jobs=jobs, n_busy=len(busy),
        submit=[view.submit[j] for j in jobs], deadline=[view.deadline[j] for j in jobs],
        complexity=[view.complexity[j] for j in jobs], tight=[view.tight[j] for j in jobs],
        slot_job=[index[j] if j >= 0 else -1 for j in view.slot_job],
        slot_dispatch=list(view.slot_dispatch), slot_level=list(view.slot_level),
        slot_started=[view.start_if_started(view.slot_job[s]) if view.slot_job[s] >= 0 else _INF for s in range(c)],
        stock=list(view.stock), n_to_come=view.n_jobs - view.n_arrived,
    )


# ----------------------------------------------------------------------------- futures
class _MarkovFromNow:
    """Markov stock that starts from the observed status: a quantile in the level's interval, public redraw rate."""

    def __init__(self, fleet: Any, params: CGRSPParams, t0: float, stock: list[int], gen: np.random.Generator, t_end: float) -> None:
        self.fleet = fleet
        self.paths: list[tuple[list[float], list[float]]] = []
        b0 = fleet.band(t0)
        for g in range(fleet.n_types):
            lo = (0.0, fleet.p_high[b0][g], fleet.p_high_medium[b0][g])[stock[g]]
            hi = (fleet.p_high[b0][g], fleet.p_high_medium[b0][g], 1.0)[stock[g]]
            times, us = [t0], [lo + (min(hi, 1.0) - lo) * gen.random()]
            t = t0
            while t < t_end:
                probs = fleet.level_probs(fleet.band(t), g)
                gini = 1.0 - sum(x * x for x in probs)
                tau = params.stock_dwell_s * gini if gini > 1e-12 else params.stock_dwell_s
                t += gen.exponential(tau)
                times.append(t)
                us.append(gen.random())
            self.paths.append((times, us))

    def levels(self, t: float) -> list[int]:
        u = []
        for times, us in self.paths:
            i = len(times) - 1
            while times[i] > t:
                i -= 1
            u.append(us[i])
        return self.fleet.stock_levels(t, u)


_M64 = (1 << 64) - 1


def _mix(x: int) -> int:
    """splitmix64 finaliser: a well-spread 64-bit hash of ``x``."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


class _FreshByTime:
    """Fresh stock whose draw is a hash of (future, time in ms, type).

    Independent at every decision point, as in the fresh model, but the same at the same
    instant in every candidate's rollout: common random numbers that do not drift apart
    when candidates decide at different times.
    """

    def __init__(self, fleet: Any, seed: int) -> None:
        self.fleet = fleet
        self.seed = seed

    def levels(self, t: float) -> list[int]:
        k = _mix(self.seed ^ int(t * 1000.0))
        return self.fleet.stock_levels(t, [_mix(k + g) / 18446744073709551616.0 for g in range(self.fleet.n_types)])


@dataclass
class Future:
    """One sampled future of a snapshot (shared by every candidate: common random numbers)."""

    arrivals: list[float]
    complexity: list[int]
    tight: list[bool]
    runtime: list[list[float]]  # [model job][type]: queue and arriving jobs
    prov_q: list[float]  # provisioning quantile per model job
    busy_start: list[float]  # per slot: start of its job (observed or sampled), inf idle
    busy_end: list[float]  # per slot: completion of its job, inf idle
    stock_seed: int
    markov: _MarkovFromNow | None


def sample_future(snap: Snapshot, sim_fleet: Any, params: CGRSPParams, horizon: float, gen: np.random.Generator) -> Future:
    """A future of ``snap`` drawn from the public model."""
    t0, t_end = snap.t, snap.t + horizon
    arrivals: list[float] = []
    t = t0
    while len(arrivals) < snap.n_to_come:
        t += gen.exponential(1.0 / params.arrival_rate)
        if t > t_end:
            break
        arrivals.append(t)
    na = len(arrivals)
    cx = gen.choice(3, size=na, p=np.asarray(params.complexity_probs)).tolist()
    tight = (gen.random(na) < params.tight_fraction).tolist()
    n_model = len(snap.jobs) + na
    wbar = np.asarray(sim_fleet.wbar)  # (3, types)
    sigma = params.runtime_sigma
    all_cx = np.asarray(snap.complexity + cx, dtype=np.int64)
    mu = np.log(wbar[all_cx]) - sigma * sigma / 2.0
    runtime = np.exp(mu + sigma * gen.standard_normal(mu.shape)).tolist()
    prov_q = gen.random(n_model).tolist()
    fl = sim_fleet
    busy_start, busy_end = [], []
    for s, i in enumerate(snap.slot_job):
        if i < 0:
            busy_start.append(_INF)
            busy_end.append(_INF)
            continue
        start = snap.slot_started[s]
        if start == _INF:  # still provisioning: the delay of its level, given that it exceeds the elapsed time
            lvl = snap.slot_level[s]
            lo, hi = fl.delay_lo[lvl], fl.delay_lo[lvl] + fl.delay_span[lvl]
            lo = max(lo, t0 - snap.slot_dispatch[s])
            start = snap.slot_dispatch[s] + lo + (max(hi, lo) - lo) * gen.random()
            start = max(start, t0)
        # run time on this slot's type, given that the job has not ended by t0
        w = fl.wbar[snap.complexity[i]][fl.slot_type[s]]
        m = math.log(w) - sigma * sigma / 2.0
        done = t0 - start
        f_lo = _N01.cdf((math.log(done) - m) / sigma) if done > 0 and sigma > 0 else 0.0
        u = f_lo + (1.0 - f_lo) * gen.random()
        rt = math.exp(m + sigma * _N01.inv_cdf(min(max(u, 1e-12), 1 - 1e-12))) if sigma > 0 else w
        busy_start.append(start)
        busy_end.append(max(start + rt, t0))
    markov = _MarkovFromNow(fl, params, t0, snap.stock, gen, t_end) if params.stock_process == "markov" else None
    return Future(arrivals, cx, tight, runtime, prov_q, busy_start, busy_end, int(gen.integers(2**62)), markov)


# ----------------------------------------------------------------------------- model
class ModelSim(Simulator):
    """A simulator started from a snapshot and one sampled future (the planner's model).

    Model job ``i`` is ``snap.jobs[i]`` for the arrived jobs (busy slots' first, then the
    queue in submit order), then the sampled arrivals. Realised values here are the
    future's samples, never the real day's.
    """

    def __init__(self, params: CGRSPParams, fleet: Any, snap: Snapshot, fut: Future) -> None:  # noqa: PLR0915
        self.params = params
        self.seed = 0
        self.fleet = fleet
        self.workload = None
        n_arr = len(snap.jobs)
        na = len(fut.arrivals)
        self.n_jobs = n = n_arr + na
        w = params.tight_window
        lw = params.loose_window
        self.submit = snap.submit + fut.arrivals
        self.deadline = snap.deadline + [a + (w if tg else lw) for a, tg in zip(fut.arrivals, fut.tight)]
        self.complexity = snap.complexity + fut.complexity
        self.tight = snap.tight + fut.tight
        self._rt = fut.runtime
        self.dispatch = [_INF] * n
        self._start = [_INF] * n
        self.completion = [_INF] * n
        self.job_slot = [-1] * n
        self.job_stock = [-1] * n
        c = len(snap.slot_job)
        self.slot_job = list(snap.slot_job)
        self.slot_dispatch = list(snap.slot_dispatch)
        self.slot_level = list(snap.slot_level)
        self.slot_busy_time = [0.0] * c
        self._events = EventQueue()
        for s, i in enumerate(snap.slot_job):
            if i >= 0:
                self._start[i] = fut.busy_start[s]
                self.dispatch[i] = snap.slot_dispatch[s]
                self.job_slot[i] = s
                self.job_stock[i] = snap.slot_level[s]
                self._events.push(fut.busy_end[s], kind=s, payload=i)
        self.n_idle = sum(1 for i in snap.slot_job if i < 0)
        self.waiting = dict.fromkeys(range(snap.n_busy, n_arr))
        self.dispatched = list(range(snap.n_busy))
        self.n_arrived = n_arr
        self.n_completed = 0
        self.t = snap.t
        self.stock = list(snap.stock)
        self.n_decisions = 0
        self._stock = fut.markov if fut.markov is not None else _FreshByTime(fleet, fut.stock_seed)
        self._prov_q = fut.prov_q
        self.n_busy0 = snap.n_busy
        self._busy_end = fut.busy_end
        self._n_public = n_arr
        self.view = SimView(self)  # the base rule sees the model through a view, as on the real day

    def cost(self, t_end: float) -> float:
        """α1·(waits + slot backlog) + α2·misses of the jobs not on a slot at the snapshot, as of ``t_end``.

        A dispatched job's wait runs to its (model) start; a job still waiting counts its
        wait up to ``t_end`` and a miss if its deadline has passed by then. Terminal term:
        a slot still busy at ``t_end`` for b more seconds delays each of the Q jobs still
        waiting by about b/C (the capacity it withholds, shared by the C slots): α1·Q·b/C.
        """
        p, fl = self.params, self.fleet
        wait = miss = 0.0
        start, comp, sub, dl = self._start, self.completion, self.submit, self.deadline
        queued = 0
        for i in range(self.n_busy0, self.n_jobs):
            if sub[i] > t_end:
                break
            s = start[i]
            wait += (s if s < _INF else t_end) - sub[i]
            c = comp[i]
            if c < _INF:
                miss += c > dl[i]
            elif s < _INF:
                miss += s + fl.wbar[self.complexity[i]][fl.slot_type[self.job_slot[i]]] > dl[i]
            else:
                miss += dl[i] < t_end
                queued += 1
        if queued:
            wait += queued * self._backlog(t_end) / len(self.slot_job)
        return p.alpha1 * wait + p.alpha2 * miss

    def _backlog(self, t_end: float) -> float:
        """Σ over busy slots of the time [s] past ``t_end`` until they free (model values)."""
        out = 0.0
        for s, i in enumerate(self.slot_job):
            if i >= 0:
                e = self._start[i] + self._rt[i][self.fleet.slot_type[s]] if i >= self.n_busy0 else self._busy_end[s]
                out += max(0.0, e - t_end)
        return out


def roll(model: ModelSim, plan: list[Assignment], policy: CGRSPPolicy, t_end: float) -> float:
    """Apply ``plan`` (model ids) now, then run ``policy`` on ``model`` until ``t_end``; the cost.

    The model's arrivals end at the horizon, so a plan that leaves every slot idle (the
    real day still has arrivals to come) may leave the model with nothing to happen: then
    nothing happens until ``t_end``, and the cost is taken there.
    """
    for j, s in plan:
        model.assign(j, s)
    view = model.view
    policy.reset(view, None)
    while model.t <= t_end and (model.has_future_event() or not model.waiting) and model.advance():
        for j, s in policy.decide(view):
            model.assign(j, s)
    return model.cost(t_end)


def pick(costs: np.ndarray, z: float) -> int:
    """The candidate to take from rollout costs (rollouts × candidates; column 0: the base plan).

    The candidate with the least mean cost, if its paired advantage over the base plan
    exceeds ``z`` standard errors (with one rollout: any advantage); else the base plan.
    Rollout costs are noisy (a day's futures differ by far more than one dispatch), so this
    keeps the planner from trading the base rule's plan for noise.
    """
    mean = costs.mean(axis=0)
    k = int(np.argmin(mean))
    if k == 0:
        return 0
    d = costs[:, k] - costs[:, 0]
    n = len(d)
    se = float(d.std(ddof=1)) / math.sqrt(n) if n > 1 else 0.0
    return k if float(d.mean()) < -z * se else 0


# ----------------------------------------------------------------------------- policy
class Rollout(CGRSPPolicy):
    """Rollout policy improvement over a rule, with the simulator as the model (see the module doc).

    Knobs (:class:`~gpu_sched_agents.heuristics.cgrsp.config.RolloutKnobs`): ``base_rule`` (the
    rule, one of :data:`RULE_BASES`), ``n_rollouts`` (sampled futures per candidate),
    ``horizon_s`` (look-ahead [s]), ``max_candidates`` (plans per decision point),
    ``confidence_z`` (paired standard errors an alternative must win by), ``portfolio`` (rules
    whose plans join the candidates). After a run,
    ``n_planned`` counts the decision points with a choice and ``plan_seconds`` their time.
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
        self.n_planned = 0  # decision points with more than one candidate
        self.plan_seconds = 0.0

    def candidates(self, view: SimView) -> list[list[Assignment]]:
        """Distinct candidate plans at this decision point, the base rule's first."""
        idle = view.idle_slots()
        out: list[list[Assignment]] = [list(self._base.decide(view))]
        stock, st = view.stock, view.fleet.slot_type
        poor = [s for s in idle if stock[st[s]] != HIGH]
        held0 = set(idle) - {s for _, s in out[0]}
        can_wait = view.has_future_event()

        def add(plan: list[Assignment]) -> None:  # a new plan, not an all-idle one when nothing is to come
            if len(out) < self.cfg.max_candidates and (plan or can_wait) and all(sorted(plan) != sorted(p) for p in out):
                out.append(plan)

        for rule in self._portfolio:
            add(list(rule.decide(view)))
        for held in [set(), set(poor)] + [held0 ^ {s} for s in poor]:
            if len(out) >= self.cfg.max_candidates:
                break
            offered = [s for s in idle if s not in held]
            if offered or can_wait:
                add(list(self._fill.decide(IdleView(view, offered))) if offered else [])  # type: ignore[arg-type]
        return out

    def decide(self, view: SimView) -> list[Assignment]:
        cands = self.candidates(view)
        if len(cands) == 1:
            return cands[0]
        t0 = time.perf_counter()
        cfg = self.cfg
        snap = snapshot(view)
        index = {j: i for i, j in enumerate(snap.jobs)}
        mplans = [[(index[j], s) for j, s in plan] for plan in cands]
        gen = np.random.default_rng([self._key, view.n_decisions])
        t_end = view.t + cfg.horizon_s
        costs = np.empty((cfg.n_rollouts, len(cands)))
        for r in range(cfg.n_rollouts):
            fut = sample_future(snap, view.fleet, self.params, cfg.horizon_s, gen)
            for k, plan in enumerate(mplans):
                model = ModelSim(self.params, view.fleet, snap, fut)
                costs[r, k] = roll(model, plan, POLICIES.make(cfg.base_rule, self.params), t_end)
        best = pick(costs, cfg.confidence_z)
        self.n_planned += 1
        self.plan_seconds += time.perf_counter() - t0
        return cands[best]


__all__ = ["RULE_BASES", "Future", "ModelSim", "Rollout", "Snapshot", "pick", "roll", "sample_future", "snapshot"]
