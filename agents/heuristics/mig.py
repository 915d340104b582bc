"""MIG placement heuristics (one protocol: ``reset(rng)``, ``decide(state)``, ``predict``).

``decide`` gets a :class:`gpu_sched_env.mig.sim.PlacementState` (the simulator path);
``predict`` gets the env's observation and reads the decision from the env it was built
with (``info``-free SB3 signature), so the same rule runs in both paths.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_env.mig.sim import PlacementState


class _Placement:
    """Common driver: subclasses implement :meth:`key` (lower is better) over fitting instances."""

    name = "base"

    def __init__(self, env: Any = None) -> None:
        self.env = env
        self.rng = np.random.default_rng(0)

    def reset(self, rng: Any) -> None:
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

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True):
        """SB3-style: decide on the env's current decision (needs ``env`` at construction)."""
        if self.env is None:
            raise ValueError(f"{type(self).__name__}.predict needs the env: {type(self).__name__}(env)")
        base = getattr(self.env, "unwrapped", self.env)
        return np.int64(self.decide(base.decision_state())), state


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
