"""A materialised day: every random draw the simulator makes for one seed, as plain arrays.

:class:`~gpu_sched_env.cgrsp.sim.Simulator` draws lazily (the fresh stock stream one decision
point at a time, the Markov paths in chunks as far ahead as a query needs). A simulator
written without Python objects (the JAX env, :mod:`gpu_sched_env.cgrsp.jax`) needs them up
front, in the order the simulator consumes them. :func:`materialise` draws them from the same
named streams (:mod:`gpu_sched_env.core.rng`), so a replay of these arrays is the reference
day draw for draw; ``tests/cgrsp/test_day.py`` checks it against :class:`Simulator`.

Caps (sufficient, not guesses):

* fresh stock: one draw per GPU type per decision point, and a decision point consumes at
  least one event (N arrivals and N completions), so ``2N`` rows always suffice;
* Markov stock: the paths are drawn to :func:`day_horizon`, a bound on the last completion
  of any policy's day: after the last arrival some slot is always busy while a job waits
  (the no-op is illegal otherwise), so the day ends before the last arrival plus, job after
  job, the longest provisioning delay and the job's longest run time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.stock import MarkovStock
from gpu_sched_env.cgrsp.workload import Workload, generate
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream


@dataclass(frozen=True)
class MaterialisedDay:
    """One day's draws (NumPy); ids in submit order.

    Attributes:
        seed: the run seed.
        submit, complexity, tight, deadline: the jobs (``Workload``).
        runtime: realised run time [s] per job and GPU type, shape (N, T).
        prov_q: the provisioning quantile of each job, in [0, 1).
        fresh_u: fresh stock: the uniform draws, one row per decision point, shape (2N, T);
            (0, T) under the Markov process.
        markov_times, markov_us: Markov stock: per type the redraw times [s] (the first is 0)
            and the quantile drawn at each, padded with ``inf`` / 0 to a common length, shape
            (T, P); (T, 0) under fresh stock.
    """

    seed: int
    submit: np.ndarray
    complexity: np.ndarray
    tight: np.ndarray
    deadline: np.ndarray
    runtime: np.ndarray
    prov_q: np.ndarray
    fresh_u: np.ndarray
    markov_times: np.ndarray
    markov_us: np.ndarray

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return int(self.submit.size)


def day_horizon(params: CGRSPParams, wl: Workload) -> float:
    """An upper bound [s] on the end of the day of ``wl`` under any policy (see the module docstring)."""
    delay_max = max(params.delay_high[1], params.delay_medium[1], params.delay_low[1])
    return float(wl.submit[-1] + wl.n_jobs * delay_max + wl.runtime.max(axis=1).sum()) + 1.0


def materialise(params: CGRSPParams, seed: int, horizon_s: float | None = None) -> MaterialisedDay:
    """The draws of ``Simulator(params, seed)``, in the order it consumes them.

    Args:
        params: simulator parameters.
        seed: the run seed (as in ``simulate(..., seed=seed)`` and ``CGRSP-v0.reset(seed=seed)``).
        horizon_s: Markov stock only: draw the paths at least this far [s]; default
            :func:`day_horizon` (enough for any policy). A shorter horizon is the caller's
            promise that its days end before it.
    """
    seed = int(seed)
    if seed < 0:
        raise ConfigError(f"seed = {seed!r} is not allowed; allowed: a non-negative integer")
    wl = generate(params, seed)
    fleet = Fleet.from_params(params)
    n, t = wl.n_jobs, fleet.n_types
    prov_q = stream(seed, "cgrsp/provisioning").random(n)
    if params.stock_process == "markov":
        fresh_u = np.zeros((0, t))
        horizon = day_horizon(params, wl) if horizon_s is None else float(horizon_s)
        if not horizon > 0:
            raise ConfigError(f"horizon_s = {horizon_s!r} is not allowed; allowed: a positive number of seconds")
        proc = MarkovStock(fleet, seed, params.stock_dwell_s)
        for p in proc._paths:  # the reference paths themselves, extended chunk by chunk as queries would
            p.index(horizon)
        width = max(len(p.times) for p in proc._paths)
        times = np.full((t, width), np.inf)
        us = np.zeros((t, width))
        for g, p in enumerate(proc._paths):
            times[g, : len(p.times)] = p.times
            us[g, : len(p.us)] = p.us
    else:
        # the fresh stream is read T draws per decision point; 2N points bound any day
        fresh_u = stream(seed, "cgrsp/stock").random(2 * n * t).reshape(2 * n, t)
        times, us = np.zeros((t, 0)), np.zeros((t, 0))
    return MaterialisedDay(
        seed, wl.submit, wl.complexity, wl.tight, wl.deadline, wl.runtime, prov_q, fresh_u, times, us
    )


__all__ = ["MaterialisedDay", "day_horizon", "materialise"]
