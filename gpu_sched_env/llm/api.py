"""``simulate(policy, workload, dt)``: one LLM-serving run and its metrics."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from gpu_sched_env.core.policy import Policy, check_policy
from gpu_sched_env.core.rng import stream
from gpu_sched_env.llm.model import Workload, resolve_workload
from gpu_sched_env.llm.policies import POLICIES
from gpu_sched_env.llm.sim import LLMSim


@dataclass
class LLMResult:
    """A finished simulation."""

    policy: str
    workload: str
    engine: str
    sim: LLMSim
    horizon: float
    wall_s: float

    def summary(self) -> dict[str, float]:
        """weighted_wait, avg_wait, makespan, completed (+ avg_queue_wait, skipped, ...)."""
        return self.sim.summary(self.horizon)

    def to_frame(self) -> pd.DataFrame:
        """Per-request schedule."""
        return self.sim.to_frame()


def simulate(
    policy: str | Policy,
    workload: str | Workload | pd.DataFrame = "discriminating",
    dt: float = 0.01,
    engine: str = "discrete",
    seed: int = 0,
    horizon: float = math.inf,
    cluster: Mapping[str, int] | None = None,
) -> LLMResult:
    """Serve ``workload`` (preset name, Workload or request table) with ``policy`` (fifo, wsrpt).

    ``engine`` is "discrete" (the reference, step ``dt`` [s]) or "event"; ``horizon`` [s] is
    T_max for the completion count; ``seed`` draws the ``mixed`` preset; ``cluster`` gives
    ``{GPU type: count}`` for a request table.
    """
    pol = POLICIES.make(policy) if isinstance(policy, str) else check_policy(policy)
    wl = resolve_workload(workload, seed, cluster)
    t0 = time.perf_counter()
    sim = LLMSim(wl, dt, engine)
    pol.reset(sim.setup(), stream(seed, "llm.policy"))
    while sim.advance():
        sim.start(pol.decide(sim.decision()))
    return LLMResult(pol.name, wl.name, engine, sim, horizon, time.perf_counter() - t0)
