"""What a public fork of a running day is made of: the scheduler's knowledge now and a future from the public model.

:meth:`Simulator.fork <gpu_sched_env.cgrsp.sim.Simulator.fork>` returns a
:class:`~gpu_sched_env.cgrsp.sim.Fork`: a simulator that starts from what a scheduler may know
at this decision point (:func:`snapshot`, read through the view) and continues with draws from
the *public* model (:func:`sample_future`), never the day's realised ones. It is what a planner
simulates candidate plans on (:mod:`gpu_sched_agents.heuristics.cgrsp.planner`).

**What is copied** (:func:`snapshot`, read through the view only): the clock, the arrived and
unfinished jobs (submit, deadline, complexity, tightness), the slots (job, dispatch time,
stock level at dispatch, observed start), the observed stock status and how many jobs of the
day are still to come (``n_jobs`` is a parameter).

**What is drawn** (:func:`sample_future`, from ``seed``): arrivals at rate λ with the public
complexity and deadline mix, at most the ``n_jobs − n_arrived`` still to come, up to the
horizon (``None``: the whole rest of the day); log-normal run times with the public W̄ and σ
(a running job's conditioned on not having ended); provisioning delays uniform in the level's
range (a provisioning job's conditioned on not having started); stock: fresh draws keyed by
(future, time, type), or under ``stock_process="markov"`` a chain that starts from the
observed status and redraws at the public rate 1/τ.

**Common random numbers.** A future is a pure function of the snapshot and ``seed``: forks of
the same state with the same seed are identical, so candidate plans applied to them differ
only by the plan. Fresh stock is a hash of the time (not a stream), so two candidates that
reach a decision point at the same instant see the same status even after they diverge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.view import SimView

_INF = float("inf")
_N01 = NormalDist()
_M64 = (1 << 64) - 1


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


class _MarkovFromNow:
    """Markov stock that starts from the observed status: a quantile in the level's interval, public redraw rate.

    The path of each type is drawn lazily, in time order, from its own generator: the same
    path whatever the order of the queries (so candidates share it).
    """

    def __init__(self, fleet: Any, params: CGRSPParams, t0: float, stock: list[int], seed: int) -> None:
        self.fleet = fleet
        self.dwell = params.stock_dwell_s
        b0 = fleet.band(t0)
        self.paths: list[tuple[list[float], list[float], np.random.Generator]] = []
        for g in range(fleet.n_types):
            gen = np.random.default_rng([seed, g])
            lo = (0.0, fleet.p_high[b0][g], fleet.p_high_medium[b0][g])[stock[g]]
            hi = (fleet.p_high[b0][g], fleet.p_high_medium[b0][g], 1.0)[stock[g]]
            self.paths.append(([t0], [lo + (min(hi, 1.0) - lo) * gen.random()], gen))

    def _extend(self, g: int, t: float) -> None:
        times, us, gen = self.paths[g]
        fl = self.fleet
        while times[-1] <= t:
            probs = fl.level_probs(fl.band(times[-1]), g)
            gini = 1.0 - sum(x * x for x in probs)
            tau = self.dwell * gini if gini > 1e-12 else self.dwell  # [s] mean time to the next redraw
            times.append(times[-1] + gen.exponential(tau))
            us.append(gen.random())

    def levels(self, t: float) -> list[int]:
        u = []
        for g, (times, us, _) in enumerate(self.paths):
            self._extend(g, t)
            i = len(times) - 1
            while times[i] > t:
                i -= 1
            u.append(us[i])
        return self.fleet.stock_levels(t, u)


def _mix(x: int) -> int:
    """splitmix64 finaliser: a well-spread 64-bit hash of ``x``."""
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


class _FreshByTime:
    """Fresh stock whose draw is a hash of (future, time in ms, type): independent at every decision point, CRN across candidates."""

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
    runtime: list[list[float]]  # [model job][type]: the busy jobs' (their remaining run), the queue's, the arrivals'
    prov_q: list[float]  # provisioning quantile per model job
    busy_start: list[float]  # per slot: start of its job (observed or sampled), inf idle
    busy_end: list[float]  # per slot: completion of its job, inf idle
    stock: _FreshByTime | _MarkovFromNow


def sample_future(snap: Snapshot, fleet: Any, params: CGRSPParams, horizon_s: float | None, seed: int) -> Future:
    """A future of ``snap`` drawn from the public model with ``seed`` (``horizon_s=None``: the rest of the day)."""
    gen = np.random.default_rng([int(seed), 0x5EED])
    t0 = snap.t
    t_end = _INF if horizon_s is None else t0 + horizon_s
    # every job still to come is drawn, then cut at the horizon: the futures of one seed at two
    # horizons agree up to the shorter one (the calibration compares them)
    n, n_arr = snap.n_to_come, len(snap.jobs)
    arr = t0 + np.cumsum(gen.exponential(1.0 / params.arrival_rate, size=n))
    cx_all = gen.choice(3, size=n, p=np.asarray(params.complexity_probs))
    tight_all = gen.random(n) < params.tight_fraction
    z = gen.standard_normal((n_arr + n, fleet.n_types))
    q = gen.random(n_arr + n)
    na = int(np.searchsorted(arr, t_end, side="right"))
    arrivals, cx, tight = arr[:na].tolist(), cx_all[:na].tolist(), tight_all[:na].tolist()
    wbar = np.asarray(fleet.wbar)  # (3, types)
    sigma = params.runtime_sigma
    all_cx = np.asarray(snap.complexity + cx, dtype=np.int64)
    mu = np.log(wbar[all_cx]) - sigma * sigma / 2.0
    runtime = np.exp(mu + sigma * z[: n_arr + na]).tolist()
    prov_q = q[: n_arr + na].tolist()
    busy_start, busy_end = [], []
    for s, i in enumerate(snap.slot_job):
        if i < 0:
            busy_start.append(_INF)
            busy_end.append(_INF)
            continue
        start = snap.slot_started[s]
        if start == _INF:  # still provisioning: the delay of its level, given that it exceeds the elapsed time
            lvl = snap.slot_level[s]
            lo, hi = fleet.delay_lo[lvl], fleet.delay_lo[lvl] + fleet.delay_span[lvl]
            lo = max(lo, t0 - snap.slot_dispatch[s])
            start = max(snap.slot_dispatch[s] + lo + (max(hi, lo) - lo) * gen.random(), t0)
        # run time on this slot's type, given that the job has not ended by t0
        w = fleet.wbar[snap.complexity[i]][fleet.slot_type[s]]
        m = math.log(w) - sigma * sigma / 2.0
        done = t0 - start
        f_lo = _N01.cdf((math.log(done) - m) / sigma) if done > 0 and sigma > 0 else 0.0
        u = f_lo + (1.0 - f_lo) * gen.random()
        rt = math.exp(m + sigma * _N01.inv_cdf(min(max(u, 1e-12), 1 - 1e-12))) if sigma > 0 else w
        end = max(start + rt, t0)
        runtime[i][fleet.slot_type[s]] = end - start  # so that start + run time is its end, as for any job
        busy_start.append(start)
        busy_end.append(end)
    stock_seed = int(gen.integers(2**62))
    stock: _FreshByTime | _MarkovFromNow
    if params.stock_process == "markov":
        stock = _MarkovFromNow(fleet, params, t0, snap.stock, stock_seed)
    else:
        stock = _FreshByTime(fleet, stock_seed)
    return Future(arrivals, cx, tight, runtime, prov_q, busy_start, busy_end, stock)


__all__ = ["Future", "Snapshot", "sample_future", "snapshot"]
