"""Edge cluster model: Jetson device types, the cluster preset, tasks and their per-device arrays.

Units: time in seconds (profile files use minutes), GPU share in percent of one device's
GPU capacity (a device offers 100 %), memory in GB.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from gpu_sched_env.core.errors import ConfigError, check_keys, check_number

GPU_CAPACITY_PCT = 100.0  # every device offers 100 % of its own GPU


@dataclass(frozen=True)
class DeviceType:
    """A Jetson model: name, CUDA cores per unit and memory (shared CPU/GPU) [GB]."""

    key: str
    label: str
    cuda_cores: int
    mem_gb: float


DEVICE_TYPES: dict[str, DeviceType] = {
    "nano": DeviceType("nano", "Jetson Nano", 128, 4.0),
    "xavier_nx": DeviceType("xavier_nx", "Jetson Xavier NX", 384, 16.0),
    "orin_nx": DeviceType("orin_nx", "Jetson Orin NX", 1024, 16.0),
}

# The study's cluster: units per type; one Orin NX is the head (runs the scheduler).
DEFAULT_UNITS: dict[str, int] = {"nano": 4, "xavier_nx": 2, "orin_nx": 2}
HEAD_TYPE = "orin_nx"


@dataclass(frozen=True)
class Device:
    """One worker: its name (``orin_nx-1``), type key, memory [GB] and GPU capacity [%]."""

    name: str
    dtype: str
    mem_gb: float
    gpu_cap: float = GPU_CAPACITY_PCT
    is_head: bool = False


@dataclass(frozen=True)
class Cluster:
    """The devices tasks may run on (the head only when it participates)."""

    devices: tuple[Device, ...]
    head_participates: bool = False

    @property
    def n(self) -> int:
        """Number of worker devices."""
        return len(self.devices)

    @property
    def total_mem_gb(self) -> float:
        """Sum of the workers' memory [GB] (the batching limit)."""
        return float(sum(d.mem_gb for d in self.devices))

    @property
    def min_mem_gb(self) -> float:
        """Smallest worker memory [GB] (the default splitting threshold)."""
        return float(min(d.mem_gb for d in self.devices))

    @property
    def types(self) -> tuple[str, ...]:
        """Type key of each device, in device order."""
        return tuple(d.dtype for d in self.devices)

    def labels(self) -> dict[int, str]:
        """Device index -> display name."""
        return {j: d.name + (" (head)" if d.is_head else "") for j, d in enumerate(self.devices)}


def jetson_cluster(include_head: bool = False, units: Mapping[str, int] | None = None) -> Cluster:
    """The study's Jetson cluster: 4 Nano, 2 Xavier NX, 2 Orin NX (one Orin is the head).

    Args:
        include_head: when True the head Orin NX also runs tasks (8 workers); by default it
            only runs the scheduler and the workers are 4 Nano, 2 Xavier NX and 1 Orin NX.
        units: units per device type (keys from ``DEVICE_TYPES``); the head is the last unit
            of ``orin_nx``, so ``orin_nx`` needs at least one unit.
    """
    units = dict(DEFAULT_UNITS if units is None else units)
    check_keys(units, DEVICE_TYPES, "cluster.units")
    for key, count in units.items():
        check_number(key, count, lo=0, integer=True, section="cluster.units")
    if units.get(HEAD_TYPE, 0) < 1:
        raise ConfigError(
            f"cluster.units.{HEAD_TYPE} = {units.get(HEAD_TYPE, 0)!r}: the head is an {HEAD_TYPE}, need >= 1"
        )
    devices: list[Device] = []
    for key in DEVICE_TYPES:  # fixed type order: nano, xavier_nx, orin_nx
        n = int(units.get(key, 0))
        for u in range(n):
            head = key == HEAD_TYPE and u == n - 1
            if head and not include_head:
                continue
            devices.append(Device(f"{key}-{u + 1}", key, DEVICE_TYPES[key].mem_gb, is_head=head))
    if not devices:
        raise ConfigError("cluster has no worker devices; add units or set include_head=True")
    return Cluster(tuple(devices), head_participates=include_head)


@dataclass(frozen=True)
class Profile:
    """What a task needs on one device type: run time [s], GPU share [%], memory [GB]."""

    time_s: float
    gpu_pct: float
    mem_gb: float


@dataclass(frozen=True)
class Task:
    """A training task (or a sub-task after splitting) with a profile per device type.

    ``parent`` is the original task's id; ``part``/``n_parts`` say which shard this is
    (1/1 for an unsplit task). ``profiled`` is False when the profile is the table average.
    """

    id: str
    workload: str
    profile: Mapping[str, Profile] = field(hash=False)
    arrival: int = 0
    parent: str = ""
    part: int = 1
    n_parts: int = 1
    profiled: bool = True

    @property
    def data_key(self) -> str:
        """What FCFS-LLF's locality matches: the dataset, or the dataset part of a shard.

        Shard k of a split task holds part k of its dataset, so it is related to shard k of
        another task of the same workload, not to its own siblings (which hold other parts);
        the study's FCFS-LLF spreads Chest X-ray's two sub-tasks over the Nanos.
        """
        return self.workload if self.n_parts == 1 else f"{self.workload}#{self.part}/{self.n_parts}"

    @property
    def mem_gb(self) -> float:
        """Nominal memory [GB]: the largest over device types (used for batching/splitting)."""
        return max(p.mem_gb for p in self.profile.values())


def task_arrays(tasks: Sequence[Task], cluster: Cluster) -> tuple[np.ndarray, ...]:
    """Per (task, device) arrays: time [s], GPU share [%], memory [GB], fits-alone (bool)."""
    n, d = len(tasks), cluster.n
    t = np.zeros((n, d))
    g = np.zeros((n, d))
    m = np.zeros((n, d))
    for i, task in enumerate(tasks):
        for j, dev in enumerate(cluster.devices):
            p = task.profile.get(dev.dtype)
            if p is None:
                raise ConfigError(f"task {task.id!r} has no profile for device type {dev.dtype!r}")
            t[i, j], g[i, j], m[i, j] = p.time_s, p.gpu_pct, p.mem_gb
    caps_m = np.array([dev.mem_gb for dev in cluster.devices])
    caps_g = np.array([dev.gpu_cap for dev in cluster.devices])
    fits = (m <= caps_m + 1e-9) & (g <= caps_g + 1e-9)
    return t, g, m, fits


def check_placeable(tasks: Sequence[Task], cluster: Cluster) -> None:
    """Raise ConfigError naming every task that fits no device of ``cluster`` on its own."""
    if not tasks:
        return
    _, g, m, fits = task_arrays(tasks, cluster)
    bad = [i for i in range(len(tasks)) if not fits[i].any()]
    if bad:
        i = bad[0]
        raise ConfigError(
            f"{len(bad)} task(s) fit no device, e.g. task {tasks[i].id!r} needs "
            f"mem {m[i].min():.2f} GB / GPU {g[i].min():.0f} % at least; the largest device has "
            f"{max(d.mem_gb for d in cluster.devices):g} GB / 100 % (split it, or enable splitting)"
        )


@dataclass(frozen=True)
class EdgeProblem:
    """What a scheduler is given: the tasks in arrival order and the cluster."""

    tasks: tuple[Task, ...]
    cluster: Cluster


def load_increment_h(time_s: float, gpu_pct: float) -> float:
    """Load a task adds to its device [GPU-share-hours]."""
    return gpu_pct / 100.0 * time_s / 3600.0
