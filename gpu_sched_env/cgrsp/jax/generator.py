"""Days for the JAX env: sampled natively in JAX, or converted from the reference's draws.

:func:`sample_day` draws a day from the same laws as :func:`gpu_sched_env.cgrsp.workload.generate`
(Poisson arrivals, complexity shares, tight share, log-normal run times with mean W̄, one
provisioning quantile per job), with JAX's generator: the same distributions, not the same
draws (tests compare them by distribution). :func:`day_arrays` turns a
:class:`~gpu_sched_env.cgrsp.day.MaterialisedDay` (the reference's own draws) into a
:class:`~gpu_sched_env.cgrsp.jax.types.Day`. Both derive the subqueue orders with
:func:`build_day`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.day import MaterialisedDay
from gpu_sched_env.cgrsp.jax.core import NEVER
from gpu_sched_env.cgrsp.jax.types import N_SUB, Day, EnvParams


def build_day(
    key, submit, cx, tight, runtime, prov_q, params: EnvParams, fresh_u, markov_times, markov_us, regime=None
) -> Day:
    """A :class:`Day` from the job draws (deadlines and the subqueue orders derived here).

    ``regime`` (a mixed env's days): padded jobs (submit +inf) sort after every subqueue, so
    ``sub_off[-1]`` is the real job count and the segments hold real jobs only.
    """
    cx = cx.astype(jnp.int32)
    tight = tight.astype(bool)
    deadline = submit + jnp.where(tight, params.windows[1], params.windows[0])
    sub = 2 * cx + tight.astype(jnp.int32)
    if regime is not None:
        sub = jnp.where(jnp.isinf(submit), N_SUB, sub)  # a seventh, never-read segment at the end
    order = jnp.argsort(sub, stable=True).astype(jnp.int32)  # ids are in submit order: stable keeps it per subqueue
    counts = jnp.bincount(sub, length=N_SUB + 1)[:N_SUB] if regime is not None else jnp.bincount(sub, length=N_SUB)
    off = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(counts).astype(jnp.int32)])
    zero = jnp.zeros(1, submit.dtype)
    seg_submit = submit[order]
    return Day(
        key=key,
        submit=submit,
        cx=cx,
        tight=tight,
        deadline=deadline,
        runtime=runtime,
        prov_q=prov_q,
        order_sub=order,
        sub_off=off,
        seg_submit=seg_submit,
        seg_deadline=deadline[order],
        seg_x=(deadline - params.e_k[cx])[order],
        seg_cum_submit=jnp.concatenate([zero, jnp.cumsum(seg_submit)]),
        fresh_u=fresh_u,
        markov_times=markov_times,
        markov_us=markov_us,
        regime=regime,
    )


def sample_day(key: jax.Array, params: EnvParams, n: int, n_types: int, regime=None) -> Day:
    """A day of ``n`` jobs drawn natively (stock statuses are drawn lazily from the day's key).

    ``regime`` (a mixed env: ``params`` are that regime's, :func:`~gpu_sched_env.cgrsp.jax.mix.resolve`):
    only the first ``params.n_jobs`` jobs are real, the rest of the ``n`` rows are padding that never
    arrives (submit +inf). The real jobs follow the same laws as an unpadded day's (not the same draws).
    """
    dt = params.wbar.dtype
    k_arr, k_cx, k_tight, k_rt, k_prov, k_day = jax.random.split(key, 6)
    submit = jnp.cumsum(jax.random.exponential(k_arr, (n,), dt) / params.arrival_rate)
    if regime is not None:
        submit = jnp.where(jnp.arange(n) < params.n_jobs, submit, jnp.inf)
    cx = jax.random.choice(k_cx, 3, (n,), p=params.complexity_probs)
    tight = jax.random.uniform(k_tight, (n,), dt) < params.tight_fraction
    sigma = params.runtime_sigma
    mu = jnp.log(params.wbar[cx]) - sigma * sigma / 2.0  # mean of the log-normal is exactly W̄
    runtime = jnp.exp(mu + sigma * jax.random.normal(k_rt, (n, n_types), dt))
    prov_q = jax.random.uniform(k_prov, (n,), dt)
    empty = jnp.zeros((0, n_types), dt)
    return build_day(k_day, submit, cx, tight, runtime, prov_q, params, empty, empty.T, empty.T, regime)


def day_arrays(day: MaterialisedDay, params: EnvParams) -> Day:
    """The reference's draws of one day (:func:`gpu_sched_env.cgrsp.day.materialise`) as a :class:`Day`."""
    dt = params.wbar.dtype
    f = lambda x: jnp.asarray(np.asarray(x, np.float64), dt)  # noqa: E731
    # the reference pads its Markov paths with inf; here with NEVER (a redraw never due), so the state stays finite
    markov_times = np.where(np.isinf(day.markov_times), NEVER, day.markov_times)
    return build_day(
        jax.random.PRNGKey(day.seed),
        f(day.submit),
        jnp.asarray(day.complexity, jnp.int32),
        jnp.asarray(day.tight),
        f(day.runtime),
        f(day.prov_q),
        params,
        f(day.fresh_u),
        f(markov_times),
        f(day.markov_us),
    )


__all__ = ["build_day", "day_arrays", "sample_day"]
