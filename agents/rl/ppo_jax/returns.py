"""The returns ``algo=ppo_jax`` learns from: per decision, or time-aware.

A CGRSP decision lasts from 0 s (another dispatch at the same instant) to hours (a wait on a
quiet night), so a per-decision γ is a horizon in *decisions*, not in time.

**Time-aware** (``algo.tau_s`` = τ): a step that advances Δt simulated seconds (the JAX env's
``info["dt"]``) is discounted by γ^(Δt/τ): γ per τ seconds whatever the number of decisions
(the semi-MDP discount of Bradtke & Duff 1995). Δt = τ at every step gives back the
per-decision γ. The VecNormalize-style reward scale follows the same discount.

The env's reward of a step is the cost it books over the step: the lost capacity of idle slots
integrated over its Δt, a dispatch's provisioning at once, a miss when its deadline passes
within the step (:mod:`gpu_sched_env.cgrsp.rewards`). The learner discounts a step's reward from
the step's start (it is not discounted within Δt).
"""

from __future__ import annotations

import jax.numpy as jnp


def step_discounts(gamma: float, dt: jnp.ndarray, tau_s: float) -> jnp.ndarray:
    """γ^(Δt/τ) per step (``dt`` [s], τ [s] > 0)."""
    return jnp.power(jnp.float32(gamma), dt / jnp.float32(tau_s))


__all__ = ["step_discounts"]
