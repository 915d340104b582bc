"""Deferring rules (one `defer` knob over the published rules) and the rollout planner.

Their studies (studies/cgrsp) are tested in tests/studies/cgrsp/test_rule_studies.py.
"""

import copy
import math

import numpy as np
import pandas as pd
import pytest

from gpu_sched_agents.heuristics.cgrsp import (
    ALL_POLICY_NAMES,
    EXTENSIONS,
    PLANNERS,
    POLICY_NAMES,
    STRONG_RULES,
    best_rule,
    make_policy,
)
from gpu_sched_agents.heuristics.cgrsp.extensions import defer_cost, deferred_slots
from gpu_sched_agents.heuristics.cgrsp.ordering import EDF
from gpu_sched_agents.heuristics.cgrsp.planner import screen_pick
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.fleet import HIGH, LOW, MEDIUM
from gpu_sched_env.cgrsp.fork import snapshot
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Simulator, run
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
from tests.cgrsp.fixtures_tiny import run_policy, tiny_params, tiny_sim

LOOSE = 1e6
MARKOV = {"stock_process": "markov", "stock_dwell_s": 900.0}
TINY_PLAN = {"n_rollouts": 2, "horizon_s": 300.0, "n_confirm": 4, "confirm_horizon_s": 600.0}


# ----------------------------------------------------------------------------- rules by name
def test_rules_are_registered_extensions_with_the_defer_knob():
    assert {
        "spt_rescue_defer_low",
        "spt_rescue_defer_lm",
        "cadr_defer_low",
        "cadr_defer_lm",
        "spt_defer_low",
        "spt_defer_lm",
        "spt_rescue_defer_exp",
        "cadr_defer_exp",
        "spt_defer_exp",
        "edf_defer_low",
    } <= set(EXTENSIONS)
    for name in (*EXTENSIONS, *PLANNERS):
        assert name in ALL_POLICY_NAMES and name not in POLICY_NAMES
    assert make_policy("cadr_defer_lm", make_params("hectic")).cfg.defer == "low_medium"
    assert make_policy("cadr_defer_lm", make_params("hectic")).cfg.cr_star == 3.0  # the base's knobs come along
    with pytest.raises(
        ConfigError, match=r"defer = 'sometimes' is not known; allowed: none, low, low_medium, expected"
    ):
        make_policy("cadr_defer_low", make_params("hectic"), defer="sometimes")


@pytest.mark.parametrize("name", list(EXTENSIONS))
def test_every_rule_simulates_under_both_stock_models(name):
    for stock in ({}, MARKOV):
        s = simulate(name, "surge", 1, n_jobs=120, **stock).summary()
        assert s["completed"] == 120
    assert simulate(name, "hectic", 2, n_jobs=200).summary()["completed"] == 200


def test_defer_none_is_the_published_rule_job_for_job():
    for base in ("spt", "spt_rescue", "cadr", "edf"):
        for stock in ({}, MARKOV):
            ref = simulate(base, "hectic", 3, **stock).jobs
            got = simulate(f"{base}_defer_low", "hectic", 3, defer="none", slot_score="rule", **stock).jobs
            pd.testing.assert_frame_equal(ref, got, check_exact=True)
            assert not ref.equals(simulate(f"{base}_defer_low", "hectic", 3, **stock).jobs)


def _medium_state(stock):
    """Two slots (fast, cheap): job 0 on the fast slot, job 1 waiting at t = 1, cheap slot idle."""
    sim = tiny_sim(tiny_params(), [0.0, 1.0], [2, 0], [LOOSE, LOOSE])
    assert sim.advance()
    sim.assign(0, 0)
    assert sim.advance() and sim.t == 1.0 and sim.idle_slots() == [1]
    sim.stock = list(stock)
    return sim


def test_low_and_low_medium_differ_on_a_medium_stock_slot():
    p = tiny_params()
    low, lm = make_policy("cadr_defer_low", p), make_policy("cadr_defer_lm", p)
    for stock, want_low, want_lm in (
        ([HIGH, MEDIUM], [(1, 1)], []),
        ([HIGH, LOW], [], []),
        ([HIGH, HIGH], [(1, 1)], [(1, 1)]),
    ):
        for pol, want in ((low, want_low), (lm, want_lm)):
            sim = _medium_state(stock)
            pol.reset(sim.view, stream(0, "cgrsp/policy"))
            assert pol.decide(sim.view) == want, (pol.name, stock)
    # with no slot busy neither defers (nothing else would come to wake the day)
    sim = tiny_sim(p, [0.0], [0], [LOOSE])
    assert sim.advance()
    sim.stock = [MEDIUM, LOW]
    for pol in (low, lm):
        pol.reset(sim.view, stream(0, "cgrsp/policy"))
        assert len(pol.decide(sim.view)) == 1


def test_deferred_slots_and_defer_cost_by_hand():
    sim = Simulator(make_params("hectic"), 0)
    sim.t = 20000.0  # 10:33 UTC: the 09-18 band, 3090: p = (0.25, 0.375, 0.375)
    g = sim.fleet.type_names.index("RTX 3090")
    # fresh, 10 s to the next event: accept High only, 10/0.25 + 5 = 45 s (vs 16 + 47 = 63 s)
    assert defer_cost(sim, g, 10.0) == pytest.approx(45.0)
    markov = Simulator(make_params("hectic", **MARKOV), 0)
    markov.t = 20000.0
    tau = 900.0 * (1 - (0.25**2 + 0.375**2 + 0.375**2))  # mean time to the next redraw
    assert defer_cost(markov, g, 10.0) == pytest.approx(
        min(tau / 0.25 + 5.0, tau / 0.625 + (0.25 * 5 + 0.375 * 75) / 0.625)
    )
    # nothing to defer when the mode is none, or nothing is busy and nothing is to come
    assert deferred_slots(sim, "none") == []


def test_defer_scale_moves_the_expected_break_even():
    """defer_scale multiplies the cost of waiting: 1 is the registered rule, a huge scale never defers."""

    def run(name: str, **knobs) -> dict:
        return {
            k: v for k, v in simulate(name, "hectic", 20000, n_jobs=300, **knobs).summary().items() if k != "policy"
        }

    base = run("spt_rescue_defer_exp")
    assert run("spt_rescue_defer_exp", defer_scale=1.0) == base
    assert run("spt_rescue_defer_exp", defer_scale=1e9, slot_score="rule") == run("spt_rescue") != base
    assert run("spt_rescue_defer_exp", defer_scale=0.5) != base
    for bad in (0.0, -1.0):
        with pytest.raises(ConfigError, match="defer_scale"):
            make_policy("spt_rescue_defer_exp", make_params("hectic"), defer_scale=bad)


@pytest.mark.parametrize("name", [*EXTENSIONS, *PLANNERS])
def test_a_single_slot_day_never_stalls(name):
    # one slot, Low stock always: every rule must still dispatch when its slot is the only one
    p = tiny_params(slots=("cheap",), beta={"cheap": 0.0}, delay_low=(50.0, 50.0))
    knobs = TINY_PLAN if name in PLANNERS else {}
    sim = run_policy(name, tiny_sim(p, [0.0, 5.0, 7.0, 300.0], [0, 1, 2, 0], [LOOSE] * 4), **knobs)
    assert sim.done
    for stock in ({}, MARKOV):
        s = simulate(name, "normal", 4, n_jobs=30, c_max=1, **stock, **knobs).summary()
        assert s["completed"] == 30


def test_strong_rules_and_best_rule():
    for sp, name in STRONG_RULES.items():
        assert name in EXTENSIONS
        assert best_rule(stock_process=sp) == name
    assert best_rule(make_params("hectic", **MARKOV)) == STRONG_RULES["markov"]
    assert best_rule() == STRONG_RULES["fresh"]
    with pytest.raises(ConfigError, match="stock_process = 'sticky'"):
        best_rule(stock_process="sticky")


# ----------------------------------------------------------------------------- planner
class _Forbidden:
    """Stands in for a realised draw: any read fails."""

    def __getitem__(self, i):
        raise AssertionError("the planner read a realised draw")

    def __len__(self):
        raise AssertionError("the planner read a realised draw")

    def levels(self, t):
        raise AssertionError("the planner read the future stock")


def _at_planned_decision(params, seed, min_t=2000.0, **knobs):
    """(sim, planner) at the first decision after ``min_t`` with several candidate plans."""
    sim = Simulator(params, seed)
    pol = make_policy("rollout", params, **knobs)
    pol.reset(sim.view, stream(seed, "cgrsp/policy"))
    while sim.advance():
        if sim.t > min_t and len(pol.candidates(sim.view)) > 1:
            return sim, pol
        for j, s in pol.decide(sim.view):
            sim.assign(j, s)
    raise AssertionError("no decision point with a choice")


@pytest.mark.parametrize("stock", [{}, MARKOV], ids=["fresh", "markov"])
def test_planner_reads_no_realised_draw(stock):
    params = make_params("hectic", n_jobs=400, **stock)
    sim, pol = _at_planned_decision(params, 5, **TINY_PLAN)
    ref_sim, ref_pol = copy.deepcopy(sim), copy.deepcopy(pol)
    want = ref_pol.decide(ref_sim.view)
    # 1. perturb every realised future of a copy: run times, delay quantiles, provisioning
    #    starts not yet happened, future arrivals' times and attributes, the stock to come
    alt_sim, alt_pol = copy.deepcopy(sim), copy.deepcopy(pol)
    rng = np.random.default_rng(99)
    alt_sim._rt = [[x * rng.uniform(0.5, 2.0) for x in row] for row in alt_sim._rt]
    alt_sim._prov_q = rng.random(alt_sim.n_jobs).tolist()
    t, na = alt_sim.t, alt_sim.n_arrived
    for j in range(alt_sim.n_jobs):
        if alt_sim._start[j] > t and alt_sim._start[j] != math.inf:
            alt_sim._start[j] = t + rng.uniform(1.0, 5000.0)
    later = np.sort(t + rng.uniform(1.0, 20000.0, alt_sim.n_jobs - na)).tolist()
    alt_sim.submit[na:] = later
    alt_sim.deadline[na:] = [x + 60.0 for x in later]
    alt_sim.complexity[na:] = rng.integers(0, 3, len(later)).tolist()
    alt_sim._stock = _Forbidden()
    assert alt_pol.decide(alt_sim.view) == want
    # 2. make the private arrays raise on any read
    for attr in ("_rt", "_prov_q", "_stock"):
        setattr(sim, attr, _Forbidden())
    assert pol.decide(sim.view) == want
    # the snapshot holds arrived jobs only
    assert len(snapshot(ref_sim.view).jobs) == ref_sim.n_arrived - ref_sim.n_completed


def test_planner_is_deterministic_for_a_seed_and_reports_its_cost():
    a = simulate("rollout", "surge", 7, n_jobs=150, **TINY_PLAN)
    b = simulate("rollout", "surge", 7, n_jobs=150, **TINY_PLAN)
    pd.testing.assert_frame_equal(a.jobs, b.jobs, check_exact=True)
    p = make_params("surge", n_jobs=150)
    sim = Simulator(p, 7)
    pol = make_policy("rollout", p, **TINY_PLAN)
    pol.reset(sim.view, stream(7, "cgrsp/policy"))
    run(sim, pol)
    assert pol.n_planned > 0 and pol.plan_seconds > 0


@pytest.mark.parametrize(
    "knob, value, match",
    [
        ("n_rollouts", 0, "n_rollouts"),
        ("n_rollouts", 2.5, "n_rollouts"),
        ("horizon_s", 0.0, "horizon_s"),
        ("max_candidates", 1, "max_candidates"),
        ("confidence_z", -1.0, "confidence_z"),
        ("base_rule", "fifo", "base_rule = 'fifo'"),
        ("base_rule", 3, "base_rule type"),
        ("portfolio", ("fifo",), "portfolio = 'fifo'"),
        ("portfolio", "cadr_defer_exp", "portfolio"),
        ("portfolio", (3,), "portfolio"),
    ],
)
def test_planner_budget_knobs_are_validated(knob, value, match):
    with pytest.raises(ConfigError, match=match):
        make_policy("rollout", make_params("hectic"), **{knob: value})


def test_portfolio_plans_join_the_candidates_after_the_base_plan():
    params = make_params("hectic", n_jobs=400)
    knobs = {**TINY_PLAN, "max_candidates": 16}
    sim, pol = _at_planned_decision(params, 5, **knobs)
    plain = pol.candidates(sim.view)
    other = make_policy("rollout", params, portfolio=["edf_defer_low", "cadr_defer_exp"], **knobs)
    other.reset(sim.view, stream(5, "cgrsp/policy"))
    cands = other.candidates(sim.view)
    assert cands[0] == plain[0]  # the base rule's plan first
    for name in ("edf_defer_low", "cadr_defer_exp"):
        rule = make_policy(name, params)
        rule.reset(sim.view, stream(5, "cgrsp/policy"))
        assert sorted(rule.decide(sim.view)) in [sorted(c) for c in cands]
    # the deferral candidates are still there, and nothing is offered twice
    assert {tuple(sorted(c)) for c in plain} <= {tuple(sorted(c)) for c in cands}
    assert len({tuple(sorted(c)) for c in cands}) == len(cands)


def test_the_screen_passes_on_only_a_plan_that_leads_the_base_plan():
    noisy = np.array([[100.0, 90.0], [100.0, 130.0], [100.0, 80.0]])  # mean −0, noisy
    assert screen_pick(noisy, 1.0) == 0
    clear = np.array([[100.0, 90.0], [100.0, 91.0], [100.0, 89.0]])
    assert screen_pick(clear, 2.0) == 1
    assert screen_pick(np.array([[5.0, 6.0, 4.0]]), 2.0) == 2  # one rollout: any advantage


class _FormerEDFDeferLow(EDF):
    """The former edf_defer_low class (filter EDF's plan): the generic mechanism must match it."""

    name = "edf_defer_low_former"

    def decide(self, sim):
        busy = any(j >= 0 for j in sim.slot_job)
        st, stock = sim.fleet.slot_type, sim.stock
        return [(j, s) for j, s in super().decide(sim) if not (busy and stock[st[s]] == LOW)]


@pytest.mark.parametrize("stock", [{}, MARKOV], ids=["fresh", "markov"])
def test_edf_defer_low_is_unchanged_by_the_generic_mechanism(stock):
    for day, seed in (("hectic", 0), ("surge", 1)):
        p = make_params(day, **stock)
        former = _FormerEDFDeferLow(p)
        ref = simulate(former, day, seed, **stock).jobs
        pd.testing.assert_frame_equal(simulate("edf_defer_low", day, seed, **stock).jobs, ref, check_exact=True)
