"""MIG placement heuristics and their env agent.

Policies follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(setup, rng)`` (a frozen
:class:`~gpu_sched_env.mig.online.MIGSetup`), then
``decide(state)`` for a :class:`gpu_sched_env.mig.sim.PlacementState` (see
:mod:`gpu_sched_env.mig.policies`). :class:`HeuristicAgent` drives ``MIG-v0`` with the same
rule by reading the env's decision, so both paths give the same schedule. Importing this
module registers the policies.

:class:`BestFitPausing` is the one minute-by-minute policy (``minute_by_minute = True``):
``run_policy`` drives it with :class:`gpu_sched_env.mig.preempt.MinuteSim`, and it re-decides
every minute which present jobs run where, pausing and resuming jobs as CP-SAT may. It
never places a whole job, so ``MIG-v0`` (one placement per job) cannot drive it.

:mod:`~gpu_sched_agents.heuristics.mig.strong` adds the classic strong placement rules, registered as
extensions (``published=False``, so the study's tables keep its four) with their tuned knobs:
``bfd_backfill`` (best-fit decreasing with EASY backfilling), ``lg_lpt`` (lowest grade - longest
processing time first) and ``local_search`` (jump/swap descent from either). They plan a poll's whole
queue from the state's ``waiting`` jobs and are env agents like Best-Fit.
:mod:`~gpu_sched_agents.heuristics.mig.bounds` holds ``bound`` (the optimum or a lower bound).
"""

from __future__ import annotations

import numpy as np

from gpu_sched_agents.heuristics.env_agent import DecisionAgent
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.mig.online import MIGSetup
from gpu_sched_env.mig.policies import POLICIES as REGISTRY
from gpu_sched_env.mig.preempt import MinuteState, Present
from gpu_sched_env.mig.sim import PlacementState


class _Placement:
    """Common driver: subclasses implement :meth:`key` (lower is better) over fitting instances."""

    name = "base"

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, setup: MIGSetup, rng: np.random.Generator) -> None:
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


class BestFitPausing:
    """Best-Fit re-decided every minute over the present jobs; a job may pause and resume.

    Every minute the present jobs are ranked by *value*, highest first, and each in turn
    takes the smallest free instance that holds its next minute (ties: the instance it ran
    on last, then index); a job that finds none pauses this minute. The value serves the
    makespan objective CP-SAT minimises (docs/mig.md, "Lower bound"): first *scarcity*
    (fewer instances can hold the job's next minute = higher value, since only those can
    run it), then *remaining run length* (longer = higher: ``t + remaining`` bounds the
    makespan), then the job that ran in the last minute (fewer pauses), then job id (the
    arrival order in generated sets). A started job that is not stoppable comes before all
    and keeps its instance every minute until done.
    """

    name = "best_fit_pausing"
    minute_by_minute = True

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, setup: MIGSetup, rng: np.random.Generator) -> None:
        """Start a new run."""
        self.rng = rng

    @staticmethod
    def value_key(p: Present, caps: tuple[int, ...]) -> tuple:
        """Sort key, lower = higher value: (not pinned, scarcity, −remaining, not ran last minute, id)."""
        scarcity = sum(1 for c in caps if c >= p.need())
        return (not p.pinned, scarcity, -p.remaining, not p.ran_last_minute, p.job.id)

    def decide(self, st: MinuteState) -> dict[int, int]:
        """Job id -> instance for the minute ``[st.time, st.time + 1)``."""
        caps = st.capacities
        free = set(range(len(caps)))
        out: dict[int, int] = {}
        for p in sorted(st.present, key=lambda p: self.value_key(p, caps)):
            # pinned jobs come first, so their instance is still free
            fits = [p.last_instance] if p.pinned else [i for i in free if caps[i] >= p.need()]
            if fits:
                i = min(fits, key=lambda i: (caps[i], i != p.last_instance, i))
                out[p.job.id] = i
                free.discard(i)
        return out


POLICIES: dict[str, type] = {p.name: p for p in (BestFit, FirstFit, EarliestStart, BestFitPausing)}
for _name, _cls in POLICIES.items():
    REGISTRY.register(_name, _cls)

from gpu_sched_agents.heuristics.mig import strong  # noqa: E402  (it registers after the study's four)

for _name, _cls in strong.STRONG.items():
    POLICIES[_name] = _cls
    REGISTRY.register(_name, _cls, published=False, knobs=strong.DEFAULTS.get(_name, {}))


class HeuristicAgent(DecisionAgent):
    """A placement policy as an SB3-style agent on ``MIG-v0``: ``HeuristicAgent(name, env)``."""

    registry = REGISTRY
    view_method = "decision_state"

    def __init__(self, name: str, env=None, **knobs) -> None:
        super().__init__(name, env, **knobs)
        if getattr(self.policy, "minute_by_minute", False):
            whole = ", ".join(n for n, c in POLICIES.items() if not getattr(c, "minute_by_minute", False))
            raise ConfigError(f"policy = {name!r} decides minute by minute; MIG-v0 places whole jobs; allowed: {whole}")
