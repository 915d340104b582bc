"""What the MIG online loops share: the result of a run, and the simulator base class.

:class:`~gpu_sched_env.mig.sim.PlacementSim` (whole-job placement) and
:class:`~gpu_sched_env.mig.preempt.MinuteSim` (minute by minute, with pauses) derive from
:class:`OnlineSim`; CP-SAT's online loop returns the same :class:`RunResult`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.core.policy import Policy
from gpu_sched_env.mig.model import (
    DEFAULT_CAPACITIES,
    Job,
    Metrics,
    check_capacities,
    check_poll,
    metrics,
    schedule_frame,
)


@dataclass(frozen=True)
class MIGSetup:
    """What a MIG policy is handed at ``reset(setup, rng)``: the run's fixed world (no jobs, no simulator)."""

    capacities: tuple[int, ...]  # [MB] per instance
    poll: int  # [min] polling interval


@dataclass
class RunResult:
    """One run of a method on one data set."""

    method: str
    schedule: pd.DataFrame
    metrics: Metrics
    solve_time: float  # [s] wall clock spent deciding, summed over polls
    n_polls: int
    skipped: list[int] = field(default_factory=list)
    status: str = "heuristic"
    gap: float = float("nan")
    bound: float = float("nan")


class OnlineSim:
    """What the online loops share: checked inputs, the jobs too big to run, the run and its result.

    Subclasses implement ``reset() -> first view or None`` and ``step(decision) -> next view
    or None``, and collect the executed units in ``rows``.
    """

    def __init__(
        self, jobs: Sequence[Job], capacities: Sequence[int] = DEFAULT_CAPACITIES, poll_interval: int = 1
    ) -> None:
        self.capacities = check_capacities(capacities)
        self.poll = check_poll(poll_interval)
        self.jobs = sorted(jobs, key=lambda j: (j.arrival, j.id))
        self.rows: list[tuple[int, int, int, int]] = []
        self.reset()

    def reset(self) -> Any:
        """Start over; return the first view (None if there is nothing to do)."""
        raise NotImplementedError

    def step(self, decision: Any) -> Any:
        """Apply the policy's decision; return the next view or None at the end."""
        raise NotImplementedError

    def _runnable(self) -> list[Job]:
        """Set ``skipped`` (peak above every instance) and return the other jobs, in arrival order."""
        biggest = max(self.capacities)
        self.skipped = [j.id for j in self.jobs if j.peak > biggest]
        return [j for j in self.jobs if j.peak <= biggest]

    def result(self, method: str, solve_time: float = 0.0) -> RunResult:
        """Schedule and metrics of the finished run."""
        sched = schedule_frame(self.rows)
        return RunResult(
            method, sched, metrics(self.jobs, sched, self.skipped), solve_time, self.n_polls, list(self.skipped)
        )

    def setup(self) -> MIGSetup:
        """The run's fixed world as a policy sees it at ``reset`` (read-only)."""
        return MIGSetup(tuple(self.capacities), self.poll)

    def run(self, policy: Policy, rng: np.random.Generator) -> RunResult:
        """Drive ``policy`` (``reset(setup, rng)``, then ``decide(view)``) to the end; time its decisions.

        The policy never gets the simulator: :meth:`setup` at reset, a frozen state
        (``PlacementState`` / ``MinuteState``) at each decision.
        """
        policy.reset(self.setup(), rng)
        view = self.reset()
        spent = 0.0
        while view is not None:
            t0 = time.perf_counter()
            d = policy.decide(view)
            spent += time.perf_counter() - t0
            view = self.step(d)
        return self.result(getattr(policy, "name", type(policy).__name__), spent)
