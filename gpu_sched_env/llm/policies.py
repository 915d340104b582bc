"""The LLM-serving policy registry; ``gpu_sched_agents.heuristics.llm`` fills it (plug-in group).

Policies follow :class:`gpu_sched_env.core.policy.Policy` with ``reset(setup, rng)`` (a frozen
:class:`~gpu_sched_env.llm.sim.LLMSetup`: cluster, request count, engine; never the
simulator) and ``decide(decision) -> request index`` for one read-only
:class:`~gpu_sched_env.llm.sim.LLMDecision` (one of ``decision.candidates``; requests not
arrived yet show NaN).

Factories have the one registry signature ``POLICIES.make(name, world=None, **knobs)``
(:mod:`gpu_sched_env.core.registry`); these policies take no world.
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("llm")

__all__ = ["POLICIES"]
