"""Workloads: the MIG experiment preset, job sets -> MIG jobs, and converters for CGRSP/HGSP.

Mappings (documented in docs/mig.md):

* MIG: one :class:`~gpu_sched_env.mig.model.Job` per record, times in minutes as generated.
* CGRSP: ``submit`` = arrival·60 [s]; ``complexity`` by run length (``<= 3`` min low,
  ``<= 6`` medium, else high; thresholds are arguments); ``deadline`` = deadline·60 [s]
  (absolute), or ``submit + loose_window_s`` when the job has none; ``tight`` =
  ``deadline − submit <= tight_window_s``.
* HGSP: ``task_id`` = index; ``workload`` = run length [s] × ``speed_ref`` (so the job takes
  its generated run length on a GPU of that speed, default the A100's 57.0); ``memory`` =
  peak MB / 1024 [GB]; ``deadline`` = deadline·60 [s] (``inf`` when none); ``weight`` =
  priority; ``arrival`` = arrival·60 [s].
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.mig.generator import GeneratorConfig, JobSet, generate, load_config
from gpu_sched_env.mig.model import Job

# The Java tool's published test_config.json (spec Part A reference data), as a mapping.
JAVA_TEST_CONFIG: dict[str, Any] = {
    "priorityConfigSettings": {
        "type": "Random",
        "distributionType": "Uniform",
        "distributionParams": {"lowerBound": 1, "upperBound": 5},
    },
    "deadlineConfigSettings": {"type": "Fixed", "deadline": 100},
    "maxRamUsageConfigSettings": {
        "type": "RandomDependentOnPrevious",
        "distributionType": "Normal",
        "distributionParams": {"mean": 2000, "sd": 50},
    },
    "maxTimeslicesNumberConfigSettings": {
        "type": "Random",
        "distributionType": "Normal",
        "distributionParams": {"mean": 5, "sd": 2},
    },
    "stoppabilityConfigSettings": {"type": "Fixed", "isStoppable": True},
    "cudaCoresConfigSettings": {"type": "Fixed", "coresNumber": 100},
    "jobsArrivalConfigSettings": {
        "type": "Random",
        "distributionType": "Poisson",
        "distributionParams": {"lambda": 10},
    },
    "numberOfJobs": 1000,
    "seed": 41,
}

# Part B of the spec as a generator config (JSON format plus our documented extensions:
# firstValue, relativeSd, maxValue, rounding).
MIG_EXPERIMENT_CONFIG: dict[str, Any] = {
    "priorityConfigSettings": {"type": "Fixed", "priority": 1},
    "deadlineConfigSettings": {"type": "Fixed", "deadline": 250},
    "maxRamUsageConfigSettings": {
        "type": "RandomDependentOnPrevious",
        "firstValue": {"distributionType": "Uniform", "distributionParams": {"lowerBound": 1, "upperBound": 1990}},
        "distributionType": "Normal",
        "distributionParams": {"relativeSd": 0.1},
        "maxValue": 1990,
    },
    "maxTimeslicesNumberConfigSettings": {
        "type": "Random",
        "distributionType": "Uniform",
        "distributionParams": {"lowerBound": 1, "upperBound": 10},
    },
    "stoppabilityConfigSettings": {"type": "Fixed", "isStoppable": True},
    "cudaCoresConfigSettings": {"type": "Fixed", "coresNumber": 100},
    "jobsArrivalConfigSettings": {
        "type": "Random",
        "distributionType": "Poisson",
        "distributionParams": {"lambda": 20},
    },
    "numberOfJobs": 50,
    "seed": 2,
    "rounding": "round",
}


def mig_experiment_config(n_jobs: int = 50) -> GeneratorConfig:
    """The spec's Part B generator config (``n_jobs`` jobs per data set)."""
    raw = copy.deepcopy(MIG_EXPERIMENT_CONFIG)
    raw["numberOfJobs"] = n_jobs
    return load_config(raw)


def to_mig_jobs(js: JobSet) -> list[Job]:
    """Job set -> MIG jobs (ids = positions, arrival order kept)."""
    return [
        Job(
            id=i,
            arrival=float(js.arrival[i]),
            mem=tuple(int(x) for x in js.series(i)),
            deadline=int(js.deadline[i]),
            stoppable=bool(js.stoppable[i]),
            priority=int(js.priority[i]),
        )
        for i in range(len(js))
    ]


def mig_dataset(seed: int, n_jobs: int = 50) -> list[Job]:
    """One Part B data set for ``seed``."""
    return to_mig_jobs(generate(mig_experiment_config(n_jobs), seed))


def to_cgrsp(
    js: JobSet,
    low_max_min: int = 3,
    medium_max_min: int = 6,
    tight_window_s: float = 3600.0,
    loose_window_s: float = 28800.0,
) -> pd.DataFrame:
    """CGRSP jobs: submit [s], complexity low|medium|high, deadline [s], tight (bool)."""
    if not 1 <= low_max_min < medium_max_min:
        raise ConfigError(
            f"low_max_min = {low_max_min!r}, medium_max_min = {medium_max_min!r}: allowed: 1 <= low < medium"
        )
    submit = js.arrival * 60.0
    L = js.lengths
    complexity = np.where(L <= low_max_min, "low", np.where(L <= medium_max_min, "medium", "high"))
    dl = np.where(js.deadline >= 0, js.deadline * 60.0, submit + loose_window_s)
    return pd.DataFrame(
        {
            "submit": submit,
            "complexity": pd.Series(complexity, dtype="object"),
            "deadline": dl.astype(float),
            "tight": (dl - submit) <= tight_window_s,
        }
    )


def to_hgsp(js: JobSet, speed_ref: float = 57.0) -> pd.DataFrame:
    """HGSP tasks: task_id, workload, memory [GB], deadline [s], weight, arrival [s]."""
    if not speed_ref > 0:
        raise ConfigError(f"speed_ref = {speed_ref!r}: allowed: > 0")
    peak = np.maximum.reduceat(js.memory, js.offsets[:-1]) if len(js) else np.zeros(0)
    return pd.DataFrame(
        {
            "task_id": np.arange(len(js), dtype=np.int64),
            "workload": js.lengths * 60.0 * speed_ref,
            "memory": peak / 1024.0,
            "deadline": np.where(js.deadline >= 0, js.deadline * 60.0, np.inf),
            "weight": js.priority.astype(float),
            "arrival": js.arrival * 60.0,
        }
    )
