"""The criteria by which a learned policy is judged against the best rule: one definition of each.

Every judge of the project reads them from here: ``gpu-sched evaluate`` (its verdict and parity
columns, the leaderboard), a run's last lines and its learner-vs-rule row
(:mod:`gpu_sched_agents.rl.compare`), the parity, generalist and ablation studies, and
``algo=ppo_jax``'s worst-regime selection (its margin). Lower is better for every metric judged
here; the module names no metric, so each scenario passes its own (CGRSP: the mean wait as the
primary metric, the miss % as the guard, the fewest misses then the lowest wait as the best rule).

* :func:`tolerance`: the margin on the primary metric, max(fraction × the rule's value, floor);
  :data:`PARITY_MARGIN` (1 %, 0.05) and :data:`GENERALIST_MARGIN` (2 %, 0.05) are the two in use.
* :func:`within`: the upper 95 % bound of the paired difference (policy − rule) inside the
  tolerance, and the guard metric not higher (or its upper bound at most :data:`MISS_BOUND_PP`).
* :func:`significance` and :func:`verdict`: ``better`` / ``worse`` / ``no significant difference``
  from a mean difference and its Holm-adjusted p at :data:`~gpu_sched_env.core.stats.ALPHA`.
* :func:`best_rule`: the candidate lowest on the keys in their order, the earlier keys compared
  after rounding to 9 decimals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpu_sched_env.core.stats import ALPHA

# (fraction of the rule's value, floor in the metric's unit): the margin of the parity criterion (CGRSP: 1 % of
# the best rule's mean wait, never below 0.05 min, as the surge rule waits ~0.3 min) and the wider one of the
# generalist criterion (2 %, the same floor); the generalist's is also algo=ppo_jax's worst-regime selection's.
PARITY_MARGIN = (0.01, 0.05)
GENERALIST_MARGIN = (0.02, 0.05)
# "No more misses" read on a long paired test (the parity target's reading, on the JAX judge's 1000 days): the
# upper 95 % bound of the guard's paired difference (policy − rule, in percentage points) at most this.
MISS_BOUND_PP = 0.01

BETTER = "better"
WORSE = "worse"
NO_DIFFERENCE = "no significant difference"
WORDS = (BETTER, WORSE, NO_DIFFERENCE)


def tolerance(rule_value: float, margin: tuple[float, float] = PARITY_MARGIN) -> float:
    """The margin on the primary metric: max(``frac`` × ``rule_value``, ``floor``) with ``margin = (frac, floor)``.

    NaN ``rule_value`` gives NaN (no difference is within it).
    """
    frac, floor = margin
    return max(frac * float(rule_value), floor)


def within(
    diff_ci_high: float,
    rule_value: float,
    guard_diff: float,
    margin: tuple[float, float] = PARITY_MARGIN,
    guard_bound: float = 0.0,
) -> bool:
    """Whether a paired comparison (policy − rule) is at parity under ``margin``.

    ``diff_ci_high``: the upper 95 % bound of the primary metric's paired difference; it must be
    ≤ :func:`tolerance` (``rule_value``, ``margin``), boundary included. ``guard_diff``: the guard
    metric's difference (its mean: not higher than the rule's, ``guard_bound`` = 0) or its upper
    95 % bound (with ``guard_bound`` = :data:`MISS_BOUND_PP`). A NaN anywhere is not within.
    """
    return bool(diff_ci_high <= tolerance(rule_value, margin) and guard_diff <= guard_bound)


def significance(diff: float, p: float, alpha: float = ALPHA) -> str:
    """``better`` (``diff`` < 0) or ``worse`` (> 0) when ``p`` < ``alpha``, else ``no significant difference``.

    ``p``: the test's p-value, Holm-adjusted where a family is tested. A NaN p (no test possible,
    e.g. one unit) or a zero difference is no significant difference.
    """
    if not p < alpha:
        return NO_DIFFERENCE
    return BETTER if diff < 0 else WORSE if diff > 0 else NO_DIFFERENCE


def verdict(diff: float, p_holm: float, guard_diff: float, guard_p_holm: float, alpha: float = ALPHA) -> str:
    """The verdict on a primary metric with a guard metric (CGRSP: wait, with the miss as the guard).

    ``better``: the primary metric significantly lower and the guard's mean not higher; ``worse``:
    either significantly higher; otherwise ``no significant difference``.
    """
    if significance(diff, p_holm, alpha) == BETTER and guard_diff <= 0:
        return BETTER
    if WORSE in (significance(diff, p_holm, alpha), significance(guard_diff, guard_p_holm, alpha)):
        return WORSE
    return NO_DIFFERENCE


def best_rule(means: Any, candidates: Sequence[str], keys: Sequence[str]) -> str:
    """The candidate with the lowest ``means.loc[candidate, key]``, key by key in order (ties: the first candidate).

    ``means``: a DataFrame of mean values indexed by candidate. Every key but the last is compared
    rounded to 9 decimals, so means of equal counts summed in another order tie (CGRSP: the fewest
    misses, then the lowest wait).
    """
    *first, last = keys

    def key(r: str) -> tuple[float, ...]:
        return (*(round(float(means.loc[r, k]), 9) for k in first), float(means.loc[r, last]))

    return min(candidates, key=key)


__all__ = [
    "BETTER",
    "GENERALIST_MARGIN",
    "MISS_BOUND_PP",
    "NO_DIFFERENCE",
    "PARITY_MARGIN",
    "WORDS",
    "WORSE",
    "best_rule",
    "significance",
    "tolerance",
    "verdict",
    "within",
]
