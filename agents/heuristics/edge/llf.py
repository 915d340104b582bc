"""FCFS – Least Loaded First: Ray's default (hybrid) placement, as the study describes it.

Tasks are placed in arrival order. Among the devices the task fits on, devices are ranked
first by locality (a task with the same data, ``Task.data_key``: the same workload, or the
same part of its dataset for a shard, is already placed there), then by low utilisation;
one of the top ``k = max(int(fraction * n_devices), minimum)`` is picked uniformly at random.
Options (:class:`LLFConfig`, validated):

* ``utilisation``: what "low utilisation" ranks by. ``"share"`` (default): the GPU share
  committed to the device as a fraction of its capacity, ``sum gpu_pct / 100`` over the
  tasks placed there (the study's utilisation is a share of GPU capacity; tasks that cannot
  co-run wait in the device's queue, so it may exceed 1). ``"share_hours"``: GPU-share-hours
  ``sum gpu_pct / 100 * time [h]`` (this project's earlier reading).
* ``spread_threshold``: a utilisation below it ranks as 0, i.e. equal to an idle device —
  Ray's hybrid policy (``scheduler_spread_threshold``, default 0.5), which packs a device
  until half its capacity is used. 0 turns it off.
* ``ties``: order of devices with the same rank: ``"random"`` (default; Ray orders nodes by
  their random node ids) or ``"index"`` (device order: Nanos first, the earlier reading).

Utilisations are rounded to float32 — the exact numbers the ``EdgeBatch-v0`` observation
carries, so the same choice function drives the scheduler and the env agent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpu_sched_env.core.errors import check_choice, check_number
from gpu_sched_env.edge.model import Cluster, Task, check_placeable, load_increment_h, task_arrays
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.workload import split_tasks, split_threshold

# Ray's own defaults are top_k_fraction 0.2 and top_k_absolute 1; with 7 workers that makes
# k = 1 (no randomness), so we use a minimum of 2 to exercise the random pick the study names.
TOP_K_FRACTION = 0.2
TOP_K_MIN = 2
UTILISATION = ("share", "share_hours")
TIES = ("random", "index")
SPREAD_THRESHOLD = 0.5  # Ray's scheduler_spread_threshold


@dataclass(frozen=True)
class LLFConfig:
    """FCFS-LLF's ranking options (module docstring).

    The project's earlier model is ``LLFConfig(utilisation="share_hours", spread_threshold=0.0, ties="index")``
    with the top-k fields unchanged.
    """

    fraction: float = TOP_K_FRACTION
    minimum: int = TOP_K_MIN
    utilisation: str = "share"
    spread_threshold: float = SPREAD_THRESHOLD
    ties: str = "random"

    def __post_init__(self) -> None:
        top_k(1, self.fraction, self.minimum)  # validates both
        check_choice("utilisation", self.utilisation, UTILISATION, section="fcfs_llf")
        check_number("spread_threshold", self.spread_threshold, lo=0.0, section="fcfs_llf")
        check_choice("ties", self.ties, TIES, section="fcfs_llf")


def top_k(n_devices: int, fraction: float = TOP_K_FRACTION, minimum: int = TOP_K_MIN) -> int:
    """Number of candidates: ``max(int(fraction * n), minimum)``, at most ``n``."""
    check_number("top_k_fraction", fraction, lo=0.0, hi=1.0)
    check_number("top_k_min", minimum, lo=1, integer=True)
    return max(1, min(n_devices, max(int(fraction * n_devices), int(minimum))))


def llf_pick(
    util: np.ndarray,
    local: np.ndarray,
    fits: np.ndarray,
    k: int,
    rng: np.random.Generator,
    spread_threshold: float = 0.0,
    ties: str = "index",
) -> int:
    """Pick a device: locality first, then low utilisation (float32), then ``ties``; random in top k.

    A utilisation below ``spread_threshold`` ranks as 0. With ``ties="random"`` one uniform
    draw per device orders equal ranks; then one integer picks among the top k. The draws
    depend only on the number of devices and the candidates, so two callers stay in step.
    """
    u32 = np.asarray(util, dtype=np.float32)
    u32 = np.where(u32 < np.float32(spread_threshold), np.float32(0.0), u32)
    cand = [int(j) for j in np.flatnonzero(np.asarray(fits, dtype=bool))]
    if not cand:
        raise ValueError("llf_pick: the task fits no device")
    tie = rng.random(len(u32)) if ties == "random" else np.arange(len(u32), dtype=float)
    cand.sort(key=lambda j: (not bool(local[j]), float(u32[j]), float(tie[j]), j))
    top = cand[: min(k, len(cand))]
    return top[int(rng.integers(len(top)))]


def utilisation_increment(cfg: LLFConfig, time_s: float, gpu_pct: float) -> float:
    """What a task adds to its device's utilisation under ``cfg.utilisation``."""
    return load_increment_h(time_s, gpu_pct) if cfg.utilisation == "share_hours" else gpu_pct / 100.0


def fcfs_llf_schedule(
    tasks: Sequence[Task],
    cluster: Cluster,
    rng: np.random.Generator,
    cfg: LLFConfig | None = None,
    split_threshold_gb: float | None = None,
    split: bool = True,
) -> Plan:
    """Split (the shared task model), then place every (sub-)task in arrival order with :func:`llf_pick`."""
    cfg = cfg or LLFConfig()
    t_start = time.perf_counter()
    thr = split_threshold(cluster, split, split_threshold_gb)
    work = split_tasks(tasks, thr) if thr is not None else list(tasks)
    check_placeable(work, cluster)
    k = top_k(cluster.n, cfg.fraction, cfg.minimum)
    t, g, _, fits = task_arrays(work, cluster)
    util = np.zeros(cluster.n)
    seen: list[set[str]] = [set() for _ in range(cluster.n)]
    dev = []
    for i, task in enumerate(work):
        local = np.array([task.data_key in s for s in seen])
        j = llf_pick(util, local, fits[i], k, rng, cfg.spread_threshold, cfg.ties)
        dev.append(j)
        util[j] += utilisation_increment(cfg, t[i, j], g[i, j])
        seen[j].add(task.data_key)
    n = len(work)
    return Plan(
        "fcfs_llf", tuple(work), tuple(dev), tuple(range(n)), (0,) * n, (0,) * n, (), time.perf_counter() - t_start
    )
