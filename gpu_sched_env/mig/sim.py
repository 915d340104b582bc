"""The online polling loop for placement policies (Best-Fit and any agent).

At every poll time ``t`` (multiples of ``poll_interval`` [min]) the scheduler takes all jobs
that arrived in ``(t − Δ, t]``, then, one job at a time (deferred jobs first, then new ones
in arrival order), asks the policy for an action: an instance index, or ``defer`` (=
number of instances) to keep the job for the next poll. A placed job is appended to that
instance's plan: it runs its whole series there, contiguously, from
``max(t, instance free time)``. Defer is only allowed while more jobs are still to come, so
every run ends; the run ends when the last job is placed. Jobs whose peak memory exceeds
every instance are reported in ``skipped``, never silently dropped.

:class:`PlacementSim` is a step-able state machine, so the Gymnasium env drives exactly
the same code as :func:`run_policy`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpu_sched_env.core.errors import InvalidActionError
from gpu_sched_env.core.policy import Policy, check_policy
from gpu_sched_env.core.rng import stream
from gpu_sched_env.mig.model import (
    DEFAULT_CAPACITIES,
    Job,
    release_time,
)
from gpu_sched_env.mig.online import OnlineSim, RunResult
from gpu_sched_env.mig.policies import POLICIES
from gpu_sched_env.mig.preempt import MinuteSim

__all__ = ["OnlineSim", "PlacementSim", "PlacementState", "RunResult", "run_policy"]


@dataclass(frozen=True)
class PlacementState:
    """What a placement policy may know at a decision (no future jobs, nothing hidden)."""

    time: int  # poll time [min]
    job: Job  # the job to place now
    capacities: tuple[int, ...]  # [MB]
    free_at: tuple[int, ...]  # time each instance's plan ends [min]
    waiting: tuple[Job, ...]  # other jobs taken and not yet placed at this poll
    can_defer: bool
    n_placed: int

    @property
    def defer_action(self) -> int:
        """The action index meaning 'defer'."""
        return len(self.capacities)

    def mask(self) -> np.ndarray:
        """Legal actions: instances that can hold the job's peak, then defer."""
        fits = [c >= self.job.peak for c in self.capacities]
        return np.array([*fits, self.can_defer], dtype=bool)


class PlacementSim(OnlineSim):
    """Step-able online placement simulator (see module docstring)."""

    def reset(self) -> PlacementState | None:
        """Start over; return the first decision (or None if there is nothing to place)."""
        self._todo = self._runnable()
        self._next = 0  # index into _todo of the next job not yet taken
        self.t = -1  # no poll yet
        self.free = [0] * len(self.capacities)
        self.queue: list[Job] = []
        self.deferred: list[Job] = []
        self.rows: list[tuple[int, int, int, int]] = []
        self.placed: dict[int, tuple[int, int]] = {}
        self.n_polls = 0
        return self._advance()

    @property
    def done(self) -> bool:
        """True once every (placeable) job is placed."""
        return self._next >= len(self._todo) and not self.queue and not self.deferred

    def _take(self) -> None:
        new = []
        while self._next < len(self._todo) and release_time(self._todo[self._next].arrival, self.poll) <= self.t:
            new.append(self._todo[self._next])
            self._next += 1
        self.queue = self.deferred + new
        self.deferred = []
        self.n_polls += 1

    def _advance(self) -> PlacementState | None:
        while not self.queue:
            if self.done:
                return None
            if self.deferred:
                self.t += self.poll
            else:  # polls that would find nothing change nothing: skip to the next arrival's
                self.t = max(self.t + self.poll, release_time(self._todo[self._next].arrival, self.poll))
            self._take()
        return self.state()

    def state(self) -> PlacementState:
        """The current decision."""
        return PlacementState(
            time=self.t,
            job=self.queue[0],
            capacities=self.capacities,
            free_at=tuple(self.free),
            waiting=tuple(self.queue[1:]),
            can_defer=self._next < len(self._todo),
            n_placed=len(self.placed),
        )

    def step(self, action: int) -> PlacementState | None:
        """Apply ``action`` to the current job; return the next decision or None at the end."""
        st = self.state()
        a = int(action)
        mask = st.mask()
        if not 0 <= a < mask.size or not mask[a]:
            legal = [i for i in range(mask.size) if mask[i]]
            why = (
                "defer is only allowed while more jobs are to come"
                if a == st.defer_action
                else (
                    f"instance memory {self.capacities[a]} MB < job peak {st.job.peak} MB"
                    if 0 <= a < len(self.capacities)
                    else "no such action"
                )
            )
            raise InvalidActionError(
                f"action {a} is not legal for job {st.job.id} at t={self.t} min ({why}); legal: {legal}"
            )
        job = self.queue.pop(0)
        if a == st.defer_action:
            self.deferred.append(job)
        else:
            start = max(self.t, self.free[a])
            self.free[a] = start + job.length
            self.placed[job.id] = (a, start)
            self.rows.extend((job.id, k, a, start + k) for k in range(job.length))
        return self._advance()


def run_policy(
    jobs: Sequence[Job],
    policy: str | Policy,
    capacities: Sequence[int] = DEFAULT_CAPACITIES,
    poll_interval: int = 1,
    seed: int = 0,
) -> RunResult:
    """Run a placement policy (registered name or object) over the polling loop.

    The policy follows :class:`~gpu_sched_env.core.policy.Policy`: ``reset(setup, rng)`` (a
    frozen :class:`~gpu_sched_env.mig.online.MIGSetup`) with
    the run's policy stream, then ``decide(state) -> action`` (see
    :mod:`gpu_sched_env.mig.policies`). A policy with ``minute_by_minute = True`` is run
    on :class:`gpu_sched_env.mig.preempt.MinuteSim` instead (it may pause jobs).
    """
    policy = POLICIES.make(policy) if isinstance(policy, str) else check_policy(policy)
    # a policy that pauses and migrates is driven minute by minute
    loop = MinuteSim if getattr(policy, "minute_by_minute", False) else PlacementSim
    sim: OnlineSim = loop(jobs, capacities, poll_interval)
    return sim.run(policy, stream(seed, "mig.policy"))
