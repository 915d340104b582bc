"""Tiny hand-built CGRSP worlds whose outcomes can be worked out by hand.

Two GPU types with run time exactly W̄ (σ = 0):
    fast:  W̄ = 10 / 20 / 30 s, 3.60 $/h (0.001 $/s)
    cheap: W̄ = 20 / 40 / 60 s, 1.44 $/h (0.0004 $/s)
Stock is deterministic: β = 1 → always High (caps 1.0, one time-of-day band with m = 1),
β = 0 → always Low. Provisioning delays are 0 unless a test sets them.
"""

from __future__ import annotations

import numpy as np

from gpu_sched_env.cgrsp.params import GPUType, make_params
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.workload import Workload

FAST = GPUType("fast", 100, 10, 3.6, (10.0, 20.0, 30.0), 1.0)
CHEAP = GPUType("cheap", 50, 10, 1.44, (20.0, 40.0, 60.0), 1.0)


def tiny_params(slots=("fast", "cheap"), beta=None, **kw):
    """Parameters for a tiny world; ``beta`` maps type name → β (1 High, 0 Low)."""
    beta = beta or {}
    types = tuple(
        GPUType(g.name, g.cuda_cores, g.vram_gb, g.price_per_h, g.mean_runtime_s, beta.get(g.name, g.beta_high))
        for g in (FAST, CHEAP)
    )
    base = dict(
        c_max=len(slots),
        slot_types=tuple(slots),
        slot_pattern=("fast", "cheap"),
        gpu_types=types,
        runtime_sigma=0.0,
        tod_bands=((0.0, 1.0),),
        p_high_cap=1.0,
        p_medium_cap=1.0,
        delay_high=(0.0, 0.0),
        delay_medium=(0.0, 0.0),
        delay_low=(0.0, 0.0),
        n_jobs=1,
        arrival_rate=1.0,
    )
    base.update(kw)
    return make_params("normal", **base)


def tiny_sim(params, submit, complexity, deadline, tight=None, seed=0) -> Simulator:
    """A simulator over the given jobs (ids in submit order), run time = W̄ exactly."""
    submit = np.asarray(submit, float)
    cx = np.asarray(complexity, np.int64)
    deadline = np.asarray(deadline, float)
    tight = np.zeros(submit.size, bool) if tight is None else np.asarray(tight, bool)
    wbar = np.array([g.mean_runtime_s for g in params.gpu_types]).T  # (3, n_types)
    runtime = wbar[cx]
    wl = Workload(submit, cx, tight, deadline, runtime)
    return Simulator(params, seed, workload=wl)


def run_policy(name, sim, **knobs):
    """Run a named heuristic (with its knobs) on ``sim`` to the end; returns the simulator."""
    from gpu_sched_agents.heuristics.cgrsp import make_policy
    from gpu_sched_env.cgrsp.sim import run
    from gpu_sched_env.core.rng import stream

    pol = make_policy(name, sim.params, **knobs)
    pol.reset(sim.view, stream(sim.seed, "cgrsp/policy"))
    return run(sim, pol)
