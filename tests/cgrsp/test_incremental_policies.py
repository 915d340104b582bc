"""The incremental policies decide exactly as the O(queue) references, decision by decision."""

import pytest

from gpu_sched_agents.heuristics.cgrsp import POLICIES
from gpu_sched_agents.heuristics.cgrsp.rh import RH
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.core.rng import stream
from tests.cgrsp.reference_policies import RefAdaptive, RefRandom, RefRH, RefSPTRescue

REFS = {"spt_rescue": RefSPTRescue, "adaptive": RefAdaptive, "rh": RefRH, "random": RefRandom}


def lockstep(name, day, seed, knobs=None, planned=False, **params):
    """Drive a day with the policy; the reference must plan the same at every decision."""
    p = make_params(day, **params)
    sim = Simulator(p, seed)
    knobs = {**(knobs or {}), **({"rh_plan": "timeline"} if planned else {})}  # the documented rolling horizon
    pol, ref = POLICIES[name](p, **knobs), REFS[name](p, **knobs)
    pol.reset(sim.view, stream(seed, "cgrsp/policy"))
    ref.reset(sim.view, stream(seed, "cgrsp/policy"))
    n = 0
    while sim.advance():
        plan = pol.decide(sim.view)
        assert plan == ref.decide(sim.view), (name, day, seed, sim.t, sim.n_decisions)
        for j, s in plan:
            sim.assign(j, s)
        n += 1
    assert sim.done
    return n


@pytest.mark.parametrize("name", sorted(REFS))
@pytest.mark.parametrize(
    "day, seed, params",
    [
        ("hectic", 0, {"n_jobs": 1500}),
        ("hectic", 1, {"n_jobs": 1200, "c_max": 3}),
        ("hectic", 2, {"n_jobs": 1000, "c_max": 8}),
        ("hectic", 12, {"n_jobs": 800, "c_max": 10}),  # ρ ≈ 0.72 < gate: RH reserves on a saturated day
        ("surge", 3, {}),
        ("surge", 4, {"c_max": 2, "n_jobs": 400}),
        ("normal", 5, {"c_max": 1}),
        ("quiet", 6, {}),
    ],
)
def test_incremental_policy_equals_the_reference(name, day, seed, params):
    knobs = {"rho_res": 0} if name == "rh" and params.get("c_max") == 1 else {}
    assert lockstep(name, day, seed, knobs, **params) > 0


@pytest.mark.parametrize(
    "name, knobs",
    [
        ("rh", {"rho_res": 2}),  # reservation on: eager tight jobs, reserved slots
        ("rh", {"rho_res": 1, "rho_gate": 10.0}),  # gate open on a saturated day
        ("rh", {"rh_defer": "never"}),
        ("rh", {"rh_defer": "low"}),
        ("adaptive", {"pressure_queue": 40, "theta": 1200.0}),
        ("adaptive", {"theta_pressure": 900.0}),
        ("spt_rescue", {"theta": 3000.0}),
    ],
)
def test_incremental_policy_equals_the_reference_with_knobs(name, knobs):
    for day, seed in (("hectic", 7), ("surge", 8)):
        assert lockstep(name, day, seed, knobs, n_jobs=800) > 0


@pytest.mark.parametrize("knobs", [{}, {"rho_res": 2}, {"rho_res": 1, "rho_gate": 10.0}, {"rh_defer": "never"}])
@pytest.mark.parametrize(
    "day, seed, params", [("hectic", 9, {"n_jobs": 800}), ("surge", 10, {}), ("normal", 11, {"c_max": 3})]
)
def test_rh_with_planning_on_busy_slots_equals_its_reference(knobs, day, seed, params):
    assert lockstep("rh", day, seed, knobs, planned=True, **params) > 0


def test_rh_plan_idle_never_plans_on_busy_slots():
    # every candidate goes to an idle slot (RH.all_eager), and on the hectic day (ρ ≈ 1.43)
    # nothing is held back, so without deferral a decision commits min(idle slots, waiting) jobs; the planned
    # variant leaves idle slots (Low stock) for jobs it plans on busy ones that free sooner
    p = make_params("hectic", n_jobs=300)
    fewer = 0
    for plan_mode in ("idle", "timeline"):
        sim = Simulator(p, 0)
        pol = RH(p, rh_defer="never", rh_plan=plan_mode)
        pol.reset(sim.view, None)
        while sim.advance():
            plan = pol.decide(sim.view)
            if plan_mode == "idle":
                assert len(plan) in (0, min(sim.n_idle, len(sim.waiting)))
            fewer += plan_mode == "timeline" and len(plan) < min(sim.n_idle, len(sim.waiting))
            for j, s in plan:
                sim.assign(j, s)
    assert fewer > 0
