"""The CGRSP discrete-event simulator.

A hand-written event loop rather than a DES library: CGRSP has two event kinds
(arrival, completion), arrivals are known in advance and read from a sorted array with a
pointer, and completions (at most ``C_max`` pending) live in :class:`EventQueue`. This is
several times faster than a process-based DES (``scripts/bench_sim.py`` measures it against
a bare heapq loop).

Control is inverted so the same simulator serves batch runs and the Gymnasium env:

* :meth:`Simulator.advance` processes events until a *decision point* (a slot is idle and
  a job waits), reads every type's stock status from the stock process (drawn afresh by
  default, see :mod:`gpu_sched_env.cgrsp.stock`), and returns ``True``; it
  returns ``False`` once every job has completed.
* :meth:`Simulator.assign` dispatches one waiting job to one idle slot at the current time.
* :func:`run` loops ``advance`` → ``policy.decide`` → ``assign``.

A policy never sees the simulator: :func:`run` (and every other driver) hands it the
simulator's :class:`~gpu_sched_env.cgrsp.view.SimView` (``sim.view``), which exposes what a
scheduler may know (clock, arrived jobs' public attributes, queue, slots, stock status, the
fleet and parameters) and neither :meth:`Simulator.assign`, :meth:`Simulator.advance` nor the
realised draws (run times, provisioning delays, future arrivals). Realised run times and
provisioning delays are private here too (``_rt``, ``_start``).
"""

from __future__ import annotations

import numpy as np

from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.fork import Future, Snapshot, sample_future, snapshot
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.stock import make_stock_process
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.cgrsp.workload import Workload, generate
from gpu_sched_env.core.errors import InvalidActionError
from gpu_sched_env.core.events import EventQueue
from gpu_sched_env.core.policy import Policy
from gpu_sched_env.core.rng import stream

_INF = float("inf")


class PolicyStalledError(RuntimeError):
    """A policy left jobs waiting at idle slots with no future event to wake it."""


class Simulator:
    """One day of CGRSP for a parameter set and a seed."""

    def __init__(self, params: CGRSPParams, seed: int = 0, workload: Workload | None = None) -> None:
        self.params = params
        self.seed = int(seed)
        self.fleet = Fleet.from_params(params)
        wl = workload if workload is not None else generate(params, self.seed)
        self.workload = wl
        self.n_jobs = wl.n_jobs
        self.submit: list[float] = wl.submit.tolist()
        self.deadline: list[float] = wl.deadline.tolist()
        self.complexity: list[int] = wl.complexity.tolist()
        self.tight: list[bool] = wl.tight.tolist()
        self._rt: list[list[float]] = wl.runtime.tolist()
        n, c = self.n_jobs, params.c_max
        self.dispatch = [_INF] * n
        self._start = [_INF] * n
        self.completion = [_INF] * n
        self.job_slot = [-1] * n
        self.job_stock = [-1] * n  # stock level of the slot's type at dispatch
        self.slot_job = [-1] * c  # job on each slot, -1 = idle
        self.slot_dispatch = [0.0] * c
        self.slot_level = [0] * c
        self.slot_busy_time = [0.0] * c  # [s] dispatch→completion, summed
        self.n_idle = c
        self.waiting: dict[int, None] = {}  # insertion-ordered set: submit order
        self.dispatched: list[int] = []  # job ids in dispatch order
        self.n_arrived = 0
        self.n_completed = 0
        self.t = 0.0
        self.stock: list[int] = [0] * self.fleet.n_types
        self.n_decisions = 0
        self._events = EventQueue()
        self._stock = make_stock_process(params, self.fleet, self.seed)  # fresh or markov (stock.py)
        # One provisioning quantile per job (not per dispatch in order): the delay of a job
        # does not depend on the order in which a decision point's assignments are made, so
        # an env that offers slots one at a time replays simulate() exactly, and every policy
        # gives the same job the same quantile of its stock level's delay range (CRN).
        self._prov_q: list[float] = stream(self.seed, "cgrsp/provisioning").random(self.n_jobs).tolist()
        self._n_public = 0  # jobs the view shows
        self.view = SimView(self)  # what policies are handed (read-only; no realised draws)

    # ------------------------------------------------------------------ public view
    @property
    def done(self) -> bool:
        """True once every job has completed."""
        return self.n_completed == self.n_jobs

    def idle_slots(self) -> list[int]:
        """Idle slot indices in registration order."""
        sj = self.slot_job
        return [s for s in range(len(sj)) if sj[s] < 0]

    def wbar(self, job: int, slot: int) -> float:
        """Expected run time [s] of ``job`` on ``slot``'s GPU type."""
        return self.fleet.wbar[self.complexity[job]][self.fleet.slot_type[slot]]

    def started(self, slot: int) -> bool:
        """Whether the job on a busy ``slot`` has finished provisioning (observable)."""
        j = self.slot_job[slot]
        return j >= 0 and self._start[j] <= self.t

    def start_if_started(self, job: int) -> float:
        """The realised start [s] of ``job`` once it has happened (``<= t``), else ``inf``."""
        s = self._start[job]
        return s if s <= self.t else _INF

    def expected_free(self, slot: int) -> float:
        """When ``slot`` is expected to be free [s], from what a scheduler can know.

        Idle: now. Running: its start + W̄. Provisioning: dispatch + the mean delay of the
        stock level it was dispatched under + W̄. Never earlier than now.
        """
        j = self.slot_job[slot]
        t = self.t
        if j < 0:
            return t
        w = self.fleet.wbar[self.complexity[j]][self.fleet.slot_type[slot]]
        if self._start[j] <= t:
            f = self._start[j] + w
        else:
            f = max(t, self.slot_dispatch[slot] + self.fleet.delay_mean[self.slot_level[slot]]) + w
        return f if f > t else t

    def realised(self, job: int) -> tuple[float, float]:
        """``(start time [s], run time [s])`` of a dispatched ``job``, as drawn.

        For accounting after the fact (the env's reward books the provisioning delay and the
        run cost at dispatch); never for a policy's decisions.
        """
        return self._start[job], self._rt[job][self.fleet.slot_type[self.job_slot[job]]]

    def realised_starts(self) -> np.ndarray:
        """Realised start [s] of every job (``inf``: not dispatched yet), as a new array.

        For records and renderers, not for policies: a start later than :attr:`t` is a
        provisioning delay that has not happened yet (a policy uses :meth:`started`).
        """
        return np.asarray(self._start)

    def has_future_event(self) -> bool:
        """Whether anything is still to happen (an arrival or a completion)."""
        return self.n_arrived < self.n_jobs or bool(self._events)

    # ------------------------------------------------------------------ dynamics
    def advance(self) -> bool:
        """Process events up to the next decision point; ``False`` when the day is over."""
        ev = self._events
        sub = self.submit
        n = self.n_jobs
        waiting = self.waiting
        while True:
            ta = sub[self.n_arrived] if self.n_arrived < n else _INF
            tc = ev.peek_time()
            t = ta if ta < tc else tc
            if t == _INF:
                if waiting:  # cannot happen: idle slots + waiting jobs is a decision point
                    raise PolicyStalledError(f"{len(waiting)} jobs wait and nothing is left to happen")
                return False
            while tc <= t:
                self._complete(*ev.pop())
                tc = ev.peek_time()
            while self.n_arrived < n and sub[self.n_arrived] <= t:
                waiting[self.n_arrived] = None
                self.n_arrived += 1
            self.t = t
            if self.n_idle and waiting:
                self.stock = self._stock.levels(t)
                self.n_decisions += 1
                if self._n_public < self.n_arrived:  # the jobs that arrived become visible to policies
                    self.view._catch_up(self._n_public, self.n_arrived)
                    self._n_public = self.n_arrived
                return True

    def _complete(self, t: float, slot: int, job: int) -> None:
        self.completion[job] = t
        self.slot_job[slot] = -1
        self.slot_busy_time[slot] += t - self.slot_dispatch[slot]
        self.n_idle += 1
        self.n_completed += 1

    def assign(self, job: int, slot: int) -> None:
        """Dispatch waiting ``job`` to idle ``slot`` now; raises on an illegal pair."""
        if job not in self.waiting:
            raise InvalidActionError(
                f"job {job!r} is not waiting at t={self.t:.1f}s (waiting: {len(self.waiting)} jobs)"
            )
        if not (0 <= slot < len(self.slot_job)) or self.slot_job[slot] >= 0:
            raise InvalidActionError(f"slot {slot!r} is not idle at t={self.t:.1f}s; idle slots: {self.idle_slots()}")
        del self.waiting[job]
        self.dispatched.append(job)
        fl = self.fleet
        g = fl.slot_type[slot]
        lvl = self.stock[g]
        t = self.t
        start = t + fl.delay_lo[lvl] + self._prov_q[job] * fl.delay_span[lvl]
        self.dispatch[job] = t
        self._start[job] = start
        self.job_slot[job] = slot
        self.job_stock[job] = lvl
        self.slot_job[slot] = job
        self.slot_dispatch[slot] = t
        self.slot_level[slot] = lvl
        self.n_idle -= 1
        self._events.push(start + self._rt[job][g], kind=slot, payload=job)  # kind = slot index

    def fork(self, seed: int, horizon_s: float | None = None) -> Fork:
        """A public copy of this day for planning: what a scheduler knows now, a future from the public model.

        The copy (:class:`~gpu_sched_env.cgrsp.fork.Fork`) reads this simulator through its
        view only and replaces every realised future draw (run times, provisioning delays,
        arrivals, stock) by draws from the public model seeded by ``seed``; forks with the
        same seed are identical (common random numbers across candidate plans). Arrivals are
        drawn up to ``t + horizon_s`` (``None``: the rest of the day). This simulator is not
        changed. See :mod:`gpu_sched_env.cgrsp.fork`; a fork of a fork is a fork.
        """
        snap = snapshot(self.view)
        return Fork(self.params, self.fleet, snap, sample_future(snap, self.fleet, self.params, horizon_s, seed))

    def result(self, policy: str = "", day: str = "") -> SimResult:
        """Per-job records and metrics (only meaningful once :attr:`done`)."""
        return SimResult.from_sim(self, policy=policy, day=day)


class Fork(Simulator):
    """A simulator started from a :class:`Snapshot` and one sampled :class:`Future`.

    Model job ``i`` is ``snap.jobs[i]`` for the arrived jobs (busy slots' first, then the
    queue in submit order), then the sampled arrivals (:attr:`real_ids` maps the arrived
    ones back). Its realised values are the future's samples, never the real day's;
    :attr:`n_busy0` jobs were on slots at the fork.
    """

    def __init__(self, params: CGRSPParams, fleet: Fleet, snap: Snapshot, fut: Future) -> None:  # noqa: PLR0915
        self.params, self.seed, self.fleet, self.workload = params, 0, fleet, None
        n_arr = len(snap.jobs)
        self.n_jobs = n = n_arr + len(fut.arrivals)
        w, lw = params.tight_window, params.loose_window
        self.submit = snap.submit + fut.arrivals
        self.deadline = snap.deadline + [a + (w if tg else lw) for a, tg in zip(fut.arrivals, fut.tight)]
        self.complexity = snap.complexity + fut.complexity
        self.tight = snap.tight + fut.tight
        self._rt = fut.runtime  # read-only here (shared by the forks of one future)
        self.dispatch, self._start, self.completion = [_INF] * n, [_INF] * n, [_INF] * n
        self.job_slot, self.job_stock = [-1] * n, [-1] * n
        self.slot_job = list(snap.slot_job)
        self.slot_dispatch = list(snap.slot_dispatch)
        self.slot_level = list(snap.slot_level)
        self.slot_busy_time = [0.0] * len(snap.slot_job)
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
        self.n_arrived, self.n_completed, self.t = n_arr, 0, snap.t
        self.stock = list(snap.stock)
        self.n_decisions = 0
        self._stock = fut.stock
        self._prov_q = fut.prov_q
        self.n_busy0 = snap.n_busy
        self.real_ids = snap.jobs
        self._n_public = n_arr
        self.view = SimView(self)  # a policy sees the fork through a view, as on the real day

    def slot_end(self, s: int) -> float:
        """When slot ``s`` frees in this fork [s] (the model's own draw; ``inf`` when idle)."""
        i = self.slot_job[s]
        return _INF if i < 0 else self._start[i] + self._rt[i][self.fleet.slot_type[s]]


def run(sim: Simulator, policy: Policy) -> Simulator:
    """Drive ``sim`` to the end of the day with ``policy`` (already ``reset(sim.view, rng)``)."""
    decide = policy.decide
    assign = sim.assign
    view = sim.view
    while sim.advance():
        for job, slot in decide(view):
            assign(job, slot)
        if sim.n_idle and sim.waiting and not sim.has_future_event():
            raise PolicyStalledError(
                f"policy {getattr(policy, 'name', policy)!r} left {len(sim.waiting)} jobs waiting at "
                f"{sim.n_idle} idle slots at t={sim.t:.1f}s with nothing left to happen"
            )
    return sim
