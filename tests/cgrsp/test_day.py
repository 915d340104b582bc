"""materialise(): a seed's draws as arrays, equal to what Simulator draws and consumes."""

import numpy as np
import pytest

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.day import day_horizon, materialise
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.stock import MarkovStock
from gpu_sched_env.cgrsp.workload import generate
from gpu_sched_env.core.errors import ConfigError

MARKOV = {"stock_process": "markov", "stock_dwell_s": 900.0}


class _Recorder:
    """FIFO that records the stock status at every decision point."""

    def __init__(self, sim):
        self.sim, self.levels = sim, []

    def run(self):
        sim = self.sim
        while sim.advance():
            self.levels.append((sim.t, list(sim.stock)))
            for s in sim.idle_slots():
                if not sim.waiting:
                    break
                sim.assign(next(iter(sim.waiting)), s)
        return self


@pytest.mark.parametrize("day", ["hectic", "surge"])
def test_jobs_runtimes_and_quantiles_are_the_simulators(day):
    p = make_params(day)
    d = materialise(p, 11)
    sim = Simulator(p, 11)
    np.testing.assert_array_equal(d.submit, sim.workload.submit)
    np.testing.assert_array_equal(d.deadline, sim.workload.deadline)
    np.testing.assert_array_equal(d.complexity, sim.workload.complexity)
    np.testing.assert_array_equal(d.tight, sim.workload.tight)
    np.testing.assert_array_equal(d.runtime, sim.workload.runtime)
    np.testing.assert_array_equal(d.prov_q, np.asarray(sim._prov_q))
    assert d.fresh_u.shape == (2 * p.n_jobs, 4) and d.markov_times.shape == (4, 0)


def test_fresh_rows_are_the_decision_points_draws_in_order():
    p = make_params("hectic")
    d = materialise(p, 3)
    rec = _Recorder(Simulator(p, 3)).run()
    sim = rec.sim
    assert 0 < len(rec.levels) <= d.fresh_u.shape[0]
    for i, (t, lv) in enumerate(rec.levels):
        assert sim.fleet.stock_levels(t, d.fresh_u[i].tolist()) == lv


def test_markov_paths_are_the_simulators_and_reach_the_horizon():
    p = make_params("surge", **MARKOV)
    d = materialise(p, 5)
    wl = generate(p, 5)
    h = day_horizon(p, wl)
    proc = MarkovStock(Simulator(p, 5).fleet, 5, 900.0)
    rng = np.random.default_rng(0)
    for t in np.sort(rng.uniform(0, 2 * 86400, 300)):
        want = proc.levels(float(t))
        idx = [np.searchsorted(d.markov_times[g], t, side="right") - 1 for g in range(4)]
        got = proc.fleet.stock_levels(float(t), [d.markov_us[g, i] for g, i in enumerate(idx)])
        assert got == want
    assert all(np.max(d.markov_times[g][np.isfinite(d.markov_times[g])]) > h for g in range(4))
    assert d.fresh_u.shape == (0, 4)


@pytest.mark.parametrize("policy", ["fifo", "spt_rescue_defer_exp"])
def test_horizon_bounds_the_day(policy):
    p = make_params("hectic")
    res = simulate(policy, "hectic", seed=2)
    assert np.max(res.completion) < day_horizon(p, generate(p, 2))


def test_bad_seed_and_horizon():
    with pytest.raises(ConfigError, match="seed"):
        materialise(make_params("quiet"), -1)
    with pytest.raises(ConfigError, match="horizon_s"):
        materialise(make_params("quiet", **MARKOV), 0, horizon_s=0.0)
