"""MIG model: jobs with per-minute memory series, GPU instances, presets and schedules.

Time is slotted in whole minutes. Unit ``(j, k)`` is minute ``k`` of job ``j``; it occupies
one instance for ``[s, s + 1)`` and needs that instance's memory >= ``mem[k]`` [MB].
A schedule is a table of units (job, k, instance, start); :func:`check_schedule` proves
it obeys every rule of the model (see docs/mig.md, "Interruptibility").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_number

DEFAULT_CAPACITIES: tuple[int, ...] = (2000, 1000, 1000)  # [MB] per MIG instance


@dataclass(frozen=True)
class Job:
    """One job: arrival [min], memory series [MB per minute], deadline [min, absolute; -1 none]."""

    id: int
    arrival: float
    mem: tuple[int, ...]
    deadline: int = -1
    stoppable: bool = True
    priority: int = 0

    @property
    def length(self) -> int:
        """Run length [min]."""
        return len(self.mem)

    @property
    def peak(self) -> int:
        """Largest per-minute memory [MB]."""
        return max(self.mem)


# [MB] the largest instance memory: 10 TB, 70x the largest GPU's (141 GB); memories are int64
# arrays in the simulator, so sums over a million jobs stay far inside their range.
MAX_CAPACITY_MB = 10**7
# [min] the longest polling interval: about two years. Poll times are multiples of it, and a
# makespan of a million jobs of at most a few polls each stays below 2^53 (exact in float64).
MAX_POLL_MIN = 10**6


def check_capacities(capacities: Sequence[int]) -> tuple[int, ...]:
    """Validate instance memories [MB] (integers in [1, :data:`MAX_CAPACITY_MB`], at least one)."""
    caps = tuple(capacities)
    if not caps:
        raise ConfigError("capacities = (): allowed: at least one instance memory [MB]")
    for i, c in enumerate(caps):
        check_number(f"capacities[{i}]", c, lo=1, hi=MAX_CAPACITY_MB, integer=True)
    return tuple(int(c) for c in caps)


def check_poll(poll_interval: int) -> int:
    """Validate the polling interval [min] (an integer in [1, :data:`MAX_POLL_MIN`]: plans live on a minute grid)."""
    return int(check_number("poll_interval", poll_interval, lo=1, hi=MAX_POLL_MIN, integer=True))


def release_time(arrival: float, poll_interval: int) -> int:
    """First poll time (multiple of ``poll_interval``) at or after ``arrival`` [min]."""
    return int(math.ceil(arrival / poll_interval - 1e-12)) * poll_interval


def schedule_frame(rows: Sequence[tuple[int, int, int, int]]) -> pd.DataFrame:
    """Tidy unit table with columns job, k, instance, start [min], sorted by (job, k)."""
    df = pd.DataFrame(list(rows), columns=["job", "k", "instance", "start"], dtype=np.int64)
    return df.sort_values(["job", "k"], kind="stable").reset_index(drop=True)


def check_schedule(
    jobs: Sequence[Job],
    capacities: Sequence[int],
    sched: pd.DataFrame,
    poll_interval: int,
    skipped: Sequence[int] = (),
) -> None:
    """Raise AssertionError unless ``sched`` obeys every rule of the model."""
    caps = check_capacities(capacities)
    byid = {j.id: j for j in jobs}
    want = {(j.id, k) for j in jobs if j.id not in set(skipped) for k in range(j.length)}
    got = list(zip(sched["job"].tolist(), sched["k"].tolist(), strict=True))
    assert len(got) == len(set(got)), "a unit is scheduled twice"
    assert set(got) == want, "scheduled units differ from the jobs' units"
    busy = set()
    for j, k, i, s in sched[["job", "k", "instance", "start"]].itertuples(index=False):
        job = byid[j]
        assert 0 <= i < len(caps), f"unit {(j, k)} on unknown instance {i}"
        assert caps[i] >= job.mem[k], f"unit {(j, k)} needs {job.mem[k]} MB > instance {i}"
        assert s >= release_time(job.arrival, poll_interval), f"unit {(j, k)} starts before release"
        assert (i, s) not in busy, f"instance {i} runs two units at {s}"
        busy.add((i, s))
    for j, g in sched.groupby("job"):
        g = g.sort_values("k")
        st = g["start"].to_numpy()
        assert np.all(np.diff(st) >= 1), f"job {j}: units out of order or in parallel"
        if not byid[j].stoppable:
            assert np.all(np.diff(st) == 1), f"job {j} is not stoppable but pauses"
            assert g["instance"].nunique() == 1, f"job {j} is not stoppable but migrates"


@dataclass(frozen=True)
class Metrics:
    """Outcome of a schedule; times in minutes from time 0."""

    makespan: int
    total_completion: int
    mean_flow: float
    deadline_misses: int
    n_jobs: int
    n_skipped: int


def metrics(jobs: Sequence[Job], sched: pd.DataFrame, skipped: Sequence[int] = ()) -> Metrics:
    """Makespan, total completion time, mean flow time (completion − arrival), deadline misses."""
    if len(sched) == 0:
        return Metrics(0, 0, 0.0, 0, 0, len(skipped))
    comp = (sched.groupby("job")["start"].max() + 1).to_dict()
    byid = {j.id: j for j in jobs}
    flows = [c - byid[j].arrival for j, c in comp.items()]
    misses = sum(1 for j, c in comp.items() if byid[j].deadline >= 0 and c > byid[j].deadline)
    return Metrics(
        makespan=int(max(comp.values())),
        total_completion=int(sum(comp.values())),
        mean_flow=float(np.mean(flows)),
        deadline_misses=int(misses),
        n_jobs=len(comp),
        n_skipped=len(skipped),
    )
