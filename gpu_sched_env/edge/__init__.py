"""Edge cluster scenario: memory-aware batching with an ILP makespan scheduler on Jetson devices."""

from gpu_sched_env.edge.ilp import SolverConfig, baseline_ilp_schedule, membatch_schedule
from gpu_sched_env.edge.llf import LLFConfig, fcfs_llf_schedule
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
    "Cluster", "EdgeProblem", "LLFConfig", "Plan", "ProfileTable", "SimResult", "SolveReport", "SolverConfig", "Task",
    "baseline_ilp_schedule", "default_profiles", "execution_noise", "fcfs_llf_schedule", "five_task_example",
    "jetson_cluster", "load_profiles", "memory_batches", "membatch_schedule", "random_workloads", "shard_sizes",
    "simulate", "split_tasks", "split_threshold", "tasks_from_workloads",
]
