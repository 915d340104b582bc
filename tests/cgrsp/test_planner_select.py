"""The planner's selection: screen then confirm on independent futures."""

import math

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp import make_policy
from gpu_sched_agents.heuristics.cgrsp.planner import confirmed, select
from gpu_sched_env.cgrsp.fleet import LOW, MEDIUM
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
from tests.cgrsp.fixtures_tiny import tiny_sim

N_SCREEN, N_CONFIRM, K = 8, 32, 6


def _oracle(means, rng, sd=10.0, common=30.0):
    """Screen and confirm functions over candidates with the given mean costs (CRN: a common term per future)."""
    means = np.asarray(means, float)

    def draw(n, cols):
        return rng.normal(0.0, common, (n, 1)) + means[cols] + rng.normal(0.0, sd, (n, len(cols)))

    return (lambda: draw(N_SCREEN, list(range(len(means))))), (lambda k: draw(N_CONFIRM, [0, k]))


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_equal_candidates_keep_the_base_plan_at_the_stated_error_rate(alpha):
    # 4 000 decisions among 6 equal candidates: the base plan is left at rate <= alpha (+3 SE);
    # a selection that confirmed on the screen's own futures would leave it far more often
    rng = np.random.default_rng(0)
    n = 4000
    left = 0
    for _ in range(n):
        screen, confirm = _oracle([100.0] * K, rng)
        left += select(screen, confirm, 1.0, alpha)[0] != 0
    assert left / n <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)
    # the same test, its confirmation reusing the screen's futures (the winner's curse), fails
    biased = 0
    for _ in range(n):
        c = _oracle([100.0] * K, rng)[0]()
        k = int(np.argmin(c.mean(axis=0)))
        biased += k != 0 and confirmed(c[:, k] - c[:, 0], alpha)
    assert biased / n > alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)


def test_a_clearly_better_candidate_is_found():
    # 15 below the others: 3 standard errors of the screen's paired difference, 6 of the confirmation's
    rng = np.random.default_rng(1)
    found = sum(select(*_oracle([100.0, 100.0, 100.0, 85.0, 100.0, 100.0], rng), 1.0, 0.01)[0] == 3 for _ in range(500))
    assert found / 500 > 0.9


def test_the_planner_holds_low_slots_at_the_end_of_the_day_when_its_base_fills_them():
    # every job has arrived, no slot is busy: two Medium 3090 slots, three Low ones; the published
    # SPT+Rescue fills all five (600-7 200 s Low delays); holding the Low slots is far better
    p = make_params("hectic", n_jobs=5)
    sim = tiny_sim(p, [0.0] * 5, [0] * 5, [1e6] * 5)
    assert sim.advance()
    sim.stock = [MEDIUM, LOW, LOW, LOW]
    pol = make_policy("rollout", p, base_rule="spt_rescue", n_rollouts=4, n_confirm=8, max_candidates=6)
    pol.reset(sim.view, stream(0, "cgrsp/policy"))
    base = pol.candidates(sim.view)[0]
    assert len(base) == 5
    plan = pol.decide(sim.view)
    assert sorted(s for _, s in plan) == [0, 4] and pol.n_deviated == 1


@pytest.mark.parametrize(
    "knob, value",
    [
        ("n_confirm", 1),
        ("n_confirm", 1000),
        ("n_confirm", 8.0),
        ("confirm_horizon_s", -1.0),
        ("error_rate", 0.0),
        ("error_rate", 0.5),
        ("error_rate", float("nan")),
    ],
)
def test_confirmation_knobs_are_validated(knob, value):
    with pytest.raises(ConfigError, match=knob):
        make_policy("rollout", make_params("hectic"), **{knob: value})
