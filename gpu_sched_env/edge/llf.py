"""FCFS – Least Loaded First: Ray's default (hybrid) placement, as the study describes it.

Tasks are placed in arrival order. Among the devices the task fits on, devices are ranked
first by locality (a task with the same data, ``Task.data_key``: the same workload, or the
same part of its dataset for a shard, is already placed there),
then by lowest load, then by index; one of the top ``k = max(int(fraction * n_devices),
minimum)`` is picked uniformly at random.

Load of a device: the GPU-share-hours committed to it, ``sum gpu_pct/100 * time [h]`` over
its tasks, rounded to float32 — the exact number the ``EdgeBatch-v0`` observation carries,
so the same choice function drives the scheduler and the env agent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from gpu_sched_env.core.errors import check_number
from gpu_sched_env.edge.model import Cluster, Task, check_placeable, task_arrays
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.workload import split_tasks, split_threshold

# Ray's own defaults are top_k_fraction 0.2 and top_k_absolute 1; with 7 workers that makes
# k = 1 (no randomness), so we use a minimum of 2 to exercise the random pick the study names.
TOP_K_FRACTION = 0.2
TOP_K_MIN = 2


def top_k(n_devices: int, fraction: float = TOP_K_FRACTION, minimum: int = TOP_K_MIN) -> int:
    """Number of candidates: ``max(int(fraction * n), minimum)``, at most ``n``."""
    check_number("top_k_fraction", fraction, lo=0.0, hi=1.0)
    check_number("top_k_min", minimum, lo=1, integer=True)
    return max(1, min(n_devices, max(int(fraction * n_devices), int(minimum))))


def load_increment_h(time_s: float, gpu_pct: float) -> float:
    """Load a task adds to its device [GPU-share-hours]."""
    return gpu_pct / 100.0 * time_s / 3600.0


def llf_pick(load_h: np.ndarray, local: np.ndarray, fits: np.ndarray, k: int, rng: np.random.Generator) -> int:
    """Pick a device: locality first, then least load (float32), then index; random in top k.

    Always draws exactly one integer from ``rng`` so two callers stay in step.
    """
    load32 = np.asarray(load_h, dtype=np.float32)
    cand = [int(j) for j in np.flatnonzero(np.asarray(fits, dtype=bool))]
    if not cand:
        raise ValueError("llf_pick: the task fits no device")
    cand.sort(key=lambda j: (not bool(local[j]), float(load32[j]), j))
    top = cand[: min(k, len(cand))]
    return top[int(rng.integers(len(top)))]


def fcfs_llf_schedule(
    tasks: Sequence[Task],
    cluster: Cluster,
    rng: np.random.Generator,
    fraction: float = TOP_K_FRACTION,
    minimum: int = TOP_K_MIN,
    split_threshold_gb: float | None = None,
    split: bool = True,
) -> Plan:
    """Split (the shared task model), then place every (sub-)task in arrival order with :func:`llf_pick`."""
    t_start = time.perf_counter()
    thr = split_threshold(cluster, split, split_threshold_gb)
    work = split_tasks(tasks, thr) if thr is not None else list(tasks)
    check_placeable(work, cluster)
    k = top_k(cluster.n, fraction, minimum)
    t, g, _, fits = task_arrays(work, cluster)
    load = np.zeros(cluster.n)
    seen: list[set[str]] = [set() for _ in range(cluster.n)]
    dev = []
    for i, task in enumerate(work):
        local = np.array([task.data_key in s for s in seen])
        j = llf_pick(load, local, fits[i], k, rng)
        dev.append(j)
        load[j] += load_increment_h(t[i, j], g[i, j])
        seen[j].add(task.data_key)
    n = len(work)
    return Plan("fcfs_llf", tuple(work), tuple(dev), tuple(range(n)), (0,) * n, (0,) * n, (),
                time.perf_counter() - t_start)
