"""Simulator.fork: a public copy for planning that neither reads the realised future nor changes the day."""

import copy
import math

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp import make_policy
from gpu_sched_env.cgrsp.fork import snapshot
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Fork, Simulator, run
from gpu_sched_env.core.rng import stream

MARKOV = {"stock_process": "markov", "stock_dwell_s": 900.0}


def _mid_day(stock, seed=3, t_min=3000.0):
    p = make_params("hectic", n_jobs=400, **stock)
    sim = Simulator(p, seed)
    pol = make_policy("spt_rescue_defer_exp", p)
    pol.reset(sim.view, stream(seed, "cgrsp/policy"))
    while sim.advance():
        if sim.t > t_min and any(not sim.started(s) for s, j in enumerate(sim.slot_job) if j >= 0):
            return sim, p
        for j, s in pol.decide(sim.view):
            sim.assign(j, s)
    raise AssertionError("no mid-day state with a slot provisioning")


def _played(f: Fork) -> tuple:
    """Run the base rule on a fork to the end of the day: its whole record."""
    pol = make_policy("spt_rescue_defer_exp", f.params)
    pol.reset(f.view, None)
    run(f, pol)
    return tuple(f.completion), tuple(f.dispatch), tuple(f.submit)


@pytest.mark.parametrize("stock", [{}, MARKOV], ids=["fresh", "markov"])
def test_a_fork_does_not_see_the_realised_draws(stock):
    sim, _ = _mid_day(stock)
    want = _played(sim.fork(seed=11))
    # perturb every realised future of a copy: run times, delay quantiles, provisioning starts
    # not yet happened, future arrivals, the stock to come
    alt = copy.deepcopy(sim)
    rng = np.random.default_rng(5)
    alt._rt = [[x * rng.uniform(0.5, 2.0) for x in row] for row in alt._rt]
    alt._prov_q = rng.random(alt.n_jobs).tolist()
    t, na = alt.t, alt.n_arrived
    moved = 0
    for j in range(alt.n_jobs):
        if t < alt._start[j] < math.inf:
            alt._start[j] = t + rng.uniform(1.0, 5000.0)
            moved += 1
    assert moved > 0  # a provisioning start in the future was there to leak
    later = np.sort(t + rng.uniform(1.0, 20000.0, alt.n_jobs - na)).tolist()
    alt.submit[na:] = later
    alt.deadline[na:] = [x + 60.0 for x in later]
    alt.complexity[na:] = rng.integers(0, 3, len(later)).tolist()
    alt._stock = None  # any read of the stock process would fail
    assert _played(alt.fork(seed=11)) == want


@pytest.mark.parametrize("stock", [{}, MARKOV], ids=["fresh", "markov"])
def test_a_fork_leaves_the_day_unchanged_and_forks_share_a_future_per_seed(stock):
    sim, p = _mid_day(stock)
    before = copy.deepcopy(sim.__dict__.copy())
    a, b, c = sim.fork(seed=1), sim.fork(seed=1), sim.fork(seed=2)
    pa, pb, pc = _played(a), _played(b), _played(c)
    assert pa == pb != pc  # common random numbers per seed, a new future per seed
    for k in (
        "t",
        "n_arrived",
        "n_completed",
        "slot_job",
        "waiting",
        "dispatch",
        "_start",
        "completion",
        "stock",
        "_rt",
        "_prov_q",
        "submit",
    ):
        assert getattr(sim, k) == before[k], k
    # the day goes on exactly as it would have without the forks
    ref = copy.deepcopy(sim)
    for s in (sim, ref):
        pol = make_policy("spt_rescue_defer_exp", p)
        pol.reset(s.view, stream(3, "cgrsp/policy"))
        run(s, pol)
    assert sim.completion == ref.completion


def test_a_fork_copies_the_public_state_only():
    sim, _ = _mid_day({})
    f = sim.fork(seed=4, horizon_s=600.0)
    snap = snapshot(sim.view)
    assert f.t == sim.t and f.n_arrived == len(snap.jobs) == sim.n_arrived - sim.n_completed
    assert [f.real_ids[i] if i >= 0 else -1 for i in f.slot_job] == sim.slot_job
    assert f.stock == sim.stock
    assert all(sim.t < a <= sim.t + 600.0 for a in f.submit[f.n_arrived :])  # arrivals in the horizon only
    assert f.n_jobs - f.n_arrived <= sim.n_jobs - sim.n_arrived
    for s, i in enumerate(f.slot_job):  # a busy slot frees in the future of the fork
        if i >= 0:
            assert f.slot_end(s) >= sim.t
    assert _played(f.fork(seed=4))  # a fork of a fork is a fork
