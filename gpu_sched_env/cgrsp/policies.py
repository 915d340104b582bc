"""The CGRSP policy registry; ``agents.heuristics.cgrsp`` fills it (plug-in group).

Policies follow :class:`gpu_sched_env.core.policy.Policy` with ``state`` = the
:class:`~gpu_sched_env.cgrsp.sim.Simulator` (read-only by contract) and the decision an
ordered list of ``(job_id, slot_index)`` assignments. Factories take the run's
:class:`~gpu_sched_env.cgrsp.params.CGRSPParams`: ``POLICIES.make("rh", params)``.
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("cgrsp")


def policy_names(published_only: bool = True) -> tuple[str, ...]:
    """Registered names: the published policies (+ our extensions unless ``published_only``)."""
    return POLICIES.names(published_only=published_only)


__all__ = ["POLICIES", "policy_names"]
