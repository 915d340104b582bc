"""The deferring rules' two corrections (``defer_gap="plan"``, ``slot_score="delay"``).

The end-of-day Low cascade: with no slot busy and no arrival to come, the rule as published
(``defer_gap="busy"``) stopped deferring and filled Low slots (600-7 200 s delays) although
the Medium slots it filled in the same plan would free within minutes. The slot score: SPT's
price term (+0.25 for an RTX 3090) outweighed the Medium penalty (0.2) and sent a job to a
cheap Medium slot beside an idle High 3090.
"""

import pytest

from gpu_sched_agents.heuristics.cgrsp import make_policy
from gpu_sched_agents.heuristics.cgrsp.extensions import deferred_slots
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.fleet import HIGH, LOW, MEDIUM
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
from tests.cgrsp.fixtures_tiny import tiny_sim

LOOSE = 1e6
TYPES = ("RTX 3090", "RTX A5000", "RTX A4500", "RTX A4000")  # slots 0..4: 3090, A5000, A4500, A4000, 3090


def _end_of_day(stock: dict[str, int], n_waiting: int = 5):
    """Every job of the day has arrived at t = 0, no slot is busy: the state of the cascade."""
    p = make_params("hectic", n_jobs=n_waiting)
    sim = tiny_sim(p, [0.0] * n_waiting, [0] * n_waiting, [LOOSE] * n_waiting)
    assert sim.advance() and sim.n_arrived == sim.n_jobs and sim.n_idle == 5
    sim.stock = [stock[g] for g in TYPES]
    return sim


def _decide(sim, name: str, **knobs):
    pol = make_policy(name, sim.params, **knobs)
    pol.reset(sim.view, stream(0, "cgrsp/policy"))
    return pol.decide(sim.view)


def test_end_of_day_low_slots_wait_for_the_medium_slots_filled_in_the_same_plan():
    # two Medium 3090 slots (0 and 4) and three Low slots (1, 2, 3), five jobs, nothing else to come
    sim = _end_of_day({"RTX 3090": MEDIUM, "RTX A5000": LOW, "RTX A4500": LOW, "RTX A4000": LOW})
    assert deferred_slots(sim.view, "expected", gap_mode="busy") == []  # the published rule: no deferral at all
    assert sorted(deferred_slots(sim.view, "expected")) == [1, 2, 3]
    assert sorted(s for _, s in _decide(sim, "spt_rescue_defer_exp")) == [0, 4]
    assert sorted(s for _, s in _decide(sim, "spt_rescue_defer_exp", defer_gap="busy")) == [0, 1, 2, 3, 4]


def test_with_nothing_to_come_the_best_slot_is_always_filled():
    # all Low: the first slot must be filled (else the day stalls); one hour of Low delay makes
    # waiting for a redraw no cheaper for the others, so they are filled too
    sim = _end_of_day(dict.fromkeys(TYPES, LOW))
    held = deferred_slots(sim.view, "expected")
    assert 0 not in held and len(held) < 5
    assert _decide(sim, "spt_rescue_defer_exp")


def test_the_slot_score_prefers_an_idle_high_slot_to_a_cheap_medium_one():
    # one job, a High 3090 (slots 0, 4), a Medium A4000 (slot 3), the rest Low
    sim = _end_of_day({"RTX 3090": HIGH, "RTX A5000": LOW, "RTX A4500": LOW, "RTX A4000": MEDIUM}, n_waiting=1)
    assert _decide(sim, "spt_rescue_defer_exp", slot_score="rule") == [(0, 3)]  # price term 0.25 > Medium penalty 0.2
    assert _decide(sim, "spt_rescue_defer_exp") == [(0, 0)]  # least expected delay + W̄: 5 + 59.7 s
    assert _decide(sim, "cadr_defer_exp") == [(0, 0)]


@pytest.mark.parametrize("knob,bad", [("defer_gap", "never"), ("slot_score", "cheapest")])
def test_bad_knob_values_are_refused(knob, bad):
    with pytest.raises(ConfigError, match=knob):
        make_policy("spt_rescue_defer_exp", make_params("hectic"), **{knob: bad})


def test_the_published_variant_is_reachable_and_differs():
    old = simulate("spt_rescue_defer_exp", "surge", 3, n_jobs=200, defer_gap="busy", slot_score="rule").jobs
    new = simulate("spt_rescue_defer_exp", "surge", 3, n_jobs=200).jobs
    assert not old.equals(new)
    assert simulate("spt_rescue_defer_exp", "surge", 3, n_jobs=200, slot_score="delay", defer_gap="plan").jobs.equals(
        new
    )
