"""Edge cluster scenario: memory-aware batching on Jetson devices (model, simulator, env).

The planners (MemBatch ILP, baseline ILP, FCFS-LLF) live in ``gpu_sched_agents.heuristics.edge``
and are found by name through :data:`gpu_sched_env.edge.policies.PLANNERS`.
"""

from gpu_sched_env.edge.model import Cluster, EdgeProblem, Task, jetson_cluster
from gpu_sched_env.edge.plan import Plan, SolveReport
from gpu_sched_env.edge.profiles import ProfileTable, default_profiles, load_profiles
from gpu_sched_env.edge.sim import SimResult, execution_noise, simulate
from gpu_sched_env.edge.workload import (
    five_task_example,
    memory_batches,
    random_workloads,
    shard_sizes,
    split_tasks,
    split_threshold,
    tasks_from_workloads,
)

__all__ = [
    "Cluster",
    "EdgeProblem",
    "Plan",
    "ProfileTable",
    "SimResult",
    "SolveReport",
    "Task",
    "default_profiles",
    "execution_noise",
    "five_task_example",
    "jetson_cluster",
    "load_profiles",
    "memory_batches",
    "random_workloads",
    "shard_sizes",
    "simulate",
    "split_tasks",
    "split_threshold",
    "tasks_from_workloads",
]
