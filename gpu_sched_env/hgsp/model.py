"""HGSP model: GPU types, cluster presets and the validated task set.

Units: workload in relative units, speed in workload per time unit, memory in GB, times in
the task set's time unit (the source study's units; the generator uses abstract units).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_choice


@dataclass(frozen=True)
class GPUModel:
    """One GPU type: memory [GB] and speed [workload / time unit]."""

    name: str
    memory: float
    speed: float


GPU_MODELS: dict[str, GPUModel] = {
    "A100": GPUModel("A100", 80.0, 57.0),
    "A30": GPUModel("A30", 24.0, 30.0),
    "L40": GPUModel("L40", 48.0, 55.5),
}

# cluster name -> GPUs of each model (the order here is the GPU index order)
CLUSTER_PRESETS: dict[str, dict[str, int]] = {
    "small": {"A100": 1, "A30": 1, "L40": 1},
    "medium": {"A100": 2, "A30": 2, "L40": 2},
    "large": {"A100": 3, "A30": 3, "L40": 3},
}


@dataclass(frozen=True)
class Cluster:
    """A heterogeneous cluster; GPU ``j`` has ``names[j]``, ``speed[j]``, ``memory[j]``."""

    name: str
    names: tuple[str, ...]
    models: tuple[str, ...]
    speed: np.ndarray  # [workload / time unit]
    memory: np.ndarray  # [GB]

    @property
    def m(self) -> int:
        """Number of GPUs."""
        return len(self.names)


def make_cluster(spec: str | Mapping[str, int] | Cluster = "small") -> Cluster:
    """Build a cluster from a preset name (small, medium, large) or ``{model: count}``.

    GPUs are indexed model by model in the mapping's order (presets: A100s, A30s, L40s);
    heuristics break ties by the lowest index.
    """
    if isinstance(spec, Cluster):
        return spec
    if isinstance(spec, str):
        check_choice("cluster", spec, CLUSTER_PRESETS)
        name, counts = spec, CLUSTER_PRESETS[spec]
    elif isinstance(spec, Mapping):
        name, counts = "custom", dict(spec)
    else:
        raise ConfigError(
            f"cluster = {spec!r}: give a preset name ({', '.join(CLUSTER_PRESETS)}) or a mapping {{GPU model: count}}"
        )
    names, models = [], []
    for model, count in counts.items():
        check_choice("cluster model", model, GPU_MODELS)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ConfigError(f"cluster.{model} = {count!r}: must be a non-negative integer")
        for k in range(int(count)):
            names.append(f"{model}-{k}")
            models.append(model)
    if not names:
        raise ConfigError(f"cluster = {spec!r} has no GPUs")
    speed = np.array([GPU_MODELS[x].speed for x in models], float)
    memory = np.array([GPU_MODELS[x].memory for x in models], float)
    return Cluster(name, tuple(names), tuple(models), speed, memory)


TASK_COLUMNS = ("task_id", "workload", "memory", "deadline", "weight", "arrival")


@dataclass(frozen=True)
class TaskSet:
    """Validated tasks as parallel arrays (row ``i`` is task ``i``)."""

    name: str
    task_id: np.ndarray
    workload: np.ndarray  # [relative units] > 0
    memory: np.ndarray  # [GB] >= 0
    deadline: np.ndarray  # [time] >= arrival
    weight: np.ndarray  # >= 0
    arrival: np.ndarray  # [time] >= 0

    @property
    def n(self) -> int:
        """Number of tasks."""
        return len(self.workload)

    def __len__(self) -> int:
        return self.n

    def to_frame(self) -> pd.DataFrame:
        """The task set as a DataFrame with the CSV columns."""
        return pd.DataFrame({c: getattr(self, c) for c in TASK_COLUMNS})

    def subset(self, idx: np.ndarray, name: str | None = None) -> TaskSet:
        """The tasks at ``idx`` (e.g. the first k) as a new task set."""
        idx = np.asarray(idx)
        return TaskSet(name or self.name, *(getattr(self, c)[idx] for c in TASK_COLUMNS))


# column -> (lowest allowed value, open interval?, description of what is allowed)
_BOUNDS = {
    "workload": (0.0, True, "a number > 0"),
    "memory": (0.0, False, "a number >= 0 [GB]"),
    "deadline": (0.0, False, "a number >= 0 and >= arrival"),
    "weight": (0.0, False, "a number >= 0"),
    "arrival": (0.0, False, "a number >= 0"),
}


def task_set_from_frame(df: pd.DataFrame, name: str = "DataFrame", first_row: int = 1) -> TaskSet:
    """Validate a frame with the six task columns; errors name the row and the column.

    Rows are numbered from ``first_row`` (1 = first data row). Values may be strings (as read
    from a CSV); each must parse as a finite number within its column's range.
    """
    if not isinstance(df, pd.DataFrame):
        raise ConfigError(f"tasks = {type(df).__name__}: expected a pandas DataFrame")
    cols = [str(c).strip() for c in df.columns]
    missing = [c for c in TASK_COLUMNS if c not in cols]
    if missing:
        raise ConfigError(f"{name}: missing column(s) {', '.join(missing)}; required: {', '.join(TASK_COLUMNS)}")
    extra = [c for c in cols if c not in TASK_COLUMNS]
    if extra:
        raise ConfigError(f"{name}: unknown column(s) {', '.join(extra)}; allowed: {', '.join(TASK_COLUMNS)}")
    df = df.set_axis(cols, axis=1)
    if len(df) == 0:
        raise ConfigError(f"{name}: no task rows")
    ids = df["task_id"].to_numpy()
    for k, v in enumerate(ids):
        if v is None or (isinstance(v, float) and np.isnan(v)) or str(v).strip() == "":
            raise ConfigError(f"{name} row {k + first_row}, column task_id: empty task_id")
    ids = np.array([str(v).strip() if isinstance(v, str) else v for v in ids], dtype=object)
    dup = pd.Index(ids).duplicated()
    if dup.any():
        k = int(np.flatnonzero(dup)[0])
        raise ConfigError(f"{name} row {k + first_row}, column task_id: duplicate task_id {ids[k]!r}")
    values = {}
    for col, (lo, lo_open, allowed) in _BOUNDS.items():
        raw = df[col]
        num = pd.to_numeric(raw, errors="coerce").to_numpy(float)
        bad = ~np.isfinite(num) | ((num <= lo) if lo_open else (num < lo))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            kind = "not a finite number" if not np.isfinite(num[k]) else "out of range"
            raise ConfigError(
                f"{name} row {k + first_row} (task_id {ids[k]!r}), column {col} = "
                f"{raw.iloc[k]!r}: {kind}; allowed: {allowed}"
            )
        values[col] = num
    early = values["deadline"] < values["arrival"]
    if early.any():
        k = int(np.flatnonzero(early)[0])
        raise ConfigError(
            f"{name} row {k + first_row} (task_id {ids[k]!r}), column deadline = "
            f"{float(values['deadline'][k])!r}: before arrival {float(values['arrival'][k])!r}; "
            "allowed: deadline >= arrival"
        )
    return TaskSet(name, ids, **values)
