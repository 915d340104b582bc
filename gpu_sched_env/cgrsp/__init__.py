"""CGRSP: cloud GPU rendering jobs with deadlines on an on-demand, capped, heterogeneous fleet."""

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.params import DAY_TYPES, PARAM_NAMES, CGRSPParams, make_params
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.sim import PolicyStalledError, Simulator, run

POLICY_NAMES = ("fifo", "spt", "edf", "lcf", "balanced", "random", "spt_rescue", "adaptive", "rh", "cadr", "cadr_oo")

__all__ = [
    "DAY_TYPES",
    "PARAM_NAMES",
    "POLICY_NAMES",
    "CGRSPParams",
    "PolicyStalledError",
    "SimResult",
    "Simulator",
    "make_params",
    "run",
    "simulate",
]
