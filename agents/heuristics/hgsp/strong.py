"""The classic strong rules of weighted-tardiness scheduling for HGSP, and :func:`tune` (their knobs).

Each rule is a priority index over the *released* tasks at the decision time, turned into a
placement sequence by one dispatching loop (:func:`~gpu_sched_agents.heuristics.hgsp.sequencing.dispatch`):
at each step ``t*`` is the earliest time any unplaced task could start, the tasks that have arrived
by ``t*`` compete, the highest index at ``t = t*`` goes next (ties: lowest task index) and is placed
by the rule's ``placement``: ``"est"``, the GPU where it starts earliest, or ``"eft"``, where it
finishes earliest (ties: lowest GPU index). For a static index (WSPT) this is the simulator's
release-aware decoder on the index's ordering (tested).

A rule hands :func:`gpu_sched_env.hgsp.run` that sequence as ``order(problem)`` with ``serial = True``
and ``decode_rule`` = its placement's built-in rule, so the list-order decoder replays the dispatched
schedule exactly; on ``HGSP-v0`` the same holds with ``order=rule.order(problem)``, ``decoder="list"``
and ``HeuristicAgent(name, env)`` (whose ``decide`` is the placement; tested).

``p`` below is a task's run time on the fastest GPU that holds it, ``pbar`` the mean ``p`` of the
released tasks, ``t`` the decision time. The rules read task data and the GPUs' free times only.

* ``wspt``: Smith's ratio ``w / p`` (static).
* ``atc``: apparent tardiness cost, ``w / p * exp(-(d - p - t)^+ / (k pbar))``.
* ``mdd``: modified due date ``max(d, t + p)``, smallest first (unweighted).
* ``wmdd``: weighted modified due date ``max(p, d - t) / w``, smallest first.
* ``covert``: cost over time, ``w / p * (1 - (d - p - t)^+ / (k p))^+``.
* ``ls``: multi-start descent: the best rules' sequences improved by tardy-task insertion moves
  (the strongest here).

The earliest-start placement is the tuned default of every rule: on the loaded regimes it cuts the
weighted tardiness several-fold against earliest finish, which leaves the slow A30 idle while tasks
wait for the fast GPUs (as Greedy does against FIFO); earliest finish is better only where the
cluster is lightly loaded (``tasks2`` on ``medium``). :data:`DEFAULTS` holds the shipped knobs, each
:func:`tune`'s best row on 20 selection seeds (``python -m studies tune-rules --scenario hgsp``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.hgsp.rules import Greedy
from gpu_sched_agents.heuristics.hgsp.sequencing import PLACEMENTS, descend, dispatch
from gpu_sched_agents.heuristics.tuning import grid_table, grids_to_play, selection_seeds
from gpu_sched_env.core.errors import check_choice, check_number
from gpu_sched_env.hgsp.api import run
from gpu_sched_env.hgsp.model import make_cluster
from gpu_sched_env.hgsp.sim import RULES, Decision, Problem, decode
from gpu_sched_env.hgsp.workload import generate_tasks

# The shipped knobs: tune()'s best rows on selection seeds 10 000 .. 10 019 (see each class).
DEFAULTS: dict[str, dict[str, Any]] = {
    "wspt": {"placement": "est"},
    "atc": {"k": 0.5, "placement": "est"},
    "mdd": {"placement": "est"},
    "wmdd": {"placement": "est"},
    "covert": {"k": 2.0, "placement": "est"},
    "ls": {"starts": 8, "work": 300_000, "placement": "est"},
}


class _Dispatching(Greedy):
    """A priority index decoded by :func:`dispatch`; ``order`` returns the dispatch sequence.

    ``decide`` (the env agent's answer) and ``decode_rule`` are the placement's built-in rule, so
    the list-order decode of ``order(problem)`` is the dispatched schedule.
    """

    name = "dispatching"
    serial = True  # hgsp.run decodes the returned sequence in list order: the dispatched schedule
    decode_rule: str | None = "fifo"  # set per instance from the placement knob

    def __init__(self, placement: str = "est") -> None:
        self.placement = check_choice(f"{self.name}.placement", placement, PLACEMENTS)
        self.decode_rule = PLACEMENTS[placement]

    def index(self, t: float, w: np.ndarray, p: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Priority of each released task at time ``t`` (higher first)."""
        raise NotImplementedError

    def order(self, problem: Problem) -> np.ndarray:
        """The dispatch sequence, then the tasks no GPU can hold (the decoder skips them)."""
        seq = dispatch(problem, self.index, self.placement)
        return np.concatenate([seq, problem.skipped]).astype(np.int64)

    def decide(self, d: Decision) -> int:
        """The placement's GPU (earliest start or earliest finish; ties: lowest GPU index)."""
        return RULES[self.decode_rule](d.arrival, d.avail, d.p_row, d.gpus)


class WSPT(_Dispatching):
    """Weighted shortest processing time: highest ``w / p`` first (static).

    Smith (1956), "Various optimizers for single-stage production", *Naval Research Logistics
    Quarterly* 3(1-2):59-66 (the ratio rule, optimal for ``1||sum w C``).

    Args:
        placement: ``"est"`` (earliest start) or ``"eft"`` (earliest finish); default is
            :func:`tune`'s best.
    """

    name = "wspt"

    def __init__(self, placement: str = DEFAULTS["wspt"]["placement"]) -> None:
        super().__init__(placement)

    def index(self, t, w, p, d):
        """``w / p``."""
        return w / p


class ATC(_Dispatching):
    """Apparent tardiness cost: ``w / p * exp(-(d - p - t)^+ / (k pbar))``, highest first.

    Vepsalainen and Morton (1987), "Priority rules for job shops with weighted tardiness costs",
    *Management Science* 33(8):1035-1047, section 2 (the ATC index with look-ahead ``k``; ``pbar``
    the mean processing time of the waiting jobs). A task without slack (``d - p - t <= 0``) has
    WSPT's priority; slack discounts it exponentially. Compared in the log domain (same order).
    Defaults (``k``, ``placement``) are :func:`tune`'s best.

    Args:
        k: look-ahead, in (0, 100].
        placement: ``"est"`` (earliest start) or ``"eft"`` (earliest finish).
    """

    name = "atc"

    def __init__(self, k: float = DEFAULTS["atc"]["k"], placement: str = DEFAULTS["atc"]["placement"]) -> None:
        super().__init__(placement)
        self.k = float(check_number("atc.k", k, lo=0, hi=100, lo_open=True))

    def index(self, t, w, p, d):
        """``log(w / p) - (d - p - t)^+ / (k pbar)``."""
        with np.errstate(divide="ignore"):
            return np.log(w / p) - np.maximum(0.0, d - p - t) / (self.k * float(p.mean()))


class MDD(_Dispatching):
    """Modified due date: smallest ``max(d, t + p)`` first (unweighted).

    Baker and Bertrand (1982), "A dynamic priority rule for scheduling against due-dates",
    *Journal of Operations Management* 3(1):37-42: a task's due date, or its earliest finish if it
    can no longer meet it. Default ``placement`` is :func:`tune`'s best.

    Args:
        placement: ``"est"`` (earliest start) or ``"eft"`` (earliest finish).
    """

    name = "mdd"

    def __init__(self, placement: str = DEFAULTS["mdd"]["placement"]) -> None:
        super().__init__(placement)

    def index(self, t, w, p, d):
        """``-max(d, t + p)``."""
        return -np.maximum(d, t + p)


class WMDD(_Dispatching):
    """Weighted modified due date: smallest ``max(p, d - t) / w`` first.

    Kanet and Li (2004), "A weighted modified due date rule for sequencing to minimize weighted
    tardiness", *Journal of Scheduling* 7(4):261-276: MDD made weight-aware; a task that can no
    longer meet its due date is ordered by WSPT's ``p / w``. A task of weight 0 goes last.
    Default ``placement`` is :func:`tune`'s best.

    Args:
        placement: ``"est"`` (earliest start) or ``"eft"`` (earliest finish).
    """

    name = "wmdd"

    def __init__(self, placement: str = DEFAULTS["wmdd"]["placement"]) -> None:
        super().__init__(placement)

    def index(self, t, w, p, d):
        """``-max(p, d - t) / w``."""
        with np.errstate(divide="ignore"):
            return -np.maximum(p, d - t) / w


class COVERT(_Dispatching):
    """Cost over time: ``w / p * (1 - (d - p - t)^+ / (k p))^+``, highest first.

    Carroll (1965), "Heuristic sequencing of single and multiple component jobs", PhD thesis, MIT,
    in the form of Vepsalainen and Morton (1987), *Management Science* 33(8):1035-1047, section 2:
    the expected tardiness cost per unit of processing, rising linearly from 0 at slack ``k p`` to
    WSPT's ``w / p`` at slack 0. Defaults (``k``, ``placement``) are :func:`tune`'s best.

    Args:
        k: look-ahead, in (0, 100].
        placement: ``"est"`` (earliest start) or ``"eft"`` (earliest finish).
    """

    name = "covert"

    def __init__(self, k: float = DEFAULTS["covert"]["k"], placement: str = DEFAULTS["covert"]["placement"]) -> None:
        super().__init__(placement)
        self.k = float(check_number("covert.k", k, lo=0, hi=100, lo_open=True))

    def index(self, t, w, p, d):
        """``w / p * max(0, 1 - (d - p - t)^+ / (k p))``."""
        return w / p * np.maximum(0.0, 1.0 - np.maximum(0.0, d - p - t) / (self.k * p))


STRONG: dict[str, type[_Dispatching]] = {c.name: c for c in (WSPT, ATC, MDD, WMDD, COVERT)}


# The starts of LocalSearch, in the order it takes them: (rule, knobs); the LS's placement applies.
STARTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("atc", {"k": 0.5}),
    ("atc", {"k": 0.25}),
    ("atc", {"k": 1.0}),
    ("mdd", {}),
    ("atc", {"k": 2.0}),
    ("wmdd", {}),
    ("covert", {"k": 2.0}),
    ("wspt", {}),
)


class LocalSearch(_Dispatching):
    """Multi-start descent: the first ``starts`` rules of :data:`STARTS`, each improved by insertion moves.

    Each start's dispatch sequence is improved by
    :func:`~gpu_sched_agents.heuristics.hgsp.sequencing.descend` (tardy tasks inserted earlier: the
    insert neighbourhood with descent of Crauwels, Potts and Van Wassenhove (1998), "Local search
    heuristics for the single machine total weighted tardiness scheduling problem", *INFORMS Journal
    on Computing* 10(3):341-350), its moves decoding at most ``work`` task placements per start (a
    bound on the time whatever the load). The sequence with the lowest weighted tardiness is kept
    (ties: the earlier start). Seeding a descent with the best dispatching rules follows Potts and
    Van Wassenhove (1991), "Single machine tardiness sequencing heuristics", *IIE Transactions*
    23(4):346-354. Deterministic. Defaults (``starts``, ``work``, ``placement``) are :func:`tune`'s
    best.

    Args:
        starts: how many of :data:`STARTS` to descend from, an integer in [1, 8].
        work: task placements the moves of one start may decode, an integer in [0, 10**9] (0: the
            best start as dispatched).
        placement: ``"est"`` (earliest start) or ``"eft"`` (earliest finish), for every start.
    """

    name = "ls"

    def __init__(
        self,
        starts: int = DEFAULTS["ls"]["starts"],
        work: int = DEFAULTS["ls"]["work"],
        placement: str = DEFAULTS["ls"]["placement"],
    ) -> None:
        super().__init__(placement)
        self.starts = int(check_number("ls.starts", starts, lo=1, hi=len(STARTS), integer=True))
        self.work = int(check_number("ls.work", work, lo=0, hi=10**9, integer=True))

    def order(self, problem: Problem) -> np.ndarray:
        """The best descended sequence, then the tasks no GPU can hold."""
        w, dl = problem.tasks.weight, problem.tasks.deadline
        best, best_wt = None, math.inf
        for rule, knobs in STARTS[: self.starts]:
            start = dispatch(problem, STRONG[rule](**knobs, placement=self.placement).index, self.placement)
            seq, _ = descend(problem, start, self.decode_rule, self.work)
            full = np.concatenate([np.asarray(seq, np.int64), problem.skipped]).astype(np.int64)
            end = decode(problem, full, self.decode_rule, serial=True).end
            wt = float(np.nansum(w * np.maximum(0.0, end - dl)))
            if wt < best_wt:
                best, best_wt = full, wt
        return best


STRONG["ls"] = LocalSearch

# ---------------------------------------------------------------------------------------------
# tuning on selection seeds

# The scenario's instance configurations: the benchmark regimes of `gpu-sched evaluate --scenario
# hgsp` (each preset at its own size: tasks1 1000 tasks, tasks2 2000, tiny 12).
TUNE_REGIMES: dict[str, tuple[str, str]] = {
    "tasks1_small": ("tasks1", "small"),
    "tasks1_medium": ("tasks1", "medium"),
    "tasks2_medium": ("tasks2", "medium"),
    "tasks2_small": ("tasks2", "small"),
    "tiny_small": ("tiny", "small"),
}
PLACEMENT_GRID = ("est", "eft")
GRIDS: dict[str, dict[str, tuple]] = {
    "wspt": {"placement": PLACEMENT_GRID},
    "atc": {"k": (0.1, 0.25, 0.5, 1.0, 2.0, 4.0), "placement": PLACEMENT_GRID},
    "mdd": {"placement": PLACEMENT_GRID},
    "wmdd": {"placement": PLACEMENT_GRID},
    "covert": {"k": (0.5, 1.0, 2.0, 4.0, 8.0), "placement": PLACEMENT_GRID},
    "ls": {"starts": (1, 2, 4, 8), "work": (300_000,), "placement": PLACEMENT_GRID},
}


def instances(seeds: Sequence[int], regimes: Mapping[str, tuple[str, str]] = TUNE_REGIMES) -> dict[str, list]:
    """Regime -> its ``(tasks, cluster, seed)`` per seed (``generate_tasks(preset, seed)``)."""
    return {
        r: [(generate_tasks(tasks, s), make_cluster(cluster), s) for s in seeds]
        for r, (tasks, cluster) in regimes.items()
    }


def score(policy: Any, insts: Mapping[str, list]) -> dict[str, np.ndarray]:
    """Weighted tardiness (``hgsp.run(...).summary()["wt"]``) of ``policy`` per regime, one per seed."""
    return {r: np.array([run(policy, ts, cl, s).summary()["wt"] for ts, cl, s in rows]) for r, rows in insts.items()}


def tune(n_seeds: int = 20, seed0: int = 10_000, **grid: Mapping[str, Sequence]) -> pd.DataFrame:
    """Play every knob candidate of each rule on selection seeds; one row per (rule, knobs).

    Args:
        n_seeds: selection seeds ``seed0 .. seed0 + n_seeds - 1``; all must lie in 10 000 .. 19 999.
        seed0: the first seed.
        grid: ``rule={knob: candidates}`` replaces that rule's grid (:data:`GRIDS`); when any is given,
            only the named rules are played.

    Returns:
        Columns ``rule``, the knobs (``placement``, ``k``, ``starts``, ``work``; NaN where a rule has
        not the knob), ``mean`` (weighted tardiness over every seed of every regime of
        :data:`TUNE_REGIMES`), ``ci_lo``, ``ci_hi`` (its 95 % t interval), ``mean_<regime>`` per
        regime, ``n``, ``default`` (the row of the shipped knobs); rules in :data:`GRIDS` order,
        lowest mean first within a rule. The shipped :data:`DEFAULTS` are the best rows on 20 seeds
        from 10 000.
    """
    seeds = selection_seeds(n_seeds, seed0)
    grids = grids_to_play(grid, GRIDS)
    insts = instances(seeds)
    return grid_table(grids, DEFAULTS, lambda rule, knobs: score(STRONG[rule](**knobs), insts))


__all__ = [
    "ATC",
    "COVERT",
    "DEFAULTS",
    "GRIDS",
    "MDD",
    "PLACEMENTS",
    "STARTS",
    "STRONG",
    "TUNE_REGIMES",
    "WMDD",
    "WSPT",
    "LocalSearch",
    "dispatch",
    "instances",
    "score",
    "selection_seeds",
    "tune",
]
