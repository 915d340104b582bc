"""Task lists, task splitting and memory-aware batching.

The reference workloads are training jobs on five public datasets: three light ones
(CIFAR-10, Fashion-MNIST, MNIST) and two heavy ones (Chest X-ray, HAM10000).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from gpu_sched_env.core.errors import ConfigError, check_number
from gpu_sched_env.edge.model import Cluster, Profile, Task
from gpu_sched_env.edge.profiles import ProfileTable

REFERENCE_WORKLOADS = ("cifar10", "fashion_mnist", "mnist", "chest_xray", "ham10000")
LIGHT = ("cifar10", "fashion_mnist", "mnist")
HEAVY = ("chest_xray", "ham10000")


def make_task(task_id: str, workload: str, table: ProfileTable, cluster: Cluster, arrival: int = 0) -> Task:
    """A task of ``workload`` profiled for the cluster's device types (table average if unprofiled)."""
    profile, profiled = table.profile_for(workload, cluster.types)
    return Task(task_id, workload, profile, arrival=arrival, parent=task_id, profiled=profiled)


def tasks_from_workloads(workloads: Sequence[str], table: ProfileTable, cluster: Cluster) -> list[Task]:
    """One task per entry, in arrival order, with ids ``t000-<workload>``."""
    return [make_task(f"t{i:03d}-{w}", w, table, cluster, arrival=i) for i, w in enumerate(workloads)]


def five_task_example(table: ProfileTable, cluster: Cluster) -> list[Task]:
    """The study's example: one task per reference workload, in the order listed."""
    return tasks_from_workloads(REFERENCE_WORKLOADS, table, cluster)


def random_workloads(n: int, rng: np.random.Generator, mix: Mapping[str, float] | None = None) -> list[str]:
    """``n`` workload names drawn i.i.d. from ``mix`` (default: uniform over the five)."""
    check_number("n_tasks", n, lo=1, integer=True)
    mix = dict(mix) if mix is not None else {w: 1.0 for w in REFERENCE_WORKLOADS}
    if not mix:
        raise ConfigError("workload mix is empty; give at least one workload with a positive weight")
    for w, p in mix.items():
        check_number(w, p, lo=0.0, section="mix")
    names = list(mix)
    weights = np.array([float(mix[w]) for w in names])
    if weights.sum() <= 0:
        raise ConfigError(f"workload mix weights sum to 0: {mix!r}")
    idx = rng.choice(len(names), size=int(n), p=weights / weights.sum())
    return [names[k] for k in idx]


def shard_sizes(mem_gb: float, threshold_gb: float) -> list[float]:
    """Memory of each shard [GB]: full shards of ``threshold_gb`` and the remainder last.

    "Split into sub-tasks that fit": each sub-task is filled up to the threshold, so a 7.0 GB
    task with a 4 GB threshold becomes 4.0 + 3.0 GB. A remainder below 1 MB is dropped into
    the last full shard (float noise, not a shard).
    """
    n_full = math.floor(mem_gb / threshold_gb + 1e-9)
    rest = mem_gb - n_full * threshold_gb
    sizes = [threshold_gb] * n_full
    if rest > 1e-3:
        sizes.append(rest)
    elif sizes:
        sizes[-1] += max(rest, 0.0)
    return sizes


def split_task(task: Task, threshold_gb: float) -> list[Task]:
    """Split a task whose memory exceeds ``threshold_gb`` into sub-tasks that fit (:func:`shard_sizes`).

    A shard holding a fraction ``f`` of the parent's memory is a data-parallel shard of its
    training set: it gets ``f`` of the parent's memory and run time on every device type (no
    synchronisation overhead is modelled) and the parent's GPU share. A task within the
    threshold is returned unchanged.
    """
    check_number("split_threshold_gb", threshold_gb, lo=0.0, lo_open=True)
    if task.n_parts != 1:
        raise ConfigError(f"task {task.id!r} is already a shard ({task.part}/{task.n_parts}); split it once")
    if task.mem_gb <= threshold_gb + 1e-9:
        return [task]
    sizes = shard_sizes(task.mem_gb, threshold_gb)
    n = len(sizes)
    out = []
    for k, size in enumerate(sizes, start=1):
        f = size / task.mem_gb
        shard = {dt: Profile(p.time_s * f, p.gpu_pct, p.mem_gb * f) for dt, p in task.profile.items()}
        out.append(
            Task(
                f"{task.id}.{k}",
                task.workload,
                shard,
                arrival=task.arrival,
                parent=task.id,
                part=k,
                n_parts=n,
                profiled=task.profiled,
            )
        )
    return out


def split_threshold(cluster: Cluster, split: bool = True, threshold_gb: float | None = None) -> float | None:
    """The splitting threshold every scheduler uses [GB]: None when ``split`` is False.

    Default: the smallest worker's memory (spec). Splitting is part of the shared task model:
    MemBatch, the baseline ILP and FCFS-LLF all split, as in the study.
    """
    if not split:
        return None
    if threshold_gb is None:
        return cluster.min_mem_gb
    return float(check_number("split_threshold_gb", threshold_gb, lo=0.0, lo_open=True))


def split_tasks(tasks: Sequence[Task], threshold_gb: float) -> list[Task]:
    """Split every task over ``threshold_gb``; shards stay in their parent's arrival position."""
    return [s for t in tasks for s in split_task(t, threshold_gb)]


def memory_batches(tasks: Sequence[Task], cluster_mem_gb: float) -> list[list[Task]]:
    """Memory-aware batching of tasks in arrival order.

    A batch is closed when the next task would push its total memory over ``cluster_mem_gb``.

    A single task larger than the whole cluster gets a batch of its own (splitting later
    makes it runnable); nothing is dropped.
    """
    check_number("cluster_mem_gb", cluster_mem_gb, lo=0.0, lo_open=True)
    batches: list[list[Task]] = []
    cur: list[Task] = []
    used = 0.0
    for t in tasks:
        if cur and used + t.mem_gb > cluster_mem_gb + 1e-9:
            batches.append(cur)
            cur, used = [], 0.0
        cur.append(t)
        used += t.mem_gb
    if cur:
        batches.append(cur)
    return batches
