"""The LLM-serving policy registry; ``gpu_sched_agents.heuristics.llm`` fills it (plug-in group).

Policies follow :class:`gpu_sched_env.core.policy.Policy` with ``reset(sim, rng)`` (the
:class:`~gpu_sched_env.llm.sim.LLMSim`) and ``decide(decision) -> request index`` for one
:class:`~gpu_sched_env.llm.sim.LLMDecision` (one of ``decision.candidates``).
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("llm")

__all__ = ["POLICIES"]
