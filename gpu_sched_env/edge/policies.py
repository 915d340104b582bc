"""The edge scheduler registry; ``gpu_sched_agents.heuristics.edge`` fills it (plug-in group).

Schedulers follow :class:`gpu_sched_env.core.policy.Policy` with ``state`` = the
:class:`~gpu_sched_env.edge.model.EdgeProblem` (the whole workload, planned at once) and the
decision a :class:`~gpu_sched_env.edge.plan.Plan`. Knobs are keyword arguments:
``POLICIES.make("fcfs_llf", fraction=0.5)``.
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("edge")

__all__ = ["POLICIES"]
