"""Heuristic knobs live in each policy's config, not in the simulator's parameters."""

import gymnasium as gym
import pandas as pd
import pytest

import gpu_sched_env  # noqa: F401  (registers the env ids)
from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS, POLICIES, make_policy
from gpu_sched_env.cgrsp import PARAM_NAMES, simulate
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.policies import POLICIES as REGISTRY
from gpu_sched_env.cgrsp.policies import knob_owners
from gpu_sched_env.core.errors import ConfigError

KNOBS = {
    "stock_penalty",
    "spt_weights",
    "balanced_weights",
    "lcf_stock_factor",
    "theta",
    "pressure_queue",
    "theta_pressure",
    "cr_star",
    "rho_res",
    "rho_gate",
    "rh_weights",
    "rh_defer",
    "rh_plan",
    "defer",
    "defer_scale",
    "defer_gap",
    "slot_score",
    "base_rule",
    "n_rollouts",
    "horizon_s",
    "max_candidates",
    "confidence_z",
    "portfolio",
    "n_confirm",
    "confirm_horizon_s",
    "error_rate",  # extensions
}


def test_the_simulator_knows_no_knob_and_every_knob_has_a_policy():
    assert not KNOBS & set(PARAM_NAMES)
    assert set(knob_owners()) == KNOBS
    # published owners first; the deferring rules built on them carry their knobs too
    assert knob_owners()["theta"][:2] == ("spt_rescue", "adaptive")
    assert set(knob_owners()["theta"][2:]) == {n for n in EXTENSIONS if n.startswith("spt_rescue_defer_")}
    assert knob_owners()["cr_star"][:2] == ("cadr", "cadr_oo")
    assert set(knob_owners()["defer"]) == set(knob_owners()["defer_scale"]) == set(EXTENSIONS)
    assert set(knob_owners()["defer_gap"]) == set(knob_owners()["slot_score"]) == set(EXTENSIONS)
    for name, cls in POLICIES.items():  # the registry's knob table is the config's
        assert dict(REGISTRY.entry(name).knobs) == cls.Config.defaults()


def test_the_env_rejects_a_knob():
    with pytest.raises(ConfigError, match=r"unknown CGRSP-v0 keyword\(s\): theta"):
        gym.make("CGRSP-v0", theta=5)
    with pytest.raises(ConfigError, match="rho_res"):
        gym.make("CGRSP-hectic-v0", rho_res=0)


def test_make_policy_names_the_allowed_knobs():
    p = make_params("hectic")
    with pytest.raises(ConfigError, match=r"unknown knobs for policy 'fifo': theta; allowed: none"):
        make_policy("fifo", p, theta=5)
    with pytest.raises(
        ConfigError, match=r"unknown knobs for policy 'spt_rescue': thta; allowed: spt_weights, stock_penalty, theta"
    ):
        make_policy("spt_rescue", p, thta=5)
    assert make_policy("adaptive", p, theta=60, pressure_queue=3).cfg.theta == 60
    assert make_policy("rh", p, rh_weights=[0.9, 0.1]).cfg.rh_weights == (0.9, 0.1)  # lists from YAML/CLI


@pytest.mark.parametrize(
    "policy, knobs, pattern",
    [
        ("spt_rescue", {"theta": -1.0}, r"theta = -1.0 is out of range; allowed: \[0, inf\]"),
        ("adaptive", {"pressure_queue": 2.5}, r"pressure_queue = 2.5 must be an integer"),
        ("adaptive", {"theta_pressure": "long"}, r"theta_pressure = 'long' is not a number"),
        ("cadr_oo", {"cr_star": 0.5}, r"cr_star = 0.5 is out of range; allowed: \(1, inf\]"),
        ("rh", {"rho_res": -1}, r"rho_res = -1 is out of range"),
        ("rh", {"rho_gate": -0.5}, r"rho_gate = -0.5 is out of range"),
        ("rh", {"rh_defer": "sometimes"}, r"rh_defer = 'sometimes' is not known; allowed: expected, low, never"),
        ("rh", {"rh_weights": (1.0,)}, r"rh_weights = \(1.0,\): need 2 weights"),
        ("spt", {"spt_weights": 0.7}, r"spt_weights = 0.7: need 2 weights"),
        ("balanced", {"balanced_weights": (0.8, -0.2)}, r"balanced_weights = -0.2 is out of range"),
        (
            "balanced",
            {"stock_penalty": (0.0, 0.2)},
            r"stock_penalty = \(0.0, 0.2\): need 3 values \(High, Medium, Low\)",
        ),
        (
            "lcf",
            {"lcf_stock_factor": (1.0, 1.05, float("inf"))},
            r"lcf_stock_factor\[Low\] = inf must be a finite number",
        ),
    ],
)
def test_bad_knob_values_raise(policy, knobs, pattern):
    with pytest.raises(ConfigError, match=pattern):
        make_policy(policy, make_params("hectic"), **knobs)
    with pytest.raises(ConfigError, match=pattern):
        simulate(policy, "quiet", 0, **knobs)


def test_rho_res_must_stay_below_c_max_when_rh_is_built():
    with pytest.raises(ConfigError, match=r"rho_res = 3 must be below c_max = 3 .*allowed: 0..2"):
        make_policy("rh", make_params("hectic", c_max=3), rho_res=3)
    with pytest.raises(ConfigError, match=r"rho_res = 1 must be below c_max = 1"):
        simulate("rh", "quiet", 0, c_max=1)
    assert simulate("rh", "quiet", 0, c_max=1, rho_res=0).summary()["completed"] == 6
    assert simulate("fifo", "quiet", 0, c_max=1).summary()["completed"] == 6  # no RH, no ρ_res


def test_simulate_rejects_a_knob_of_another_policy_listing_both_sets():
    with pytest.raises(ConfigError) as e:
        simulate("fifo", "quiet", 0, theta=600.0)
    msg = str(e.value)
    assert (
        "theta is a knob of spt_rescue, adaptive, spt_rescue_defer_low, spt_rescue_defer_lm, spt_rescue_defer_exp, not "
        "of the policies in play" in msg
    )
    assert "simulator parameters: c_max" in msg and "knobs of fifo: none" in msg
    with pytest.raises(
        ConfigError, match="knobs of rh: rho_res, rho_gate, rh_weights, rh_defer, rh_plan, stock_penalty"
    ):
        simulate("rh", "quiet", 0, rho_ress=0)


@pytest.mark.parametrize(
    "policy, day, knobs, n_jobs",
    [
        ("spt_rescue", "hectic", {"theta": 3000.0}, 300),
        ("spt_rescue", "surge", {"spt_weights": (0.2, 0.8)}, 300),
        ("adaptive", "hectic", {"pressure_queue": 50}, 300),
        ("adaptive", "hectic", {"theta_pressure": 600.0}, 300),
        ("cadr", "hectic", {"cr_star": 10.0}, 300),
        # RH reserves only while ρ < ρ_gate (the surge day, not the hectic one), and with the
        # default rh_defer="never" the first 300 surge jobs never queue: the full day does
        ("rh", "surge", {"rho_res": 0}, 950),
        ("rh", "hectic", {"rh_defer": "expected"}, 300),
        ("rh", "hectic", {"rh_weights": (1.0, 0.0)}, 300),
        ("rh", "surge", {"rho_gate": 0.0}, 950),
        ("rh", "hectic", {"stock_penalty": (1e4, 0.0, 0.0)}, 300),
        ("balanced", "hectic", {"balanced_weights": (0.2, 0.8)}, 300),
        ("lcf", "surge", {"lcf_stock_factor": (1.0, 3.0, 9.0)}, 300),
    ],
)
def test_each_knob_reaches_its_policy(policy, day, knobs, n_jobs):
    base = simulate(policy, day, 0, n_jobs=n_jobs).jobs
    moved = simulate(policy, day, 0, n_jobs=n_jobs, **knobs).jobs
    assert not base.equals(moved)
    # simulate's knob path is make_policy's
    again = simulate(make_policy(policy, make_params(day, n_jobs=n_jobs), **knobs), day, 0, n_jobs=n_jobs).jobs
    pd.testing.assert_frame_equal(moved, again)


def test_rh_plan_is_a_validated_knob_and_changes_rh():
    with pytest.raises(ConfigError, match="rh_plan = 'busy'.*idle, timeline"):
        simulate("rh", "surge", 0, rh_plan="busy")
    idle = simulate("rh", "surge", 0).summary()["mean_wait_min"]
    assert simulate("rh", "surge", 0, rh_plan="idle").summary()["mean_wait_min"] == idle  # the default
    assert simulate("rh", "surge", 0, rh_plan="timeline").summary()["mean_wait_min"] != idle
