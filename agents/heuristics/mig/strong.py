"""The classic strong placement rules of MIG scheduling, a local search over them, and :func:`tune`.

Every rule is a placement policy (:class:`gpu_sched_env.core.policy.Policy`: ``reset(setup, rng)``,
``decide(state) -> instance``) driven by :class:`~gpu_sched_env.mig.sim.PlacementSim`, so it runs in
``run_policy`` and, through :class:`~gpu_sched_agents.heuristics.mig.HeuristicAgent`, on ``MIG-v0``
(tested: same schedule). A rule never defers and never pauses: each job runs whole on one instance.

**Why a rule can plan a whole poll.** A :class:`~gpu_sched_env.mig.sim.PlacementState` shows the job to
place *and* the other jobs taken at this poll (``waiting``). The simulator asks for them one at a time,
in its queue order, and appends each to its instance's plan contiguously from
``max(t, free time)``; so after the poll an instance ends at ``max(t, free) + (sum of the lengths given
to it)`` whatever the order it was given them in. A rule therefore assigns the whole queue at the first
decision of a poll (in its own order) and answers each later decision of that poll from that
assignment: the makespan is the one the rule planned (the order within an instance only moves
completion times, never the makespan). A cached assignment is used only while the state is the one it
predicts (same poll, its jobs, the instances' free times it implies); otherwise the rule plans afresh.

Rules (``name``: paper):

* ``bfd_backfill``: best-fit decreasing (Johnson 1973, "Near-optimal bin packing algorithms", PhD
  thesis, MIT: the BFD rule and its 11/9 bound; Johnson 1974, "Fast algorithms for bin packing",
  J. Comput. Syst. Sci. 8(3):272-314) with EASY backfilling (Lifka 1995, "The ANL/IBM SP scheduling
  system", JSSPP, LNCS 949:295-303, the EASY scheduler; Mu'alem & Feitelson 2001, "Utilization,
  predictability, workloads, and user runtime estimates in scheduling the IBM SP2 with backfilling",
  IEEE TPDS 12(6):529-543, the EASY rule: a later job may start early if it does not delay the
  reservation of the queue's head). The queue by decreasing size (peak memory,
  then run length), each job to the best-fitting instance (the smallest memory that holds its peak,
  then the earliest end); then, smallest job first, a job moves to a larger instance that would
  otherwise idle, i.e. whose end plus the job's run length plus ``reserve`` [min] is at most the end of
  the job's own instance (it fills the hole without lengthening the plan). ``reserve`` keeps room on
  the large instances for jobs yet to come; default ``reserve = 2`` is tune()'s best.
* ``lg_lpt``: lowest grade - longest processing time first (Hwang, Chang & Lee 2004, "Parallel machine
  scheduling under a grade of service provision", Computers & OR 31(12):2055-2061, their LG-LPT; the
  LPT rule of Graham 1969, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math.
  17(2):416-429, with its bound 4/3 - 1/(3m)): jobs
  by fewest instances that hold them (the nested memory classes), then by decreasing ``size``, each to
  the holding instance that ends earliest (ties: smaller memory, index). Knob ``size``: ``length`` (run
  length, LPT) or ``area`` (memory-time area, the sum of the per-minute memory); default
  ``size = "length"`` is tune()'s best.
* ``local_search`` (ours): descent from a rule's assignment of the poll's queue over the jump (move one
  job) and swap (exchange two jobs) neighbourhoods of Schuurman & Vredeveld 2007, "Performance guarantees
  of local search for multiprocessor scheduling", INFORMS J. Computing 19(1):52-63, restricted to
  instances that hold the job; each step takes the best move that lowers (largest end, sum of squared
  ends) lexicographically, at most ``max_steps`` steps per poll. Knobs ``start`` (``bfd_backfill`` or
  ``lg_lpt``, with their default knobs) and ``swaps``; defaults ``start = "bfd_backfill"``,
  ``swaps = True`` are tune()'s best.

On the study's GPU (2000 / 1000 / 1000 MB) the 2000 MB instance is the bottleneck: every job above
1000 MB runs there, and Best-Fit already meets the whole-job lower bound on 20/20 selection seeds at 50
and 100 jobs, so the rules tie with it there (``lg_lpt`` and ``local_search`` gain one minute on one of
20 seeds at 8 jobs); on a partition with two large instances their makespan is 22-23 % below it
(docs/mig.md, "Strong rules and the bound"). :func:`tune` plays both partitions for that reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.tuning import candidates, grid_table, grids_to_play, selection_seeds
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES, Job
from gpu_sched_env.mig.online import MIGSetup
from gpu_sched_env.mig.sim import PlacementState, run_policy
from gpu_sched_env.mig.workload import mig_dataset

Assignment = dict[int, int]  # job id -> instance
MAX_RESERVE_MIN = 10**6  # [min] a reserve this long never lets a job backfill (the longest poll interval)


class PollRule:
    """A placement rule that assigns a poll's whole queue at once (see the module docstring).

    Subclasses implement :meth:`assign`.
    """

    name = "poll_rule"

    def __init__(self) -> None:
        self._cache: tuple[int, tuple[int, ...], Assignment, dict[int, int]] | None = None

    def reset(self, setup: MIGSetup, rng: np.random.Generator) -> None:
        """Start a new run (forget the cached assignment; the rules draw no random numbers)."""
        self._cache = None

    def assign(self, t: int, queue: Sequence[Job], caps: tuple[int, ...], free: Sequence[int]) -> Assignment:
        """Instance of every job of ``queue`` at poll ``t`` [min] given the instances' free times [min]."""
        raise NotImplementedError

    def decide(self, st: PlacementState) -> int:
        """The instance the poll's assignment gives ``st.job`` (never defers)."""
        queue = (st.job, *st.waiting)
        if not self._cached_fits(st, queue):
            for j in queue:
                if j.peak > max(st.capacities):
                    raise ValueError(f"job {j.id} (peak {j.peak} MB) fits no instance")
            plan = self.assign(st.time, queue, tuple(st.capacities), st.free_at)
            self._cache = (st.time, tuple(st.free_at), plan, {j.id: j.length for j in queue})
        assert self._cache is not None
        return self._cache[2][st.job.id]

    def _cached_fits(self, st: PlacementState, queue: Sequence[Job]) -> bool:
        """Whether the cached assignment was made at this poll and predicts the state seen now."""
        if self._cache is None:
            return False
        t, free0, plan, length = self._cache
        ids = {j.id for j in queue}
        if st.time != t or not ids <= plan.keys():
            return False
        for i, f in enumerate(free0):  # the sim appended the placed jobs contiguously from max(t, free)
            placed = sum(length[j] for j, inst in plan.items() if inst == i and j not in ids)
            if st.free_at[i] != (max(t, f) + placed if placed else f):
                return False
        return True


def _ends(t: int, free: Sequence[int]) -> list[int]:
    """[min] when each instance could start a job placed at poll ``t``."""
    return [max(t, f) for f in free]


def _holders(job: Job, caps: Sequence[int]) -> list[int]:
    return [i for i, c in enumerate(caps) if c >= job.peak]


class BFDBackfill(PollRule):
    """Best-fit decreasing with EASY backfilling (Johnson 1973/1974; Lifka 1995; Mu'alem & Feitelson 2001).

    See the module docstring for the rule and the papers' sections.

    Args:
        reserve: [min] slack a backfilled job must leave before the end of its best-fit instance, an
            integer in [0, 1e6] (1e6: no backfilling, plain BFD).
    """

    name = "bfd_backfill"

    def __init__(self, reserve: int = 2) -> None:
        super().__init__()
        self.reserve = int(check_number("reserve", reserve, lo=0, hi=MAX_RESERVE_MIN, integer=True))

    def assign(self, t: int, queue: Sequence[Job], caps: tuple[int, ...], free: Sequence[int]) -> Assignment:
        """BFD over the queue, then backfilling, smallest job first (see the class docstring)."""
        end = _ends(t, free)
        order = sorted(queue, key=lambda j: (-j.peak, -j.length, j.id))
        plan: Assignment = {}
        for j in order:
            b = min(_holders(j, caps), key=lambda i: (caps[i], end[i], i))
            plan[j.id] = b
            end[b] += j.length
        for j in reversed(order):
            b = plan[j.id]
            idle = [i for i in _holders(j, caps) if caps[i] > caps[b] and end[i] + j.length + self.reserve <= end[b]]
            if idle:
                i = min(idle, key=lambda i: (end[i], caps[i], i))
                plan[j.id] = i
                end[b] -= j.length
                end[i] += j.length
        return plan


LPT_SIZES = ("length", "area")


class LGLPT(PollRule):
    """Lowest grade - longest processing time first (module docstring: Hwang, Chang & Lee 2004; Graham 1969).

    Args:
        size: the LPT key, ``"length"`` (run length [min]) or ``"area"`` (memory-time area [MB min]).
    """

    name = "lg_lpt"

    def __init__(self, size: str = "length") -> None:
        super().__init__()
        self.size = check_choice("size", size, LPT_SIZES)

    def assign(self, t: int, queue: Sequence[Job], caps: tuple[int, ...], free: Sequence[int]) -> Assignment:
        """Fewest holding instances first, then the larger size; each to the holding instance ending first."""
        end = _ends(t, free)

        def key(j: Job) -> tuple:
            return (len(_holders(j, caps)), -(j.length if self.size == "length" else sum(j.mem)), j.id)

        plan: Assignment = {}
        for j in sorted(queue, key=key):
            i = min(_holders(j, caps), key=lambda i: (end[i], caps[i], i))
            plan[j.id] = i
            end[i] += j.length
        return plan


LS_STARTS = ("bfd_backfill", "lg_lpt")


class LocalSearch(PollRule):
    """Jump/swap descent from a rule's assignment of each poll (module docstring: Schuurman & Vredeveld 2007).

    Args:
        start: the rule whose assignment the descent starts from (``bfd_backfill`` or ``lg_lpt``, default knobs).
        swaps: also exchange two jobs between instances (else jumps only).
        max_steps: most improving steps per poll, an integer in [0, 1e6] (each step strictly lowers the
            objective, so the descent ends by itself; the cap bounds the time on huge queues).
    """

    name = "local_search"

    def __init__(self, start: str = "bfd_backfill", swaps: bool = True, max_steps: int = 1000) -> None:
        super().__init__()
        self.start = check_choice("start", start, LS_STARTS)
        if not isinstance(swaps, (bool, np.bool_)):
            raise ConfigError(f"swaps = {swaps!r} is not allowed; allowed: True, False")
        self.swaps = bool(swaps)
        self.max_steps = int(check_number("max_steps", max_steps, lo=0, hi=10**6, integer=True))
        self._seed = STRONG[start](**DEFAULTS[start])

    def assign(self, t: int, queue: Sequence[Job], caps: tuple[int, ...], free: Sequence[int]) -> Assignment:
        """The start rule's assignment, improved by the best jump or swap while one helps."""
        plan = dict(self._seed.assign(t, queue, caps, free))
        end = _ends(t, free)
        for j in queue:
            end[plan[j.id]] += j.length
        holds = {j.id: set(_holders(j, caps)) for j in queue}

        def value(e: Sequence[int]) -> tuple[int, int]:
            return (max(e), sum(x * x for x in e))

        cur = value(end)
        for _ in range(self.max_steps):
            best: tuple[tuple[int, int], list[tuple[int, int]], list[int]] | None = None
            for a in queue:
                ia = plan[a.id]
                for i in sorted(holds[a.id] - {ia}):
                    e = list(end)
                    e[ia] -= a.length
                    e[i] += a.length
                    if value(e) < cur and (best is None or value(e) < best[0]):
                        best = (value(e), [(a.id, i)], e)
                if not self.swaps:
                    continue
                for b in queue:
                    ib = plan[b.id]
                    if b.id <= a.id or ib == ia or a.length == b.length:
                        continue
                    if ib not in holds[a.id] or ia not in holds[b.id]:
                        continue
                    e = list(end)
                    e[ia] += b.length - a.length
                    e[ib] += a.length - b.length
                    if value(e) < cur and (best is None or value(e) < best[0]):
                        best = (value(e), [(a.id, ib), (b.id, ia)], e)
            if best is None:
                break
            cur, moves, end = best
            plan.update(moves)
        return plan


STRONG: dict[str, type[PollRule]] = {c.name: c for c in (BFDBackfill, LGLPT, LocalSearch)}

# The shipped knobs: tune()'s best rows on selection seeds 10 000 .. 10 019 (see each class).
DEFAULTS: dict[str, dict[str, Any]] = {
    "bfd_backfill": {"reserve": 2},
    "lg_lpt": {"size": "length"},
    "local_search": {"start": "bfd_backfill", "swaps": True},
}

# ---------------------------------------------------------------------------------------------
# tuning on selection seeds

# The instance sizes of the scenario's benchmark regimes (8, 50 and 100 jobs of the Part B preset)
# on two partitions: the study's GPU, where the large instance is the bottleneck and every candidate
# ties, and one with two large instances, where the rules' choices decide the makespan.
TUNE_SIZES = (8, 50, 100)
TUNE_PARTITIONS: dict[str, tuple[int, ...]] = {"study": DEFAULT_CAPACITIES, "two_big": (2000, 2000, 1000)}
GRIDS: dict[str, dict[str, tuple]] = {
    "bfd_backfill": {"reserve": (0, 1, 2, 3, 5, 10, 20, MAX_RESERVE_MIN)},
    "lg_lpt": {"size": LPT_SIZES},
    "local_search": {"start": LS_STARTS, "swaps": (True, False)},
}


def score(
    policy: Any,
    seeds: Sequence[int],
    sizes: Sequence[int] = TUNE_SIZES,
    partitions: Mapping[str, Sequence[int]] = TUNE_PARTITIONS,
) -> dict[str, np.ndarray]:
    """Makespan [min] of ``policy`` (a registered name, or a zero-argument factory) per configuration, one per seed.

    Keys ``"<partition>_n<size>"``; instances ``mig_dataset(seed, size)`` polled every minute.
    """
    out = {}
    for part, caps in partitions.items():
        for n in sizes:
            out[f"{part}_n{n}"] = np.array(
                [
                    run_policy(_dataset(s, n), policy if isinstance(policy, str) else policy(), caps).metrics.makespan
                    for s in seeds
                ],
                dtype=float,
            )
    return out


_DATASETS: dict[tuple[int, int], list[Job]] = {}


def _dataset(seed: int, n: int) -> list[Job]:
    """``mig_dataset(seed, n)``, generated once per process (jobs are frozen, so sharing is safe)."""
    if (seed, n) not in _DATASETS:
        _DATASETS[(seed, n)] = mig_dataset(seed, n)
    return _DATASETS[(seed, n)]


def tune(n_seeds: int = 20, seed0: int = 10_000, **grid: Mapping[str, Sequence]) -> pd.DataFrame:
    """Play every knob candidate of each tunable rule on selection seeds; one row per (rule, knobs).

    Args:
        n_seeds: selection seeds ``seed0 .. seed0 + n_seeds - 1``; all must lie in 10 000 .. 19 999.
        seed0: the first seed.
        grid: ``rule={knob: candidates}`` replaces that rule's grid (:data:`GRIDS`); when any is given,
            only the named rules are played.

    Returns:
        Columns ``rule``, the knobs (``reserve``, ``size``, ``start``, ``swaps``; NaN where a rule has
        not the knob), ``mean`` (makespan [min] over every seed, size of :data:`TUNE_SIZES` and
        partition of :data:`TUNE_PARTITIONS`), ``ci_lo``, ``ci_hi`` (its 95 % t interval), one
        ``mean_<partition>_n<size>`` per configuration, ``n``, ``default`` (the row of the shipped
        knobs); rules in :data:`GRIDS` order, lowest mean first within a rule (ties in grid order).
        The shipped :data:`DEFAULTS` are the best rows on 20 seeds from 10 000: default
        ``reserve = 2``, ``size = "length"``, ``start = "bfd_backfill"``, ``swaps = True``.
    """
    seeds = selection_seeds(n_seeds, seed0)
    grids = grids_to_play(grid, GRIDS)
    for rule, g in grids.items():
        for knobs in candidates(g):
            STRONG[rule](**knobs)  # a bad candidate fails here, before any play
    return grid_table(
        grids, DEFAULTS, lambda rule, knobs: score(lambda rule=rule, knobs=knobs: STRONG[rule](**knobs), seeds)
    )


__all__ = [
    "DEFAULTS",
    "GRIDS",
    "LGLPT",
    "STRONG",
    "TUNE_PARTITIONS",
    "TUNE_SIZES",
    "BFDBackfill",
    "LocalSearch",
    "PollRule",
    "score",
    "selection_seeds",
    "tune",
]
