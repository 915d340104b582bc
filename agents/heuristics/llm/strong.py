"""The classic strong rules of LLM-request scheduling, and :func:`tune` (their knobs on selection seeds).

Every rule follows :class:`gpu_sched_env.core.policy.Policy` like FIFO and WSRPT (``reset(setup, rng)``,
``decide(decision) -> request index``), picks among ``decision.candidates`` and reads estimated run
times ``p_est`` only. The simulator is non-delay (while a queued request fits the free GPUs, some
request starts), so a rule decides only *which* startable requests go first, i.e. which maximal set of
them fills the GPUs that are free now. Ties: earlier arrival, then lower index.

* ``spt``: shortest predicted run time first (unweighted).
* ``wsrpt_aging``: WSRPT's ``w / p`` plus a linear aging term in the time waited.
* ``smith_area``: Smith's ratio over a request's GPU area, ``w / (p tau^beta)``.
* ``backfill``: EASY backfilling: the highest-priority queued request holds a reservation, and the
  startable requests that do not delay it go first (the packing-aware rule).
* ``rollout``: one-step rollout of WSRPT over the known queue (the lowest mean here).

:data:`DEFAULTS` holds the shipped knobs, each :func:`tune`'s best row on 20 selection seeds
(``python -m studies tune-rules --scenario llm`` prints the table).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.tuning import grid_table, grids_to_play, selection_seeds
from gpu_sched_env.core.errors import check_number
from gpu_sched_env.llm.api import simulate
from gpu_sched_env.llm.model import mixed
from gpu_sched_env.llm.sim import LLMDecision, LLMSetup

_EPS = 1e-9  # [s] times this close count as equal (the simulator's tolerance)

# The shipped knobs: tune()'s best rows on selection seeds 10 000 .. 10 019 (see each class).
DEFAULTS: dict[str, dict[str, Any]] = {
    "wsrpt_aging": {"aging": 0.1},
    "smith_area": {"beta": 0.25},
    "backfill": {"aging": 0.1},
    "rollout": {"width": 4},
}


def _best(d: LLMDecision, c: np.ndarray, prio: np.ndarray) -> int:
    """The request of ``c`` with the highest ``prio`` (ties: earlier arrival, then lower index)."""
    return int(c[np.lexsort((c, d.arrival[c], -prio))[0]])


class _IndexRule:
    """A priority index over the startable requests; the highest starts first."""

    name = "index"

    def reset(self, setup: LLMSetup, rng: np.random.Generator) -> None:
        """Nothing to reset (deterministic, stateless)."""

    def index(self, d: LLMDecision, c: np.ndarray) -> np.ndarray:
        """Priority of each request of ``c`` (higher first)."""
        raise NotImplementedError

    def decide(self, d: LLMDecision) -> int:
        """The startable request with the highest index."""
        return _best(d, d.candidates, self.index(d, d.candidates))


class SPT(_IndexRule):
    """Shortest predicted processing time first: lowest ``p_est``, weights ignored.

    Smith (1956), "Various optimizers for single-stage production", *Naval Research Logistics
    Quarterly* 3(1-2):59-66: the ratio rule with unit weights, which minimises the total completion
    time on one machine (SPT, as in Conway, Maxwell and Miller (1967), *Theory of Scheduling*).
    """

    name = "spt"

    def index(self, d: LLMDecision, c: np.ndarray) -> np.ndarray:
        """``-p_est``."""
        return -d.p_est[c]


def _aged(d: LLMDecision, c: np.ndarray, aging: float) -> np.ndarray:
    """WSRPT's ``w / p`` plus ``aging * w * (t - a) / pbar^2`` (``pbar``: mean ``p_est`` of the queue [s])."""
    w = d.weight[c]
    prio = w / d.p_est[c]
    if aging:
        pbar = float(np.mean(d.p_est[d.queue]))
        prio = prio + aging * w * (d.time - d.arrival[c]) / pbar**2
    return prio


class WSRPTAging(_IndexRule):
    """WSRPT with aging: ``w / p + aging * w * (t - a) / pbar^2``, highest first.

    Kleinrock (1964), "A delay dependent queue discipline", *Naval Research Logistics Quarterly*
    11(3-4):329-341: a waiting request's priority grows linearly with the time it has waited, the
    delay-dependent priority ``q_p(t) = b_p (t - T)`` of a class-``p`` arrival at ``T``; here the
    slope is ``aging * w / pbar^2``, on top of WSRPT's ``w / p`` (``pbar``, the mean ``p_est`` of the
    queue, makes ``aging`` unit-free). ``aging = 0`` is WSRPT. Default ``aging = 0.1`` is
    :func:`tune`'s best (its grid 0 .. 3).

    Args:
        aging: weight of the aging term, in [0, 100].
    """

    name = "wsrpt_aging"

    def __init__(self, aging: float = DEFAULTS["wsrpt_aging"]["aging"]) -> None:
        self.aging = float(check_number("aging", aging, lo=0, hi=100))

    def index(self, d: LLMDecision, c: np.ndarray) -> np.ndarray:
        """WSRPT's ratio plus the aging term."""
        return _aged(d, c, self.aging)


class SmithArea(_IndexRule):
    """Smith's ratio of a parallel request over its GPU area: ``w / (p tau^beta)``, highest first.

    A request holds ``tau`` GPUs for ``p`` seconds, so ``tau p`` is the GPU time it takes from the
    cluster; ``beta = 1`` orders by weight per GPU-second, the Smith ratio of a parallel job over its
    area, ``w_j / (m_j p_j)``, by which Schwiegelshohn (2004), "Preemptive weighted completion time
    scheduling of parallel jobs", *SIAM J. Computing* 33(6):1280-1308, orders jobs (PSRS; the ratio
    goes back to Schwiegelshohn, Ludwig, Wolf, Turek and Yu (1998), "Smart SMART bounds for weighted
    response time scheduling", *SIAM J. Computing* 28(1):237-253); ``beta = 0`` is WSRPT. Default
    ``beta = 0.25`` is :func:`tune`'s best (its grid 0 .. 2).

    Args:
        beta: exponent of ``tau``, in [0, 4].
    """

    name = "smith_area"

    def __init__(self, beta: float = DEFAULTS["smith_area"]["beta"]) -> None:
        self.beta = float(check_number("beta", beta, lo=0, hi=4))

    def index(self, d: LLMDecision, c: np.ndarray) -> np.ndarray:
        """Weight per second per ``tau^beta`` GPUs."""
        return d.weight[c] / (d.p_est[c] * d.tp[c].astype(float) ** self.beta)


class _Tracking:
    """Remembers when this policy started each request, to estimate when running requests end.

    A decision does not show what runs; every start is a policy's decision, so the policy records
    ``(start, request)`` itself. ``reset`` clears the record; so does a decision that cannot follow
    the ones recorded (time going back, or a request recorded as started queued again), so an env
    agent that is not reset between episodes stays right.
    """

    name = "tracking"

    def __init__(self) -> None:
        self._started: dict[int, float] = {}
        self._last = -np.inf

    def reset(self, setup: LLMSetup, rng: np.random.Generator) -> None:
        """Forget the previous run's starts."""
        self._started, self._last = {}, -np.inf

    def _sync(self, d: LLMDecision) -> None:
        if d.time < self._last - _EPS or any(int(i) in self._started for i in d.queue):
            self._started = {}
        self._last = d.time

    def _start(self, d: LLMDecision, i: int) -> int:
        self._started[int(i)] = d.time
        return int(i)

    def _running(self, d: LLMDecision) -> list[tuple[float, int]]:
        """(estimated end [s], GPUs) of the requests started and not yet ended by their estimate."""
        out = []
        for i, s in self._started.items():
            end = s + float(d.p_est[i])
            if end > d.time + _EPS:
                out.append((end, int(d.tp[i])))
        return sorted(out)


class Backfill(_Tracking):
    """EASY backfilling around the highest-priority queued request.

    Lifka (1995), "The ANL/IBM SP scheduling system", *JSSPP*, LNCS 949:295-303, and Mu'alem and
    Feitelson (2001), "Utilization, predictability, workloads, and user runtime estimates in scheduling
    the IBM SP2 with backfilling", *IEEE TPDS* 12(6):529-543 (EASY backfilling): the queue's head gets a
    reservation at the *shadow time*, the earliest time enough GPUs are free for it by the running
    requests' estimated ends; another request may start before it only if it ends by the shadow time
    or uses only the *extra* GPUs the head leaves at that time. Here the queue is ordered by
    :class:`WSRPTAging`'s index. The simulator starts a startable request whenever one exists, so
    the rule cannot keep GPUs idle for the head; it starts first the head when it fits, then the
    requests that do not delay it, and only then (nothing else fits) the others, by the same index.
    Default ``aging = 0.1`` is :func:`tune`'s best (its grid 0 .. 3). Estimates count GPUs, exact on a
    cluster of one GPU type.

    Args:
        aging: :class:`WSRPTAging`'s aging weight, in [0, 100].
    """

    name = "backfill"

    def __init__(self, aging: float = DEFAULTS["backfill"]["aging"]) -> None:
        super().__init__()
        self.aging = float(check_number("aging", aging, lo=0, hi=100))

    def decide(self, d: LLMDecision) -> int:
        """The head when it fits, else the best startable request that does not delay it."""
        self._sync(d)
        q, c = d.queue, d.candidates
        head = _best(d, q, _aged(d, q, self.aging))
        prio = _aged(d, c, self.aging)
        if head in c:
            return self._start(d, head)
        free, shadow, extra = d.free_gpus, np.inf, 0
        for end, tp in self._running(d):
            free += tp
            if free >= d.tp[head]:
                shadow, extra = end, free - int(d.tp[head])
                break
        safe = (d.time + d.p_est[c] <= shadow + _EPS) | (d.tp[c] <= extra)
        if safe.any():
            return self._start(d, _best(d, c[safe], prio[safe]))
        return self._start(d, _best(d, c, prio))


class Rollout(_Tracking):
    """One-step rollout of WSRPT: try each of the ``width`` best startable requests first, keep the best.

    Bertsekas, Tsitsiklis and Wu (1997), "Rollout algorithms for combinatorial optimization",
    *Journal of Heuristics* 3(3):245-262: each option is scored by running the base heuristic
    (here WSRPT) to the end from the state it leads to. The state a policy knows is the queue and the
    running requests' estimated ends (no future arrivals, no realised run times), so each rollout
    schedules the queued requests alone, non-delay by WSRPT on a GPU count, and scores
    ``sum w (c - a)`` over them. Only a decision whose startable requests do not all fit at once is
    rolled out (otherwise the order changes nothing); ties go to the higher WSRPT index. Default
    ``width = 4`` is :func:`tune`'s best (its grid 1 .. 16; ``width = 1`` is WSRPT).

    Args:
        width: startable requests tried first (the highest by WSRPT), an integer in [1, 64].
    """

    name = "rollout"

    def __init__(self, width: int = DEFAULTS["rollout"]["width"]) -> None:
        super().__init__()
        self.width = int(check_number("width", width, lo=1, hi=64, integer=True))

    def decide(self, d: LLMDecision) -> int:
        """The startable request whose rollout ends with the least weighted wait."""
        self._sync(d)
        c = d.candidates
        prio_c = d.weight[c] / d.p_est[c]
        if self.width == 1 or len(c) == 1 or int(d.tp[c].sum()) <= d.free_gpus:
            return self._start(d, _best(d, c, prio_c))
        q = np.asarray(d.queue)
        w, p, tp, a = d.weight[q], d.p_est[q], d.tp[q].astype(int), d.arrival[q]
        order = np.lexsort((q, a, -(w / p))).tolist()  # positions in q, WSRPT first
        pos = {int(x): k for k, x in enumerate(q)}
        tried = [pos[int(i)] for i in c[np.lexsort((c, d.arrival[c], -prio_c))][: self.width]]
        running = self._running(d)
        best_k, best_cost = tried[0], np.inf
        for k in tried:
            cost = _rollout_cost(k, order, w, p, tp, a, running, d.free_gpus, d.time)
            if cost < best_cost - _EPS:
                best_k, best_cost = k, cost
        return self._start(d, q[best_k])


def _rollout_cost(
    first: int,
    order: Sequence[int],
    w: np.ndarray,
    p: np.ndarray,
    tp: np.ndarray,
    a: np.ndarray,
    running: list[tuple[float, int]],
    free: int,
    t: float,
) -> float:
    """``sum w (c - a)`` of the queue when ``first`` starts now and WSRPT (``order``) places the rest."""
    ends = list(running)
    heapq.heapify(ends)
    waiting = [k for k in order if k != first]
    cost = w[first] * (t + p[first] - a[first])
    heapq.heappush(ends, (t + p[first], int(tp[first])))
    free -= int(tp[first])
    while True:
        rest = []
        for k in waiting:
            if tp[k] <= free:
                free -= int(tp[k])
                cost += w[k] * (t + p[k] - a[k])
                heapq.heappush(ends, (t + p[k], int(tp[k])))
            else:
                rest.append(k)
        waiting = rest
        if not waiting or not ends:
            return float(cost)
        t, g = heapq.heappop(ends)
        free += g
        while ends and ends[0][0] <= t + _EPS:
            free += heapq.heappop(ends)[1]


STRONG: dict[str, type] = {c.name: c for c in (SPT, WSRPTAging, SmithArea, Backfill, Rollout)}

# ---------------------------------------------------------------------------------------------
# tuning on selection seeds

# The scenario's instance sizes: LLMServe-v0's default (50 requests) and the mixed preset's (200),
# both on the preset's 16 H100 at 4 requests/s. Both lie on the 0.01 s grid, where the event engine
# plays the discrete reference's schedules exactly, so tuning runs the faster event engine.
TUNE_SIZES = (50, 200)
GRIDS: dict[str, dict[str, tuple]] = {
    "wsrpt_aging": {"aging": (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)},
    "smith_area": {"beta": (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)},
    "backfill": {"aging": (0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)},
    "rollout": {"width": (1, 2, 4, 8, 16)},
}


def score(policy: Any, seeds: Sequence[int], sizes: Sequence[int] = TUNE_SIZES) -> dict[int, np.ndarray]:
    """Weighted wait of ``policy`` (a name or a policy) on ``mixed(seed, n)`` per size ``n``, one per seed."""
    return {
        n: np.array([simulate(policy, mixed(s, n), engine="event").summary()["weighted_wait"] for s in seeds])
        for n in sizes
    }


def tune(n_seeds: int = 20, seed0: int = 10_000, **grid: Mapping[str, Sequence]) -> pd.DataFrame:
    """Play every knob candidate of each tunable rule on selection seeds; one row per (rule, knobs).

    Args:
        n_seeds: selection seeds ``seed0 .. seed0 + n_seeds - 1``; all must lie in 10 000 .. 19 999.
        seed0: the first seed.
        grid: ``rule={knob: candidates}`` replaces that rule's grid (:data:`GRIDS`); when any is given,
            only the named rules are played.

    Returns:
        Columns ``rule``, the knobs (``aging``, ``beta``, ``width``; NaN where a rule has not the
        knob), ``mean`` (weighted wait, averaged over the sizes of :data:`TUNE_SIZES` per seed, then
        over the seeds), ``ci_lo``, ``ci_hi`` (its 95 % t interval over the seeds), ``mean_n50``,
        ``mean_n200`` (per size), ``n`` (seeds), ``default`` (the row of the shipped knobs); rules in
        :data:`GRIDS` order, lowest mean first within a rule.
        The shipped :data:`DEFAULTS` are the best rows on 20 seeds from 10 000.
    """
    seeds = selection_seeds(n_seeds, seed0)
    grids = grids_to_play(grid, GRIDS)

    def play(rule: str, knobs: dict[str, Any]) -> dict[str, np.ndarray]:
        return {f"n{n}": v for n, v in score(STRONG[rule](**knobs), seeds).items()}

    # per seed: the mean over the sizes, so that each seed counts once in the interval
    return grid_table(grids, DEFAULTS, play, pool=lambda scores: np.mean(scores, axis=0))


__all__ = [
    "DEFAULTS",
    "GRIDS",
    "SPT",
    "STRONG",
    "TUNE_SIZES",
    "Backfill",
    "Rollout",
    "SmithArea",
    "WSRPTAging",
    "score",
    "selection_seeds",
    "tune",
]
