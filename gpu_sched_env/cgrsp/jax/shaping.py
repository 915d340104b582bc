"""CGRSP-v0's shaping potentials in JAX (:mod:`gpu_sched_env.cgrsp.rewards`, ``shaping=...``).

The step's shaping term is ``reward_scale · (γ·Φ(s′) − Φ(s))`` with Φ = 0 once the day is
over, Φ = Σ_k w_k·Φ_k in the reward's weighted units (``params.shaping_w``: the price of a
job-second of waiting, the price of a miss), as :class:`~gpu_sched_env.cgrsp.rewards.RewardLedger`
books it. Each potential reads the subqueue pointers, never the queue job by job:

* Φ_b (``backlog``): −W̄·b(b − 1)/(2C) over the b jobs not yet dispatched (b = N − Σ ptr).
* Φ_r (the risk of ``backlog_risk``): −Σ_waiting clip((t − x_j + H)/H, 0, 1), x_j = d_j − e_κ.
  Within a subqueue x is sorted, so each waiting run splits by two binary searches into the
  jobs at full risk (x ≤ t, 1 each), those in the ramp (t < x < t + H: (t + H − x)/H, summed
  from the submit prefix sums since x = submit + window − e_κ in a subqueue) and those at none.

``shaping="queue"`` is not implemented here (the env refuses it).
"""

from __future__ import annotations

import jax.numpy as jnp

from gpu_sched_env.cgrsp.jax.core import Spec, seg_search
from gpu_sched_env.cgrsp.jax.types import N_SUB, EnvParams, EnvState, day_of, flat, n_jobs_of
from gpu_sched_env.cgrsp.rewards import RISK_HORIZON_S

# what the JAX env implements of CGRSP-v0's SHAPING_TERMS: shaping -> its potentials
TERMS: dict[str, tuple[str, ...]] = {
    "none": (),
    "backlog": ("backlog",),
    "backlog_risk": ("backlog", "risk"),
}


def backlog(spec: Spec, params: EnvParams, s: EnvState) -> jnp.ndarray:
    """Φ_b [job-s] (:class:`~gpu_sched_env.cgrsp.rewards.BacklogPotential`), in its operation order."""
    b = n_jobs_of(spec.n, params) - jnp.sum(s.ptr)
    return -params.w_mean * b * (b - 1) / (2.0 * spec.c)


def risk(spec: Spec, params: EnvParams, s: EnvState) -> jnp.ndarray:
    """Φ_r [jobs] (:class:`~gpu_sched_env.cgrsp.rewards.DeadlineRisk`) from the subqueue runs."""
    day = day_of(s, params)
    t = s.t
    h = RISK_HORIZON_S
    x_vals, x_base = flat(day.seg_x)
    lo = day.sub_off[:-1] + s.ptr
    hi = day.sub_off[:-1] + s.end
    i_a = seg_search(x_vals, lo + x_base, hi + x_base, jnp.broadcast_to(t, lo.shape), False, spec.n) - x_base
    i_b = seg_search(x_vals, i_a + x_base, hi + x_base, jnp.broadcast_to(t + h, lo.shape), True, spec.n) - x_base
    sub = jnp.arange(N_SUB)
    offset = params.windows[sub % 2] - params.e_k[sub // 2]  # x − submit within each subqueue
    ramp = i_b - i_a
    sum_x = day.seg_cum_submit[i_b] - day.seg_cum_submit[i_a] + ramp * offset
    return -jnp.sum((i_a - lo) + (ramp * (t + h) - sum_x) / h)


_POTENTIALS = {"backlog": (backlog, 0), "risk": (risk, 1)}  # name -> (Φ_k, index of its price)


def potential(shaping: str, spec: Spec, params: EnvParams, s: EnvState) -> jnp.ndarray:
    """Φ(s) in the reward's weighted units (0 once the day is over; ``shaping`` static)."""
    total = jnp.zeros((), s.t.dtype)
    for name in TERMS[shaping]:
        fn, k = _POTENTIALS[name]
        total = total + params.shaping_w[k] * fn(spec, params, s)
    return jnp.where(s.done, 0.0, total)


def shaping_term(shaping: str, spec: Spec, params: EnvParams, s0: EnvState, s1: EnvState) -> jnp.ndarray:
    """``reward_scale · (γ·Φ(s1) − Φ(s0))`` of a step from ``s0`` to ``s1`` (0 for ``none``)."""
    if not TERMS[shaping]:
        return jnp.zeros((), s1.t.dtype)
    phi0 = potential(shaping, spec, params, s0)
    phi1 = potential(shaping, spec, params, s1)
    return params.reward_scale * (params.shaping_gamma * phi1 - phi0)


__all__ = ["TERMS", "backlog", "potential", "risk", "shaping_term"]
