"""LLM inference scheduling on a multi-GPU cluster with tensor parallelism.

``from gpu_sched_env.llm import simulate``; see docs/hgsp.md (Part B).
"""

from gpu_sched_env.llm.api import LLMResult, simulate
from gpu_sched_env.llm.model import (
    GPU_TYPES,
    PHASES,
    WORKLOADS,
    GPUType,
    LLMCluster,
    Requests,
    Workload,
    discriminating,
    make_cluster,
    mixed,
    requests_from_frame,
    resolve_workload,
)
from gpu_sched_env.llm.sim import ENGINES, LLMDecision, LLMSetup, LLMSim

__all__ = [
    "ENGINES",
    "GPU_TYPES",
    "PHASES",
    "WORKLOADS",
    "GPUType",
    "LLMCluster",
    "LLMDecision",
    "LLMResult",
    "LLMSetup",
    "LLMSim",
    "Requests",
    "Workload",
    "discriminating",
    "make_cluster",
    "mixed",
    "requests_from_frame",
    "resolve_workload",
    "simulate",
]
