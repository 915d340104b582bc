"""The minute-by-minute online loop for policies that may pause and migrate jobs.

Same model as :mod:`gpu_sched_agents.heuristics.mig.cpsat` (docs/mig.md, "Interruptibility"): a job is
*present* at minute ``t`` once released (its arrival's poll time) and until all its units
have run. At every minute the policy sees the present jobs and their progress and returns
which job runs on which instance during ``[t, t + 1)``; a present job not chosen is paused
and may resume later on any instance that holds its next minute (a stoppable job), or must
keep running where it started (a job that is not stoppable, once started). Minutes in which
nothing is present are skipped to the next release. The run ends when every job is done.

The result is the same unit table (job, k, instance, start) as every other method's, so
:func:`~gpu_sched_env.mig.model.check_schedule` and :func:`~gpu_sched_env.mig.model.metrics`
score it exactly as they score CP-SAT's plan (makespan = end of the last unit).

Policies follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(sim, rng)`` with the
:class:`MinuteSim`, then ``decide(state) -> {job id: instance}`` for a :class:`MinuteState`.
A policy class sets ``minute_by_minute = True`` so that
:func:`~gpu_sched_env.mig.sim.run_policy` drives it with this loop (``MinuteSim.run``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpu_sched_env.core.errors import InvalidActionError
from gpu_sched_env.mig.model import (
    Job,
    release_time,
)
from gpu_sched_env.mig.online import OnlineSim


@dataclass(frozen=True)
class Present:
    """One present job at a minute: the job, units done, and where it ran last (-1: nowhere yet)."""

    job: Job
    done: int
    last_instance: int
    ran_last_minute: bool

    @property
    def remaining(self) -> int:
        """Units still to run [min]."""
        return self.job.length - self.done

    def need(self) -> int:
        """Memory [MB] an instance must hold for the next unit (the peak if not stoppable)."""
        return self.job.mem[self.done] if self.job.stoppable else self.job.peak

    @property
    def pinned(self) -> bool:
        """A started job that is not stoppable: it must run now, where it runs."""
        return not self.job.stoppable and self.done > 0


@dataclass(frozen=True)
class MinuteState:
    """What a minute-by-minute policy may know at minute ``time`` (no future jobs)."""

    time: int  # [min]
    capacities: tuple[int, ...]  # [MB]
    present: tuple[Present, ...]  # released, unfinished jobs, in arrival order


class MinuteSim(OnlineSim):
    """Step-able minute-by-minute online simulator (see module docstring)."""

    def reset(self) -> MinuteState | None:
        """Start over; return the first minute's state (None if there is nothing to run)."""
        todo = self._runnable()
        self.release = {j.id: release_time(j.arrival, self.poll) for j in todo}
        self._todo = todo
        self.done = {j.id: 0 for j in todo}
        self.last = {j.id: -1 for j in todo}
        self.ran: set[int] = set()
        self.rows: list[tuple[int, int, int, int]] = []
        self.n_polls = len(set(self.release.values()))
        self.t = min(self.release.values(), default=0)
        return self.state()

    def _present(self) -> list[Job]:
        return [j for j in self._todo if self.release[j.id] <= self.t and self.done[j.id] < j.length]

    def state(self) -> MinuteState | None:
        """The current minute's state, or None once every job is done."""
        if all(self.done[j.id] == j.length for j in self._todo):
            return None
        pres = self._present()
        if not pres:  # nothing present: skip to the next release
            self.t = min(r for jid, r in self.release.items() if r > self.t)
            self.ran = set()
            pres = self._present()
        return MinuteState(
            self.t, self.capacities, tuple(Present(j, self.done[j.id], self.last[j.id], j.id in self.ran) for j in pres)
        )

    def step(self, decision: Mapping[int, int]) -> MinuteState | None:
        """Run ``decision`` (job id -> instance) for one minute; return the next state or None."""
        st = self.state()
        if st is None:
            raise InvalidActionError("the run is over: every job is done")
        byid = {p.job.id: p for p in st.present}
        used: dict[int, int] = {}
        for jid, inst in decision.items():
            jid, inst = int(jid), int(inst)
            p = byid.get(jid)
            if p is None:
                raise InvalidActionError(f"job {jid} is not present at t={self.t} min; present: {sorted(byid)}")
            if not 0 <= inst < len(self.capacities):
                raise InvalidActionError(
                    f"job {jid}: instance {inst} does not exist; allowed: 0..{len(self.capacities) - 1}"
                )
            if self.capacities[inst] < p.need():
                raise InvalidActionError(
                    f"job {jid}: instance {inst} holds {self.capacities[inst]} MB < {p.need()} MB needed at t={self.t} "
                    "min"
                )
            if inst in used:
                raise InvalidActionError(f"instance {inst} given to jobs {used[inst]} and {jid} at t={self.t} min")
            if p.pinned and inst != p.last_instance:
                raise InvalidActionError(f"job {jid} is not stoppable and runs on instance {p.last_instance}")
            used[inst] = jid
        for p in st.present:
            if p.pinned and p.job.id not in decision:
                raise InvalidActionError(f"job {p.job.id} is not stoppable: it cannot pause at t={self.t} min")
        for inst, jid in used.items():
            self.rows.append((jid, self.done[jid], inst, self.t))
            self.done[jid] += 1
            self.last[jid] = inst
        self.ran = set(used.values())
        self.t += 1
        return self.state()
