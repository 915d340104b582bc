"""Per-job records and per-run metrics (spec §2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.params import COMPLEXITIES, STOCK_LEVELS, CGRSPParams


class SimRecords(Protocol):
    """What :meth:`SimResult.from_sim` reads: the simulator's public records (no import of it)."""

    params: CGRSPParams
    seed: int
    n_jobs: int
    n_decisions: int
    fleet: Any
    workload: Any
    submit: list[float]
    dispatch: list[float]
    completion: list[float]
    deadline: list[float]
    complexity: list[int]
    tight: list[bool]
    job_slot: list[int]
    job_stock: list[int]
    slot_busy_time: list[float]

    def realised_starts(self) -> np.ndarray: ...


@dataclass
class SimResult:
    """Outcome of one simulated day: arrays per job, ``summary()`` and ``jobs`` (DataFrame)."""

    params: CGRSPParams
    policy: str
    day: str
    seed: int
    submit: np.ndarray
    dispatch: np.ndarray
    start: np.ndarray
    completion: np.ndarray
    deadline: np.ndarray
    slot: np.ndarray
    gpu_type: np.ndarray  # type index
    complexity: np.ndarray
    tight: np.ndarray
    runtime: np.ndarray  # realised run time on the slot's type [s]
    stock: np.ndarray  # stock level at dispatch
    slot_busy_time: np.ndarray  # [s] per slot, dispatch→completion
    type_names: list[str]
    price_per_s: np.ndarray
    n_decisions: int
    job_id: np.ndarray | None = None  # trace labels (None: row numbers)
    _jobs: pd.DataFrame | None = field(default=None, repr=False)

    @classmethod
    def from_sim(cls, sim: SimRecords, policy: str = "", day: str = "") -> SimResult:
        """Collect a finished simulator's records."""
        slot = np.asarray(sim.job_slot, dtype=np.int64)
        fl = sim.fleet
        slot_type = np.asarray(fl.slot_type, dtype=np.int64)
        gtype = np.where(slot >= 0, slot_type[np.maximum(slot, 0)], -1)
        rt_all = sim.workload.runtime
        runtime = np.where(gtype >= 0, rt_all[np.arange(sim.n_jobs), np.maximum(gtype, 0)], np.nan)
        return cls(
            params=sim.params,
            policy=policy,
            day=day,
            seed=sim.seed,
            submit=np.asarray(sim.submit),
            dispatch=np.asarray(sim.dispatch),
            start=sim.realised_starts(),
            completion=np.asarray(sim.completion),
            deadline=np.asarray(sim.deadline),
            slot=slot,
            gpu_type=gtype,
            complexity=np.asarray(sim.complexity, dtype=np.int64),
            tight=np.asarray(sim.tight, dtype=bool),
            runtime=runtime,
            stock=np.asarray(sim.job_stock, dtype=np.int64),
            slot_busy_time=np.asarray(sim.slot_busy_time),
            type_names=list(fl.type_names),
            price_per_s=np.asarray(fl.price_per_s),
            n_decisions=sim.n_decisions,
            job_id=sim.workload.job_id,
        )

    # ------------------------------------------------------------------ derived
    @property
    def done_mask(self) -> np.ndarray:
        """Jobs that completed."""
        return np.isfinite(self.completion)

    @property
    def cost(self) -> np.ndarray:
        """[$] realised run time × price of the slot's type (0 for jobs never run)."""
        price = np.where(self.gpu_type >= 0, self.price_per_s[np.maximum(self.gpu_type, 0)], 0.0)
        return np.where(self.done_mask, self.runtime * price, 0.0)

    def summary(self) -> dict[str, Any]:
        """Per-run metrics of spec §2 (times in minutes, cost in $, rates in %)."""
        done = self.done_mask
        n = int(self.submit.size)
        wait = self.start - self.submit
        tard = np.maximum(0.0, self.completion - self.deadline)
        missed = self.completion > self.deadline
        tight = self.tight
        p = self.params
        makespan = float(self.completion[done].max()) if done.any() else 0.0
        exec_time = float(np.nansum(np.where(done, self.runtime, 0.0)))
        prov = self.start - self.dispatch

        def pct(mask: np.ndarray, of: np.ndarray) -> float:
            k = int(of.sum())
            return float(100.0 * mask[of].sum() / k) if k else float("nan")

        everyone = np.ones(n, bool)
        return {
            "policy": self.policy,
            "day": self.day,
            "seed": self.seed,
            "n_jobs": n,
            "completed": int(done.sum()),
            "mean_wait_min": float(wait[done].mean() / 60.0) if done.any() else float("nan"),
            "mean_response_min": float((self.completion - self.submit)[done].mean() / 60.0)
            if done.any()
            else float("nan"),
            "miss_pct": pct(missed, everyone),
            "tight_miss_pct": pct(missed, tight),
            "loose_miss_pct": pct(missed, ~tight),
            "mean_tardiness_min": float(tard[done].mean() / 60.0) if done.any() else float("nan"),
            "mean_tardiness_missed_min": float(tard[missed].mean() / 60.0) if missed.any() else 0.0,
            "p95_tardiness_min": float(np.percentile(tard[done], 95) / 60.0) if done.any() else float("nan"),
            "cost_usd": float(self.cost.sum()),
            "slot_util_pct": 100.0 * float(self.slot_busy_time.sum()) / (p.c_max * makespan) if makespan > 0 else 0.0,
            "exec_util_pct": 100.0 * exec_time / (p.c_max * makespan) if makespan > 0 else 0.0,
            "provisioning_delay_h": float(prov[done].sum() / 3600.0),
            "makespan_h": makespan / 3600.0,
            "qos_objective": float(p.alpha1 * wait[done].sum() + p.alpha2 * missed.sum()),
            "n_decisions": self.n_decisions,
        }

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job (times in seconds from the start of the day)."""
        if self._jobs is None:
            names = np.asarray(self.type_names + [""], dtype=object)
            comp = np.asarray(COMPLEXITIES, dtype=object)
            levels = np.asarray(list(STOCK_LEVELS) + [""], dtype=object)
            self._jobs = pd.DataFrame(
                {
                    "job_id": np.arange(self.submit.size) if self.job_id is None else self.job_id,
                    "submit": self.submit,
                    "dispatch": self.dispatch,
                    "start": self.start,
                    "completion": self.completion,
                    "deadline": self.deadline,
                    "slot": self.slot,
                    "gpu_type": names[self.gpu_type],
                    "complexity": comp[self.complexity],
                    "tight": self.tight,
                    "runtime": self.runtime,
                    "cost": self.cost,
                    "stock_at_dispatch": levels[self.stock],
                    "provisioning_delay": self.start - self.dispatch,
                    "wait": self.start - self.submit,
                    "tardiness": np.maximum(0.0, self.completion - self.deadline),
                    "met": self.completion <= self.deadline,
                }
            )
        return self._jobs
