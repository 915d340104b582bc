"""Public entry point: ``simulate(policy, day, seed, trace=None, **params_and_knobs)``."""

from __future__ import annotations

from typing import Any

from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.policies import build_policy, split_kwargs
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.sim import Simulator, run
from gpu_sched_env.cgrsp.trace import Trace, TraceSource
from gpu_sched_env.core.policy import Policy
from gpu_sched_env.core.rng import stream


def simulate(
    policy: str | Policy, day: str = "hectic", seed: int = 0, trace: TraceSource | Trace | None = None, **kwargs: Any
) -> SimResult:
    """Simulate one day of CGRSP.

    Args:
        policy: one of ``fifo spt edf lcf balanced random spt_rescue adaptive rh cadr
            cadr_oo`` (or a registered extension), or a policy object with
            ``reset(sim, rng)`` and ``decide(sim)``.
        day: ``quiet``, ``normal``, ``hectic`` or ``surge`` (sets ``arrival_rate`` and
            ``n_jobs`` unless overridden).
        seed: run seed; every policy on the same seed sees the same jobs, run times and
            stock-draw sequence.
        trace: a job log (CSV or Parquet path, or DataFrame; see :mod:`gpu_sched_env.cgrsp.trace`)
            that replaces the day's generated jobs; run times, stock and delays still come
            from the model and ``seed``. ``day`` and ``kwargs`` still set everything else
            (e.g. the λ that RH and the env's load feature assume: pass ``arrival_rate``).
        **kwargs: any field of :class:`~gpu_sched_env.cgrsp.params.CGRSPParams` (``c_max``,
            ``tight_fraction``, ``stock_process``, ``stock_dwell_s`` ...) and any knob of the
            named policy's config (``theta`` for SPT+Rescue and Adaptive, ``cr_star`` for
            CADR, ``rho_res`` / ``rh_defer`` for RH, see ``gpu_sched_agents.heuristics.cgrsp.config``).

    Returns:
        :class:`SimResult` with ``summary()`` (dict of metrics) and ``jobs`` (DataFrame).

    Raises:
        ConfigError: unknown policy, day, parameter or knob (a knob of another policy
            included), an invalid value, or a malformed trace.
    """
    params, knobs = split_kwargs(kwargs, [policy])
    p = make_params(day, **params)
    tr = None if trace is None else Trace.load(trace, p)
    if tr is not None:
        p = tr.params(p)
    pol = build_policy(policy, p, **knobs.get(policy, {}) if isinstance(policy, str) else {})
    sim = Simulator(p, seed, workload=None if tr is None else tr.workload(p, seed))
    pol.reset(sim.view, stream(seed, "cgrsp/policy"))
    run(sim, pol)
    return sim.result(policy=getattr(pol, "name", str(policy)), day=day)


__all__ = ["build_policy", "simulate"]
