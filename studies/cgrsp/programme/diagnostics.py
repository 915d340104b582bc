"""Diagnostics that explain where the simulator departs from the published figures.

They re-simulate a few runs with an observing wrapper around a policy (the wrapper only
reads what the policy itself may read) and break slot time down into execution and
provisioning by stock level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.policies import build_policy, per_policy_kwargs, split_kwargs


class IdleRecorder:
    """Wraps a policy and records the number of idle slots at each of its decision points."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", str(inner))
        self.idle: list[int] = []

    def reset(self, sim: Any, rng: Any = None) -> None:
        """Reset the wrapped policy and the record."""
        self.idle = []
        self.inner.reset(sim, rng)

    def decide(self, sim: Any) -> list[tuple[int, int]]:
        """Record, then delegate."""
        self.idle.append(sim.n_idle)
        return self.inner.decide(sim)


def idle_slots_at_decisions(
    policies: Sequence[str], seeds: Sequence[int], day: str = "hectic", **params: Any
) -> pd.DataFrame:
    """Per policy: decision points, and the share with exactly 1, 2, ≥ 3 idle slots."""
    rows = []
    kw = per_policy_kwargs(day, params, policies)
    for pol in policies:
        counts: list[int] = []
        sim_params, knobs = split_kwargs(kw[pol], [pol])
        for s in seeds:
            rec = IdleRecorder(build_policy(pol, make_params(day, **sim_params), **knobs[pol]))
            simulate(rec, day=day, seed=s, **sim_params)
            counts += rec.idle
        c = np.asarray(counts)
        rows.append(
            {
                "policy": pol,
                "decisions/run": c.size / len(seeds),
                "1 idle %": 100 * np.mean(c == 1),
                "2 idle %": 100 * np.mean(c == 2),
                "≥3 idle %": 100 * np.mean(c >= 3),
            }
        )
    return pd.DataFrame(rows).set_index("policy")


def slot_time_breakdown(
    policies: Sequence[str], seeds: Sequence[int], day: str = "hectic", **params: Any
) -> pd.DataFrame:
    """Per policy: how the slots' time until the makespan splits (%), seed means.

    Columns: makespan (h), execution %, provisioning on Low / Medium / High stock %,
    idle %, and the share of Low-stock dispatches made in the 09–18 UTC band.
    """
    rows = []
    kw = per_policy_kwargs(day, params, policies)
    for pol in policies:
        acc: list[dict[str, float]] = []
        for s in seeds:
            r = simulate(pol, day=day, seed=s, **kw[pol])
            j = r.jobs
            p = r.params
            mk = float(j["completion"].max())
            total = p.c_max * mk
            prov = j["start"] - j["dispatch"]
            utc_h = np.mod(p.start_hour_utc + j["dispatch"] / 3600.0, 24.0)
            low = j["stock_at_dispatch"] == "Low"
            acc.append(
                {
                    "makespan (h)": mk / 3600.0,
                    "execution %": 100 * j["runtime"].sum() / total,
                    "provisioning Low %": 100 * prov[low].sum() / total,
                    "provisioning Medium %": 100 * prov[j["stock_at_dispatch"] == "Medium"].sum() / total,
                    "provisioning High %": 100 * prov[j["stock_at_dispatch"] == "High"].sum() / total,
                    "Low dispatches": float(low.sum()),
                    "Low in 09–18 UTC %": 100 * float(((utc_h >= 9) & (utc_h < 18))[low].mean())
                    if low.any()
                    else np.nan,
                }
            )
        m = pd.DataFrame(acc).mean()
        m["idle %"] = (
            100 - m[["execution %", "provisioning Low %", "provisioning Medium %", "provisioning High %"]].sum()
        )
        rows.append({"policy": pol, **m.to_dict()})
    return pd.DataFrame(rows).set_index("policy")


__all__ = ["IdleRecorder", "idle_slots_at_decisions", "slot_time_breakdown"]
