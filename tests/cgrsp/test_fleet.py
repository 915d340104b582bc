"""Fleet-derived quantities computed once (e_κ, ρ, nominal type) and used by every reader."""

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp import make_policy
from gpu_sched_env.cgrsp import Simulator, make_params
from gpu_sched_env.cgrsp.fleet import HIGH, LOW, MEDIUM, Fleet


@pytest.mark.parametrize("kw", [{}, {"slot_types": ("RTX 3090",) * 4, "c_max": 4}])
def test_fastest_wbar_and_offered_load_from_the_tables(kw):
    p = make_params("hectic", **kw)
    fl = Fleet.from_params(p)
    types = [p.type_names.index(n) for n in p.resolved_slot_types()]
    w = np.array([g.mean_runtime_s for g in p.gpu_types]).T  # [complexity, type] [s]
    assert fl.fastest_wbar == pytest.approx(w[:, sorted(set(types))].min(axis=1).tolist())
    w_mean = np.mean([np.dot(p.complexity_probs, w[:, g]) for g in types])
    assert fl.offered_load == pytest.approx(p.arrival_rate * w_mean / p.c_max)
    assert fl.type_names[fl.nominal_type] == "RTX 3090"
    assert (HIGH, MEDIUM, LOW) == (0, 1, 2) and len(fl.delay_mean) == 3


def test_rh_and_cadr_read_the_fleet_values():
    sim = Simulator(make_params("surge"), 0)
    rh, cadr = make_policy("rh", sim.params), make_policy("cadr", sim.params)
    rh.reset(sim.view, None)
    cadr.reset(sim.view, None)
    assert rh.rho == sim.fleet.offered_load
    assert cadr._e == sim.fleet.fastest_wbar
