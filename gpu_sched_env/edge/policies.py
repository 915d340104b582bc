"""The edge registries: planners (offline, whole workload) and env policies.

``gpu_sched_agents.heuristics.edge`` fills both.

* :data:`PLANNERS`: offline planners following :class:`gpu_sched_env.core.policy.Planner`,
  ``plan(problem, rng) -> Plan`` for a whole :class:`~gpu_sched_env.edge.model.EdgeProblem`
  (``membatch``, ``baseline_ilp``, ``fcfs_llf``). They plan before anything runs, so they are
  not policies: nothing calls them at decision points.
* :data:`POLICIES`: the env policies following :class:`gpu_sched_env.core.policy.Policy`,
  ``reset(cluster, rng)`` and ``decide(decision) -> device`` for one read-only
  :class:`~gpu_sched_env.edge.env.EdgeDecision` (``fcfs_llf``, ``random``): the one table
  ``EdgeBatch-v0``'s heuristic agents come from.

Both have the one registry signature ``make(name, world=None, **knobs)``
(:mod:`gpu_sched_env.core.registry`) and take no world:
``PLANNERS.make("fcfs_llf", split=False)``, ``POLICIES.make("fcfs_llf", fraction=0.5)``.
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

PLANNERS = PolicyRegistry("edge", kind="planner")
POLICIES = PolicyRegistry("edge")

__all__ = ["PLANNERS", "POLICIES"]
