"""What CGRSP-v0 rewards: named presets of the objective's weights, lost capacity, and shaping.

The env books four raw quantities (``wait`` [job-s], ``miss`` [jobs], ``cost`` [$], ``waste``
[job-s]); a *preset* turns them into weights, derived from the simulator's parameters so that
there is one source of truth (``alpha1``, ``alpha2`` in
:class:`~gpu_sched_env.cgrsp.params.CGRSPParams`):

* ``study``: the model's objective α1·Σw + α2·misses (spec §2; α2 = 10 by default, so a miss
  weighs like ten seconds of waiting and misses are ~0.01 % of a hectic day's return).
* ``deadline``: α1·Σw + α1·``MISS_AS_WAIT_S``·misses: a miss weighs like one job-hour of
  waiting (3 600 s = a tight job's whole deadline window), so a policy that trades a few
  minutes of mean wait for fewer misses is rewarded for it. Under EDF on a hectic day misses
  then carry about 4 % of the return (≈ 105 misses × 1 h against ≈ 9 M job-seconds of wait).
* ``capacity``: a learning proxy, judged on ``deadline`` (:data:`OBJECTIVE_OF`): ``waste`` is
  the slot capacity a decision loses (the provisioning delay of a dispatch; idle slots while
  jobs wait) at the queue's exchange rate q/C job-seconds of waiting per slot-second, plus
  one job-hour per miss. It charges the consequence of a dispatch onto Low stock in that
  step, at a scale that does not grow with the day (README, Training).

``cost`` is weighted 1 per dollar in all three (a tie-breaker: ~$6 a day against ~10^6 s).

*Shaping* (``shaping="queue"``) adds the potential-based term F = Φ(s') − Φ(s) (Ng, Harada &
Russell 1999) with Φ the negative fluid estimate of the waiting still ahead of the queued
jobs [job-s]:

    Φ(s) = −α1 · [ (q / C) · Σ_slots (f_s − t)  +  W̄ · q (q − 1) / (2 C) ]

(q queued jobs, C slots, f_s a slot's expected free time as a scheduler can know it, W̄ the
fleet's mean run time). The first term is the queue's share of the capacity that is already
committed; the second the queue draining at C / W̄ jobs per second. Because F telescopes, an
episode's shaping sum is Φ(end) − Φ(start) = 0 (both states have at most one queued job and
no committed capacity), so the return still equals the objective. What changes is *when*
the consequence of an action shows: a dispatch onto a Low-stock slot (mean delay ~1 h)
commits an hour of a slot at once, costing ≈ (q/C)·3 900 s in that step instead of hours of
queue integral later, and leaving a slot idle for Δt costs (q/C)·Δt per idle slot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.core.errors import ConfigError, check_choice, check_keys, check_number

REWARD_PARTS = ("wait", "miss", "cost", "waste")
MISS_AS_WAIT_S = 3600.0  # [s] a miss under the deadline preset weighs like one job-hour of waiting
COST_WEIGHT = 1.0  # per $: one dollar weighs like one second of waiting (tie-breaker)

REWARD_PRESETS: dict[str, Callable[[CGRSPParams], dict[str, float]]] = {
    "study": lambda p: {"wait": float(p.alpha1), "miss": float(p.alpha2), "cost": COST_WEIGHT, "waste": 0.0},
    "deadline": lambda p: {"wait": float(p.alpha1), "miss": float(p.alpha1) * MISS_AS_WAIT_S, "cost": COST_WEIGHT, "waste": 0.0},
    "capacity": lambda p: {"wait": 0.0, "miss": float(p.alpha1) * MISS_AS_WAIT_S, "cost": COST_WEIGHT, "waste": float(p.alpha1)},
}
# What an episode is judged on (model selection, ``objective`` columns): the preset's own
# weights, except for the learning proxy ``capacity``, which is judged on ``deadline``.
OBJECTIVE_OF = {"study": "study", "deadline": "deadline", "capacity": "deadline"}
SHAPINGS = ("none", "queue")


def reward_weights(params: CGRSPParams, preset: str, overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """The weights of ``preset`` for ``params``, with explicit per-part ``overrides``."""
    check_choice("reward", preset, REWARD_PRESETS)
    weights = REWARD_PRESETS[preset](params)
    if overrides:
        if not isinstance(overrides, Mapping):
            raise ConfigError(f"reward_weights = {overrides!r} must be a mapping with keys {', '.join(REWARD_PARTS)}")
        check_keys(overrides, REWARD_PARTS, section="reward_weights")
        for k, v in overrides.items():
            weights[k] = float(check_number(f"reward_weights.{k}", v, lo=0.0))
    return weights


def summary_objective(summary: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Σ_k weight_k · part_k of a run from its summary (what an env episode with ``weights`` sums to)."""
    n = summary["completed"]
    wait = summary["mean_wait_min"] * 60.0 * n  # [job-s] Σ_j w_j
    misses = summary["miss_pct"] / 100.0 * summary["n_jobs"]
    return float(weights["wait"] * wait + weights["miss"] * misses + weights["cost"] * summary["cost_usd"])  # no waste: not in a summary


class QueuePotential:
    """Φ of the module docstring for one parameter set (O(C) per evaluation)."""

    def __init__(self, fleet: Fleet) -> None:
        self.w_mean = fleet.mean_wbar  # [s]
        self.C = len(fleet.slot_type)

    def __call__(self, sim) -> float:
        """Φ(sim's state) in job-seconds (≤ 0), before weighting."""
        q = len(sim.waiting)
        if q == 0:
            return 0.0
        t = sim.t
        committed = sum(sim.expected_free(s) - t for s in range(self.C) if sim.slot_job[s] >= 0)
        return -(q / self.C * committed + self.w_mean * q * (q - 1) / (2.0 * self.C))


__all__ = ["COST_WEIGHT", "MISS_AS_WAIT_S", "OBJECTIVE_OF", "REWARD_PARTS", "REWARD_PRESETS", "SHAPINGS", "QueuePotential", "reward_weights", "summary_objective"]
