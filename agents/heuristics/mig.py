"""MIG placement heuristics and their env agent.

Policies follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(sim, rng)``, then
``decide(state)`` for a :class:`gpu_sched_env.mig.sim.PlacementState` (see
:mod:`gpu_sched_env.mig.policies`). :class:`HeuristicAgent` drives ``MIG-v0`` with the same
rule by reading the env's decision, so both paths give the same schedule. Importing this
module registers the policies.
"""

from __future__ import annotations

import numpy as np

from gpu_sched_agents.heuristics.env_agent import DecisionAgent
from gpu_sched_env.mig.policies import POLICIES as REGISTRY
from gpu_sched_env.mig.sim import PlacementSim, PlacementState


class _Placement:
    """Common driver: subclasses implement :meth:`key` (lower is better) over fitting instances."""

    name = "base"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, sim: PlacementSim, rng: np.random.Generator) -> None:
        """Start a new run."""
        self.rng = rng

    def key(self, st: PlacementState, i: int) -> tuple:
        """Sort key of instance ``i`` for the current job."""
        raise NotImplementedError

    def decide(self, st: PlacementState) -> int:
        """Best fitting instance by :meth:`key` (never defers)."""
        fits = [i for i, c in enumerate(st.capacities) if c >= st.job.peak]
        if not fits:
            raise ValueError(f"job {st.job.id} (peak {st.job.peak} MB) fits no instance")
        return min(fits, key=lambda i: self.key(st, i))


class BestFit(_Placement):
    """Smallest instance that holds the job's peak; ties by earliest free time, then index."""

    name = "best_fit"

    def key(self, st: PlacementState, i: int) -> tuple:
        """(memory, free time, index)."""
        return (st.capacities[i], max(st.time, st.free_at[i]), i)


class FirstFit(_Placement):
    """Lowest-index instance that holds the job."""

    name = "first_fit"

    def key(self, st: PlacementState, i: int) -> tuple:
        """(index,)."""
        return (i,)


class EarliestStart(_Placement):
    """Fitting instance where the job starts earliest (ties: smaller memory, index)."""

    name = "earliest_start"

    def key(self, st: PlacementState, i: int) -> tuple:
        """(start time, memory, index)."""
        return (max(st.time, st.free_at[i]), st.capacities[i], i)


POLICIES: dict[str, type[_Placement]] = {p.name: p for p in (BestFit, FirstFit, EarliestStart)}
for _name, _cls in POLICIES.items():
    REGISTRY.register(_name, _cls)


class HeuristicAgent(DecisionAgent):
    """A placement policy as an SB3-style agent on ``MIG-v0``: ``HeuristicAgent(name, env)``."""

    registry = REGISTRY
    view_method = "decision_state"
