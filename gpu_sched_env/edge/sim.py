"""Execution simulator: each device runs its queue respecting memory and GPU-share capacity.

A device starts the next task of its queue (strict FIFO, no overtaking) at the earliest time
at or after the previous task's start when the task's memory and GPU share fit beside the
tasks still running. Co-running tasks do not slow each other down (a task's GPU share is
reserved for it), so a task runs its profiled time times its execution-noise factor (1 when
no noise is given; :func:`execution_noise`). Devices are independent.

Because every earlier task started no later than the previous start, the usage on a device
can only fall after that instant, so the first instant where the task fits is also free
for its whole run: the per-device timeline below is exact and incremental (the env adds one
task per step with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_number
from gpu_sched_env.edge.model import Cluster, Task, task_arrays
from gpu_sched_env.edge.plan import Plan

EPS = 1e-9


class DeviceTimeline:
    """Start/end times of the tasks placed on one device, in FIFO order."""

    __slots__ = ("mem_cap", "gpu_cap", "starts", "ends", "mems", "gpus")

    def __init__(self, mem_cap: float, gpu_cap: float) -> None:
        self.mem_cap = float(mem_cap)
        self.gpu_cap = float(gpu_cap)
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.mems: list[float] = []
        self.gpus: list[float] = []

    @property
    def finish(self) -> float:
        """Time the last task ends [s] (0 when empty)."""
        return max(self.ends, default=0.0)

    def fits_alone(self, mem: float, gpu: float) -> bool:
        """Whether the task fits this device when nothing else runs."""
        return mem <= self.mem_cap + EPS and gpu <= self.gpu_cap + EPS

    def earliest_start(self, mem: float, gpu: float) -> float:
        """When the task would start if appended now [s]."""
        if not self.fits_alone(mem, gpu):
            raise ConfigError(
                f"task needing {mem:g} GB / {gpu:g} % never fits a {self.mem_cap:g} GB / {self.gpu_cap:g} % device"
            )
        t0 = self.starts[-1] if self.starts else 0.0
        for t in sorted({t0, *(e for e in self.ends if e > t0)}):
            used_m = sum(m for e, m in zip(self.ends, self.mems, strict=True) if e > t + EPS)
            used_g = sum(g for e, g in zip(self.ends, self.gpus, strict=True) if e > t + EPS)
            if used_m + mem <= self.mem_cap + EPS and used_g + gpu <= self.gpu_cap + EPS:
                return t
        raise AssertionError("unreachable: the device is empty after its last end")

    def add(self, duration: float, mem: float, gpu: float) -> tuple[float, float]:
        """Append a task; return its (start, end) [s]."""
        s = self.earliest_start(mem, gpu)
        e = s + float(duration)
        self.starts.append(s)
        self.ends.append(e)
        self.mems.append(float(mem))
        self.gpus.append(float(gpu))
        return s, e


@dataclass(frozen=True)
class SimResult:
    """Outcome of running a plan.

    ``schedule``: one row per task (task, workload, parent, device, device_name, start_s,
    end_s, duration_s, gpu_pct, mem_gb, batch, round). ``utilisation``: per device, the step
    function of GPU share in use as (times [s], fraction of capacity from that time on).
    """

    name: str
    makespan_s: float
    total_comp_s: float
    runtime_s: float
    schedule: pd.DataFrame
    utilisation: tuple[tuple[np.ndarray, np.ndarray], ...]

    def peak_utilisation(self) -> np.ndarray:
        """Per device: the study's GPU utilisation (0..1).

        The largest share of the device's GPU capacity in use at any instant from the
        beginning to the completion of task execution.
        """
        return np.array([float(u.max()) if len(u) else 0.0 for _, u in self.utilisation])

    def mean_utilisation(self) -> np.ndarray:
        """Per device: GPU share in use averaged over [0, makespan]."""
        out = []
        for t, u in self.utilisation:
            if self.makespan_s <= 0 or len(t) < 2:
                out.append(0.0)
                continue
            out.append(float(np.sum(u[:-1] * np.diff(t)) / self.makespan_s))
        return np.array(out)


def step_function(
    starts: Sequence[float], ends: Sequence[float], gpus: Sequence[float], cap: float
) -> tuple[np.ndarray, np.ndarray]:
    """GPU share in use over time from task intervals: ``(times [s], fraction of cap)``."""
    if len(starts) == 0:
        return np.array([0.0]), np.array([0.0])
    delta: dict[float, float] = {}
    for s, e, g in zip(starts, ends, gpus, strict=True):
        delta[s] = delta.get(s, 0.0) + g
        delta[e] = delta.get(e, 0.0) - g
    times = np.array(sorted(delta))
    level = np.cumsum([delta[t] for t in times]) / cap
    level[np.abs(level) < 1e-12] = 0.0
    if times[0] > 0:
        times = np.concatenate([[0.0], times])
        level = np.concatenate([[0.0], level])
    return times, level


def execution_noise(tasks: Sequence[Task], sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Run-to-run variation: a lognormal factor with mean 1 and log-sd ``sigma`` per task (0 = none).

    Factors are drawn per task id in sorted order, so every scheduler's plan of the same
    (split) tasks sees the same realised run times for the same ``rng`` seed (common random
    numbers: the comparison between schedulers is paired).
    """
    check_number("noise_sigma", sigma, lo=0.0)
    if sigma == 0:
        return np.ones(len(tasks))
    ids = sorted({t.id for t in tasks})
    f = dict(zip(ids, rng.lognormal(-0.5 * sigma**2, sigma, len(ids)), strict=True))
    return np.array([f[t.id] for t in tasks])


def simulate(plan: Plan, cluster: Cluster, noise: np.ndarray | None = None) -> SimResult:
    """Run ``plan`` on ``cluster`` and measure it.

    ``noise``: one factor per plan task multiplying its profiled run time (the realised time;
    schedulers plan with the profiles). None = run exactly the profiles.
    """
    tasks = plan.tasks
    n = len(tasks)
    if len(plan.device) != n or sorted(plan.order) != list(range(n)):
        raise ConfigError(
            f"plan {plan.name!r}: needs one device per task and an order that is a permutation of 0..{n - 1}"
        )
    t, g, m, fits = task_arrays(tasks, cluster)
    if noise is not None:
        noise = np.asarray(noise, float)
        if noise.shape != (n,) or not np.all(np.isfinite(noise)) or (noise <= 0).any():
            raise ConfigError(f"noise: need {n} finite factors > 0, got shape {noise.shape}")
        t = t * noise[:, None]
    lines = [DeviceTimeline(d.mem_gb, d.gpu_cap) for d in cluster.devices]
    start = np.zeros(n)
    end = np.zeros(n)
    for i in plan.order:
        j = plan.device[i]
        if not 0 <= j < cluster.n:
            raise ConfigError(f"plan {plan.name!r}: task {tasks[i].id!r} on device {j}; allowed 0..{cluster.n - 1}")
        if not fits[i, j]:
            raise ConfigError(f"plan {plan.name!r}: task {tasks[i].id!r} does not fit device {cluster.devices[j].name}")
        start[i], end[i] = lines[j].add(t[i, j], m[i, j], g[i, j])
    dev = np.asarray(plan.device, dtype=int)
    rows = pd.DataFrame(
        {
            "task": [x.id for x in tasks],
            "workload": [x.workload for x in tasks],
            "parent": [x.parent for x in tasks],
            "device": dev,
            "device_name": [cluster.devices[j].name for j in dev],
            "start_s": start,
            "end_s": end,
            "duration_s": end - start,
            "gpu_pct": g[np.arange(n), dev] if n else [],
            "mem_gb": m[np.arange(n), dev] if n else [],
            "batch": list(plan.batch) if plan.batch else [0] * n,
            "round": list(plan.round) if plan.round else [0] * n,
        }
    )
    util = tuple(step_function(ln.starts, ln.ends, ln.gpus, ln.gpu_cap) for ln in lines)
    makespan = float(end.max()) if n else 0.0
    return SimResult(plan.name, makespan, float((end - start).sum()), plan.runtime_s, rows, util)


def peak_usage(sim: SimResult, cluster: Cluster) -> pd.DataFrame:
    """Per device: the largest memory [GB] and GPU share [%] in use at any instant."""
    out = []
    df = sim.schedule
    for j, d in enumerate(cluster.devices):
        sub = df[df.device == j]
        peak_m = peak_g = 0.0
        for s in sub.start_s:
            run = sub[(sub.start_s <= s + EPS) & (sub.end_s > s + EPS)]
            peak_m, peak_g = max(peak_m, run.mem_gb.sum()), max(peak_g, run.gpu_pct.sum())
        out.append(
            {"device": d.name, "peak_mem_gb": peak_m, "mem_gb": d.mem_gb, "peak_gpu_pct": peak_g, "gpu_cap": d.gpu_cap}
        )
    return pd.DataFrame(out)
