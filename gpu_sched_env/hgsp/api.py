"""``run(policy, tasks, cluster, seed)``: one HGSP schedule and its metrics."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.policy import Policy, check_policy
from gpu_sched_env.core.rng import stream
from gpu_sched_env.hgsp.metrics import summarize
from gpu_sched_env.hgsp.model import Cluster, TaskSet, make_cluster
from gpu_sched_env.hgsp.policies import POLICIES
from gpu_sched_env.hgsp.sim import RULES, ListScheduler, Problem, Schedule, decision, decode
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
    policy: str | Policy,
    tasks: str | os.PathLike | pd.DataFrame | TaskSet = "tasks1",
    cluster: str | dict | Cluster = "small",
    seed: int = 0,
    **policy_params: Any,
) -> RunResult:
    """Schedule ``tasks`` on ``cluster`` with ``policy`` (a registered name or a policy object).

    ``tasks`` is a preset name (generated with ``seed``), a CSV path, a DataFrame or a
    TaskSet. ``seed`` also seeds the policy's random stream (SAGreedy's acceptance draws).
    Extra keyword arguments go to a named policy (e.g. ``iters=50`` for SAGreedy). A policy
    object follows :mod:`gpu_sched_env.hgsp.policies`: ``order(problem)`` is optional
    (default: arrival order), ``decode_rule`` declares a built-in placement rule.
    """
    if isinstance(policy, str):
        pol = POLICIES.make(policy, **policy_params)
    else:
        if policy_params:
            raise ConfigError(f"policy parameters {sorted(policy_params)} need a policy name, not an object")
        pol = check_policy(policy)
    ts = resolve_tasks(tasks, seed)
    cl = make_cluster(cluster)
    t0 = time.perf_counter()
    problem = Problem(ts, cl)
    pol.reset(problem, stream(seed, "hgsp.policy"))
    order = pol.order(problem) if hasattr(pol, "order") else None
    fast = getattr(pol, "decode_rule", None)
    if fast is not None:
        check_choice(
            f"{pol.name}.decode_rule", fast, RULES
        )  # a built-in placement rule: same schedule, no per-task Decision objects
        sched = decode(problem, order, fast, getattr(pol, "serial", False))
    else:
        ls = ListScheduler(problem, order, getattr(pol, "serial", False))
        while (i := ls.next_task()) is not None:
            ls.place(i, pol.decide(decision(ls, i)))
        sched = ls.result()
    wall = time.perf_counter() - t0
    extra = {"trace": list(pol.trace)} if hasattr(pol, "trace") else {}
    return RunResult(pol.name, ts.name, cl.name, seed, sched, wall, order, extra)
