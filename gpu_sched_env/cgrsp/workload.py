"""Workload: Poisson job streams for the four day types, and month plans.

Each attribute comes from its own named stream (common random numbers): arrivals,
complexity, tightness and run times. A tightness draw is a uniform compared with the tight
fraction, so raising the fraction keeps every previously tight job tight.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gpu_sched_env.cgrsp.params import DAY_TYPES, CGRSPParams
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.core.rng import stream


@dataclass
class Workload:
    """One day's jobs, ids in submit order. Realised run times are for the simulator only."""

    submit: np.ndarray  # [s]
    complexity: np.ndarray  # 0 low, 1 medium, 2 high
    tight: np.ndarray  # bool
    deadline: np.ndarray  # [s]
    runtime: np.ndarray  # [s] realised run time, shape (n_jobs, n_types); never shown to policies
    job_id: np.ndarray | None = None  # labels from a trace (None: the row number)

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return int(self.submit.size)


# The parameters a day's jobs depend on (what a trace records; run times are drawn at replay).
WORKLOAD_PARAMS = ("arrival_rate", "n_jobs", "complexity_probs", "tight_fraction", "tight_window", "loose_window")


def generate(p: CGRSPParams, seed: int) -> Workload:
    """Draw a day's jobs for parameters ``p`` and run ``seed``."""
    n = int(p.n_jobs)
    gaps = stream(seed, "cgrsp/arrivals").exponential(1.0 / p.arrival_rate, size=n)
    submit = np.cumsum(gaps)
    cx = stream(seed, "cgrsp/complexity").choice(3, size=n, p=np.asarray(p.complexity_probs))
    tight = stream(seed, "cgrsp/tightness").random(n) < p.tight_fraction
    deadline = submit + np.where(tight, p.tight_window, p.loose_window)
    return Workload(submit, cx.astype(np.int64), tight, deadline, draw_runtimes(p, seed, cx))


def draw_runtimes(p: CGRSPParams, seed: int, cx: np.ndarray) -> np.ndarray:
    """Realised run times [s], shape (jobs, GPU types), for complexities ``cx`` under run ``seed``."""
    wbar = np.array([g.mean_runtime_s for g in p.gpu_types]).T  # (3, n_types)
    sigma = p.runtime_sigma
    mu = np.log(wbar[cx]) - sigma * sigma / 2.0  # mean of the log-normal is exactly W̄
    z = stream(seed, "cgrsp/runtimes").standard_normal((len(cx), len(p.gpu_types)))
    return np.exp(mu + sigma * z)


# Default month mix (spec §1): back-calculated counts, ≈ 7 800 jobs a month.
DEFAULT_MONTH_MIX: dict[str, int] = {"hectic": 4, "surge": 3, "normal": 18, "quiet": 5}


def day_weights(days: object | None = None, field: str = "day mix") -> dict[str, float]:
    """Day type → probability: ``days`` (day type → weight ≥ 0, normalised) or the month's mix.

    The one check of a training day mix (``day.day_mix``; the SB3 and JAX mixed envs both draw
    from it): ConfigError naming ``field``, the entry and what is allowed. Types of weight 0 are
    dropped; the order is ``days``'s.
    """
    given = DEFAULT_MONTH_MIX if days is None else days
    if not isinstance(given, Mapping) or not given:
        raise ConfigError(
            f"{field} = {days!r}: give day type → weight, e.g. {{hectic: 1, surge: 1, normal: 1, quiet: 1}}; "
            f"day types: {', '.join(DAY_TYPES)}"
        )
    for d, w in given.items():
        if d not in DAY_TYPES:
            raise ConfigError(f"{field}: {d!r} is not a day type; allowed: {', '.join(DAY_TYPES)}")
        if isinstance(w, bool) or not (isinstance(w, int | float) and math.isfinite(w) and w >= 0):
            raise ConfigError(f"{field}: weight of {d} = {w!r}; allowed: a number >= 0")
    total = float(sum(given.values()))
    if total <= 0:
        raise ConfigError(f"{field} = {dict(given)!r}: the weights sum to 0; give at least one day type a weight > 0")
    return {str(d): float(w) / total for d, w in given.items() if w > 0}


# Day d of month replication r is simulated with run seed MONTH_SEED_BASE + 1000·r + d, so
# month days never reuse the worlds (seeds 0–29, 42, 20 000+) of the single-day experiments.
MONTH_SEED_BASE = 1_000_000


def month_day_seed(rep: int, day_index: int) -> int:
    """Run seed of day ``day_index`` of month replication ``rep`` (every policy plays the same days)."""
    check_number("rep", rep, lo=0, integer=True)
    check_number("day_index", day_index, lo=0, hi=999, integer=True)
    return MONTH_SEED_BASE + 1000 * int(rep) + int(day_index)


def month_plan(
    seed: int,
    mix: dict[str, float] | None = None,
    n_days: int = 30,
    mode: str = "counts",
) -> list[str]:
    """Day types for a month.

    Args:
        seed: replication seed; the order (or the draws) depend on it alone.
        mix: day type → count (``mode="counts"``, must sum to ``n_days``) or probability
            (``mode="probs"``, must sum to 1). Default: 4 hectic, 3 surge, 18 normal, 5 quiet.
        n_days: days in the month.
        mode: ``"counts"`` (fixed counts, order shuffled) or ``"probs"`` (i.i.d. draws).
    """
    check_choice("mode", mode, ("counts", "probs"))
    check_number("n_days", n_days, lo=1, integer=True)
    mix = dict(DEFAULT_MONTH_MIX if mix is None else mix)
    for day, v in mix.items():
        check_choice("mix key", day, DAY_TYPES)
        check_number(f"mix[{day}]", v, lo=0.0)
    rng = stream(seed, "cgrsp/month")
    days = list(mix)
    if mode == "counts":
        if any(float(v) != int(v) for v in mix.values()) or sum(int(v) for v in mix.values()) != n_days:
            raise ConfigError(f"mix = {mix!r}: counts must be integers summing to n_days = {n_days}")
        plan = [d for d in days for _ in range(int(mix[d]))]
        order = rng.permutation(len(plan))
        return [plan[i] for i in order]
    total = float(sum(mix.values()))
    if abs(total - 1.0) > 1e-9:
        raise ConfigError(f"mix = {mix!r}: probabilities must sum to 1 (got {total:g})")
    picks = rng.choice(len(days), size=n_days, p=[mix[d] for d in days])
    return [days[i] for i in picks]
