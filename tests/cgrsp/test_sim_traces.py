"""Event traces on tiny hand-built worlds: each policy's ordering and placement rule."""

import math

import pytest

from gpu_sched_agents.heuristics.cgrsp import make_policy
from gpu_sched_env.cgrsp.sim import PolicyStalledError, run
from tests.cgrsp.fixtures_tiny import run_policy, tiny_params, tiny_sim

LOOSE = 1e6  # a deadline nobody misses


def trace(sim):
    return [(j, sim.dispatch[j], sim.job_slot[j], sim.completion[j]) for j in range(sim.n_jobs)]


def test_fifo_first_idle_slot_then_queue():
    # slot 0 fast, slot 1 cheap. Jobs (low) at t = 0, 1, 2.
    # t=0: job0 → slot0 (first idle), done 10. t=1: job1 → slot1, cheap low = 20 s, done 21.
    # t=2: job2 waits; t=10 slot0 frees → job2 on fast, done 20.
    sim = run_policy("fifo", tiny_sim(tiny_params(), [0, 1, 2], [0, 0, 0], [LOOSE] * 3))
    assert trace(sim) == [(0, 0.0, 0, 10.0), (1, 1.0, 1, 21.0), (2, 10.0, 0, 20.0)]
    s = sim.result().summary()
    assert s["completed"] == 3 and s["miss_pct"] == 0.0
    assert s["mean_wait_min"] == pytest.approx((0 + 0 + 8) / 3 / 60)
    assert s["cost_usd"] == pytest.approx(10 * 0.001 + 20 * 0.0004 + 10 * 0.001)


def test_spt_shortest_first_ties_by_deadline():
    # One fast slot. job0 high at t=0 runs 0-30. Waiting at t=30: job1 low loose, job2 medium,
    # job3 low tight (earlier deadline). SPT: low before medium; among lows earliest deadline.
    p = tiny_params(slots=("fast",))
    sim = run_policy("spt", tiny_sim(p, [0, 1, 2, 3], [2, 0, 1, 0], [LOOSE, LOOSE, LOOSE, 500]))
    order = sorted(range(4), key=lambda j: sim.dispatch[j])
    assert order == [0, 3, 1, 2]
    assert [sim.dispatch[j] for j in order] == [0.0, 30.0, 40.0, 50.0]


def test_fifo_vs_edf_order():
    p = tiny_params(slots=("fast",))
    args = ([0, 1, 2], [1, 0, 0], [LOOSE, LOOSE, 100.0])
    fifo = run_policy("fifo", tiny_sim(p, *args))
    edf = run_policy("edf", tiny_sim(p, *args))
    assert fifo.dispatch[1] < fifo.dispatch[2]  # submit order
    assert edf.dispatch[2] < edf.dispatch[1]  # deadline order
    assert edf.completion[2] == 30.0 and edf.completion[2] <= 100.0
    assert fifo.completion[2] == 40.0


@pytest.mark.parametrize(
    "policy, beta, expected_slot",
    [
        # both High: SPT score fast 0.7·1 + 0.3·2.5 = 1.45, cheap 0.7·2 + 0.3·1 = 1.7 → fast
        ("spt", {}, 0),
        # fast Low: +1.0 stock penalty → cheap
        ("spt", {"fast": 0.0}, 1),
        # EDF: highest stock tier first → cheap when fast is Low, else fastest (fast)
        ("edf", {"fast": 0.0}, 1),
        ("edf", {}, 0),
        # LCF: price·W̄·f: fast 0.001·10 = 0.010, cheap 0.0004·20 = 0.008 → cheap
        ("lcf", {}, 1),
        # Balanced: 0.8·W̄/W̄max + 0.2·p/pmax: fast 0.4 + 0.2 = 0.6, cheap 0.8 + 0.08 = 0.88 → fast
        ("balanced", {}, 0),
        # FIFO ignores everything: first idle slot
        ("fifo", {"fast": 0.0}, 0),
    ],
)
def test_slot_rules(policy, beta, expected_slot):
    p = tiny_params(beta=beta)
    sim = run_policy(policy, tiny_sim(p, [0.0], [0], [LOOSE]))
    assert sim.job_slot[0] == expected_slot


def test_cadr_cheapest_feasible_slot_and_fastest_fallback():
    # Feasible on both (d far): cheapest → cheap slot (1).
    sim = run_policy("cadr", tiny_sim(tiny_params(), [0.0], [0], [LOOSE]))
    assert sim.job_slot[0] == 1
    # Deadline 15 s: only fast (10 s) finishes in time → slot 0.
    sim = run_policy("cadr", tiny_sim(tiny_params(), [0.0], [0], [15.0]))
    assert sim.job_slot[0] == 0
    # Deadline 5 s: none feasible → fastest (slot 0).
    sim = run_policy("cadr", tiny_sim(tiny_params(), [0.0], [0], [5.0]))
    assert sim.job_slot[0] == 0
    # cheap slot Low, fast High: Low slots excluded → fast.
    sim = run_policy("cadr", tiny_sim(tiny_params(beta={"cheap": 0.0}), [0.0], [0], [LOOSE]))
    assert sim.job_slot[0] == 0


def test_cadr_oo_uses_spt_placement():
    sim = run_policy("cadr_oo", tiny_sim(tiny_params(), [0.0], [0], [LOOSE]))
    assert sim.job_slot[0] == 0  # SPT score prefers fast


def test_cadr_tiers_at_risk_first_doomed_last():
    # One fast slot busy 0-30 with job0 (high). At t=30 (e = 10 for low jobs):
    # job1 safe (loose), job2 at-risk: d − t = 25 → CR = 2.5 ≤ 3, job3 doomed: d − t = 5 → CR 0.5.
    p = tiny_params(slots=("fast",))
    sim = run_policy("cadr", tiny_sim(p, [0, 1, 2, 3], [2, 0, 0, 0], [LOOSE, LOOSE, 55.0, 35.0]))
    order = sorted(range(1, 4), key=lambda j: sim.dispatch[j])
    assert order == [2, 1, 3]


def test_spt_rescue_urgent_job_jumps_the_queue():
    # One fast slot busy 0-100 (job0, custom W̄ via complexity high=30 → use 3 jobs chained).
    # At t=30: job1 low loose, job2 high with d = 600: L = 600 − 30 − 30 = 540 < θ = 600 → urgent.
    p = tiny_params(slots=("fast",))
    args = ([0, 1, 2], [2, 0, 2], [LOOSE, LOOSE, 600.0])
    rescue = run_policy("spt_rescue", tiny_sim(p, *args))
    spt = run_policy("spt", tiny_sim(p, *args))
    assert rescue.dispatch[2] < rescue.dispatch[1]
    assert spt.dispatch[1] < spt.dispatch[2]
    # with θ = 60 the job is no longer urgent: SPT order again
    calm = run_policy("spt_rescue", tiny_sim(p, *args), theta=60.0)
    assert calm.dispatch[1] < calm.dispatch[2]


def test_adaptive_puts_hopeless_jobs_last():
    # At t=30: job1 loose (safe), job2 low with d = 35: L = 35 − 30 − 10 < 0 → hopeless → last.
    # EDF would run job2 first.
    p = tiny_params(slots=("fast",))
    args = ([0, 1, 2], [2, 0, 0], [LOOSE, LOOSE, 35.0])
    ada = run_policy("adaptive", tiny_sim(p, *args))
    edf = run_policy("edf", tiny_sim(p, *args))
    assert ada.dispatch[1] < ada.dispatch[2]
    assert edf.dispatch[2] < edf.dispatch[1]


def test_random_policy_is_seeded_and_legal():
    p = tiny_params()
    a = run_policy("random", tiny_sim(p, [0, 0, 0, 1], [0, 1, 2, 0], [LOOSE] * 4, seed=3))
    b = run_policy("random", tiny_sim(p, [0, 0, 0, 1], [0, 1, 2, 0], [LOOSE] * 4, seed=3))
    assert trace(a) == trace(b)
    assert all(math.isfinite(c) for c in a.completion)


def _decision_sim(low_delay=1000.0):
    """Two slots: slot 0 busy until t = 10 (job0), slot 1 idle and (forced) Low at t = 1."""
    p = tiny_params(delay_low=(low_delay, low_delay), delay_medium=(50.0, 50.0))
    sim = tiny_sim(p, [0.0, 1.0], [0, 0], [LOOSE, LOOSE])
    assert sim.advance()
    sim.assign(0, 0)  # job0 on fast slot 0 at t = 0 → busy until 10
    assert sim.advance() and sim.t == 1.0 and sim.idle_slots() == [1]
    sim.stock = [0, 2]  # fast High, cheap Low (as if drawn so)
    return sim


def test_rh_defers_a_low_stock_idle_slot_to_the_next_replan():
    # Dispatching job1 now on the Low slot starts it at 1 + 1000 s. Leaving the slot for the
    # re-plan at t_next = min(t_free = 10, t + 1/λ = 2) = 2 with the stock model's expected
    # delay for 'cheap' (β = 1 → High, 0 s) starts it at 2 s. RH defers; with 'never' it commits.
    for mode, expect in (("expected", []), ("low", []), ("never", [(1, 1)])):
        sim = _decision_sim()
        pol = make_policy("rh", sim.params, rh_defer=mode)
        pol.reset(sim.view)
        assert pol.decide(sim.view) == expect, mode


def test_rh_commits_when_dispatching_now_is_better():
    sim = _decision_sim(low_delay=0.0)  # Low costs nothing here → commit now
    pol = make_policy("rh", sim.params)
    pol.reset(sim.view)
    assert pol.decide(sim.view) == [(1, 1)]


def test_a_policy_that_never_dispatches_is_reported_not_hung():
    class Idle:
        name = "idle"

        def decide(self, sim):
            return []

    sim = tiny_sim(tiny_params(), [0.0], [0], [LOOSE])
    with pytest.raises(PolicyStalledError, match="idle"):
        run(sim, Idle())


def test_illegal_assignments_raise():
    from gpu_sched_env.core.errors import InvalidActionError

    sim = tiny_sim(tiny_params(), [0.0, 5.0], [0, 0], [LOOSE, LOOSE])
    assert sim.advance()
    with pytest.raises(InvalidActionError, match="not waiting"):
        sim.assign(1, 0)  # job 1 has not arrived
    sim.assign(0, 0)
    assert sim.advance()
    with pytest.raises(InvalidActionError, match="not idle"):
        sim.assign(1, 0)


def test_edf_defer_low_leaves_a_low_slot_idle_while_another_is_busy():
    # slot 0 fast (High), slot 1 cheap (Low): job0 at t=0 takes slot 0 (EDF: best tier);
    # job1 at t=1 finds only the Low slot idle while slot 0 is busy → it waits for t=10.
    p = tiny_params(beta={"cheap": 0.0}, delay_low=(1000.0, 1000.0))
    sim = run_policy("edf_defer_low", tiny_sim(p, [0.0, 1.0], [0, 0], [LOOSE, LOOSE]))
    assert trace(sim) == [(0, 0.0, 0, 10.0), (1, 10.0, 0, 20.0)]
    edf = run_policy("edf", tiny_sim(p, [0.0, 1.0], [0, 0], [LOOSE, LOOSE]))
    assert edf.job_slot[1] == 1 and edf.completion[1] == 1.0 + 1000.0 + 20.0
    # with every slot idle it does dispatch to a Low slot (nothing else would wake it)
    only = run_policy(
        "edf_defer_low", tiny_sim(tiny_params(slots=("cheap",), beta={"cheap": 0.0}), [0.0], [0], [LOOSE])
    )
    assert only.job_slot[0] == 0


def test_extension_policies_are_usable_by_name_but_not_in_the_published_tables():
    from gpu_sched_agents.heuristics.cgrsp import ALL_POLICY_NAMES, POLICY_NAMES
    from gpu_sched_env.cgrsp import POLICY_NAMES as PUBLISHED
    from gpu_sched_env.cgrsp import simulate

    assert "edf_defer_low" in ALL_POLICY_NAMES and "edf_defer_low" not in POLICY_NAMES
    assert tuple(PUBLISHED) == tuple(POLICY_NAMES)
    assert simulate("edf_defer_low", "surge", 0, n_jobs=100).summary()["completed"] == 100
