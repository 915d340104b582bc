"""HGSP: weighted-tardiness scheduling on a heterogeneous GPU cluster with memory limits.

``from gpu_sched_env.hgsp import run``; see docs/hgsp.md.
"""

from gpu_sched_env.hgsp.api import RunResult, run
from gpu_sched_env.hgsp.metrics import METRICS, summarize
from gpu_sched_env.hgsp.model import CLUSTER_PRESETS, GPU_MODELS, Cluster, TaskSet, make_cluster
from gpu_sched_env.hgsp.sim import ListScheduler, Problem, Schedule, decode
from gpu_sched_env.hgsp.workload import PRESETS, generate_tasks, load_csv, resolve_tasks, save_csv

__all__ = [
    "CLUSTER_PRESETS",
    "GPU_MODELS",
    "METRICS",
    "PRESETS",
    "Cluster",
    "ListScheduler",
    "Problem",
    "RunResult",
    "Schedule",
    "TaskSet",
    "decode",
    "generate_tasks",
    "load_csv",
    "make_cluster",
    "resolve_tasks",
    "run",
    "save_csv",
    "summarize",
]
