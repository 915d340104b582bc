"""The MIG placement-policy registry; ``gpu_sched_agents.heuristics.mig`` fills it (plug-in group).

Policies follow :class:`gpu_sched_env.core.policy.Policy` with ``reset(setup, rng)`` (a frozen
:class:`~gpu_sched_env.mig.online.MIGSetup`: capacities and poll interval, never the
simulator) and ``decide(state) -> action`` for one
:class:`~gpu_sched_env.mig.sim.PlacementState`: an instance index, or
``state.defer_action``. A policy with ``minute_by_minute = True`` (``best_fit_pausing``)
is driven by a :class:`~gpu_sched_env.mig.preempt.MinuteSim` and gets
``decide(state) -> {job id: instance}`` every minute for a
:class:`~gpu_sched_env.mig.preempt.MinuteState`; ``run_policy`` picks the loop.

Factories have the one registry signature ``POLICIES.make(name, world=None, **knobs)``
(:mod:`gpu_sched_env.core.registry`); these policies take no world.
"""

from __future__ import annotations

from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("mig")

__all__ = ["POLICIES"]
