"""The returns ``algo=ppo_jax`` learns from: per decision, time-aware, or average-reward.

A CGRSP decision lasts from 0 s (another dispatch at the same instant) to hours (a wait on a
quiet night), so a per-decision γ is a horizon in *decisions*, not in time.

* **Time-aware** (``algo.tau_s`` = τ): a step that advances Δt simulated seconds (the JAX env's
  ``info["dt"]``) is discounted by γ^(Δt/τ): γ per τ seconds whatever the number of decisions
  (the semi-MDP discount of Bradtke & Duff 1995). Δt = τ at every step gives back the
  per-decision γ. The VecNormalize-style reward scale follows the same discount.
* **Average-reward** (``algo.returns=average``, γ = 1): the advantage is GAE(λ) of the
  differential reward r − ρ·Δt, ρ the average reward per simulated second. ρ is a running
  estimate: each rollout's ratio Σr / ΣΔt (the semi-MDP gain, reward per unit time; Puterman
  1994 §11.4) is blended in with weight ``algo.rho_rate``, as the average-reward PPO of Zhang &
  Ross (2021, "On-policy deep RL for the average-reward criterion", ICML) blends each batch's
  mean reward. Values are differential: the remaining day's Σ (r − ρ·Δt); a day's end cuts the
  bootstrap as in the discounted case. Rewards are scaled by the running standard deviation of
  the per-step reward (the undiscounted return has no stationary scale), so ρ and the values are
  in those units.

The env's reward of a step is the cost it books over the step: the lost capacity of idle slots
integrated over its Δt, a dispatch's provisioning at once, a miss when its deadline passes
within the step (:mod:`gpu_sched_env.cgrsp.rewards`). The learner discounts a step's reward from
the step's start (it is not discounted within Δt).
"""

from __future__ import annotations

import jax.numpy as jnp

RETURNS = ("discounted", "average")


def step_discounts(gamma: float, dt: jnp.ndarray, tau_s: float) -> jnp.ndarray:
    """γ^(Δt/τ) per step (``dt`` [s], τ [s] > 0)."""
    return jnp.power(jnp.float32(gamma), dt / jnp.float32(tau_s))


def differential(reward: jnp.ndarray, dt: jnp.ndarray, rho: jnp.ndarray) -> jnp.ndarray:
    """The differential reward r − ρ·Δt (ρ per simulated second)."""
    return reward - rho * dt


def rate_update(
    rho: jnp.ndarray, reward: jnp.ndarray, dt: jnp.ndarray, weight: float, first: jnp.ndarray
) -> jnp.ndarray:
    """The running average reward per second after one rollout: ρ ← (1 − w)·ρ + w·Σr/ΣΔt.

    ``first``: the first rollout sets ρ to its own rate (no zero start to unlearn).
    """
    rate = reward.sum() / jnp.maximum(dt.sum(), 1e-6)
    return jnp.where(first, rate, (1.0 - weight) * rho + weight * rate)


__all__ = ["RETURNS", "differential", "rate_update", "step_discounts"]
