"""``run(policy, tasks, cluster, seed)``: one HGSP schedule and its metrics."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.core.rng import stream
from gpu_sched_env.hgsp.metrics import summarize
from gpu_sched_env.hgsp.model import Cluster, TaskSet, make_cluster
from gpu_sched_env.hgsp.sim import ListScheduler, Problem, Schedule, decision, decode
from gpu_sched_env.hgsp.workload import resolve_tasks


@dataclass
class RunResult:
    """One policy's schedule on one task set and cluster."""

    policy: str
    tasks_name: str
    cluster_name: str
    seed: int
    schedule: Schedule
    wall_s: float  # [s] policy + decode wall time
    order: np.ndarray | None = None  # the priority list decoded (None = arrival order)
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, float]:
        """twct, act, dmc, dmr_pct, wt, makespan, gpu_util_pct, mem_util_pct, skipped."""
        return summarize(self.schedule)

    def to_frame(self) -> pd.DataFrame:
        """Per-task schedule table."""
        return self.schedule.to_frame()


def run(
    policy: Any,
    tasks: str | os.PathLike | pd.DataFrame | TaskSet = "tasks1",
    cluster: str | dict | Cluster = "small",
    seed: int = 0,
    **policy_params: Any,
) -> RunResult:
    """Schedule ``tasks`` on ``cluster`` with ``policy`` (name: fifo, greedy, sagreedy; or object).

    ``tasks`` is a preset name (generated with ``seed``), a CSV path, a DataFrame or a
    TaskSet. ``seed`` also seeds the policy's random stream (SAGreedy's acceptance draws).
    Extra keyword arguments go to the policy (e.g. ``iters=50`` for SAGreedy).
    """
    from agents.heuristics.hgsp import FIFO, Greedy, make_policy  # lazy: agents import this package

    pol = make_policy(policy, **policy_params) if isinstance(policy, str) else policy
    ts = resolve_tasks(tasks, seed)
    cl = make_cluster(cluster)
    t0 = time.perf_counter()
    problem = Problem(ts, cl)
    pol.reset(stream(seed, "hgsp.policy"))
    order = pol.order(problem)
    fast = {FIFO.decide: "fifo", Greedy.decide: "eft"}.get(getattr(type(pol), "decide", None))
    if fast is not None:  # a built-in placement rule: same schedule, no per-task Decision objects
        sched = decode(problem, order, fast, getattr(pol, "serial", False))
    else:
        ls = ListScheduler(problem, order, getattr(pol, "serial", False))
        while (i := ls.next_task()) is not None:
            ls.place(i, pol.decide(decision(ls, i)))
        sched = ls.result()
    wall = time.perf_counter() - t0
    extra = {"trace": list(pol.trace)} if hasattr(pol, "trace") else {}
    return RunResult(pol.name, ts.name, cl.name, seed, sched, wall, order, extra)

