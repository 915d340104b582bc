"""CGRSP: cloud GPU rendering jobs with deadlines on an on-demand, capped, heterogeneous fleet."""

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.params import DAY_TYPES, PARAM_NAMES, CGRSPParams, make_params
from gpu_sched_env.cgrsp.policies import POLICIES, policy_names
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.sim import PolicyStalledError, Simulator, run


def __getattr__(name: str) -> tuple[str, ...]:
    """``POLICY_NAMES``: the published policies, read from the registry (PEP 562, lazily).

    Lazy because the heuristics that fill the registry import this package themselves.
    """
    if name == "POLICY_NAMES":
        return policy_names(published_only=True)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DAY_TYPES",
    "PARAM_NAMES",
    "POLICIES",
    "POLICY_NAMES",
    "CGRSPParams",
    "PolicyStalledError",
    "SimResult",
    "Simulator",
    "make_params",
    "policy_names",
    "run",
    "simulate",
]
