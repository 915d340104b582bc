"""The HGSP policy registry; ``gpu_sched_agents.heuristics.hgsp`` fills it (plug-in group).

Policies follow :class:`gpu_sched_env.core.policy.Policy` with ``reset(problem, rng)`` (the
:class:`~gpu_sched_env.hgsp.sim.Problem`) and ``decide(decision) -> GPU index`` for one
:class:`~gpu_sched_env.hgsp.sim.Decision`. HGSP adds one hook: ``order(problem)``, the priority
list the simulator decodes (``None`` = arrival order). A policy whose ``decide`` is exactly one
of the simulator's built-in placement rules declares it as ``decode_rule`` (``"fifo"`` or
``"eft"``), and :func:`gpu_sched_env.hgsp.run` then decodes without per-task ``Decision``
objects (same schedule, faster). The problem and the decisions are read-only (frozen,
tuples, non-writeable arrays). Factories have the one registry signature
``POLICIES.make(name, world=None, **knobs)`` (:mod:`gpu_sched_env.core.registry`); HGSP
policies take no world (the problem arrives at ``reset``): ``POLICIES.make("sagreedy",
iters=50)``.
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("hgsp")

__all__ = ["POLICIES"]
