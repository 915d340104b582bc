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


def split_task(task: Task, threshold_gb: float) -> list[Task]:
    """Split a task whose memory exceeds ``threshold_gb`` into ``ceil(mem / threshold)`` shards.

    Each shard gets ``1/n`` of the memory and of the run time on every device type (a
    data-parallel shard of the training set; no synchronisation overhead is modelled) and
    the parent's GPU share. A task within the threshold is returned unchanged.
    """
    check_number("split_threshold_gb", threshold_gb, lo=0.0, lo_open=True)
    if task.n_parts != 1:
        raise ConfigError(f"task {task.id!r} is already a shard ({task.part}/{task.n_parts}); split it once")
    if task.mem_gb <= threshold_gb + 1e-9:
        return [task]
    n = math.ceil(task.mem_gb / threshold_gb - 1e-9)
    shard = {dt: Profile(p.time_s / n, p.gpu_pct, p.mem_gb / n) for dt, p in task.profile.items()}
    return [
        Task(f"{task.id}.{k}", task.workload, shard, arrival=task.arrival, parent=task.id, part=k,
             n_parts=n, profiled=task.profiled)
        for k in range(1, n + 1)
    ]


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
