"""Invariants on random days, reproducibility and common random numbers."""

import numpy as np
import pandas as pd
import pytest

from gpu_sched_env.cgrsp import POLICY_NAMES, simulate
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.workload import generate

# a loaded day that stays quick: surge-rate arrivals, 200 jobs
SMALL = dict(n_jobs=200)


@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("day,seed", [("surge", 1), ("hectic", 2), ("normal", 3)])
def test_invariants(policy, day, seed):
    res = simulate(policy, day=day, seed=seed, **(SMALL if day != "normal" else {}))
    j = res.jobs
    s = res.summary()
    # every job completes exactly once, in order of its own timeline
    assert s["completed"] == s["n_jobs"] == len(j)
    assert np.isfinite(j.completion).all()
    assert (j.dispatch >= j.submit).all()
    assert (j.start >= j.dispatch).all()
    assert np.allclose(j.completion, j.start + j.runtime)
    # no slot runs two jobs at once (slot occupied dispatch → completion)
    for _, g in j.sort_values("dispatch").groupby("slot"):
        assert (g.dispatch.to_numpy()[1:] >= g.completion.to_numpy()[:-1] - 1e-9).all()
    # provisioning delays within the configured ranges of the recorded stock level
    p = res.params
    bounds = {"High": p.delay_high, "Medium": p.delay_medium, "Low": p.delay_low}
    for lvl, (lo, hi) in bounds.items():
        d = j.provisioning_delay[j.stock_at_dispatch == lvl]
        assert ((d >= lo) & (d <= hi)).all()
    # costs add up: per-job cost = run time × price of the slot's type, total = summary
    price = {g.name: g.price_per_h / 3600 for g in p.gpu_types}
    assert np.allclose(j.cost, j.runtime * j.gpu_type.map(price))
    assert s["cost_usd"] == pytest.approx(j.cost.sum())
    # metrics agree with the records
    assert s["miss_pct"] == pytest.approx(100 * (~j.met).mean())
    assert s["mean_wait_min"] == pytest.approx(j.wait.mean() / 60)
    assert s["mean_tardiness_min"] == pytest.approx(j.tardiness.mean() / 60)
    assert j.tight.any() and (~j.tight).any()  # every fixture day has both kinds
    assert s["tight_miss_pct"] == pytest.approx(100 * (~j.met[j.tight]).mean())
    assert s["loose_miss_pct"] == pytest.approx(100 * (~j.met[~j.tight]).mean())


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_same_seed_same_records(policy):
    a = simulate(policy, "surge", 7, **SMALL).jobs
    b = simulate(policy, "surge", 7, **SMALL).jobs
    pd.testing.assert_frame_equal(a, b)


def test_different_seeds_differ():
    a = simulate("fifo", "surge", 1, **SMALL).jobs
    b = simulate("fifo", "surge", 2, **SMALL).jobs
    assert not np.allclose(a.submit, b.submit)


def test_policies_see_identical_job_streams():
    cols = ["job_id", "submit", "deadline", "complexity", "tight"]
    ref = simulate("fifo", "hectic", 5, **SMALL).jobs[cols]
    for pol in POLICY_NAMES[1:]:
        pd.testing.assert_frame_equal(simulate(pol, "hectic", 5, **SMALL).jobs[cols], ref)


def test_run_times_are_common_random_numbers():
    p = make_params("hectic", n_jobs=300)
    w1, w2 = generate(p, 11), generate(p, 11)
    assert np.array_equal(w1.runtime, w2.runtime)
    # a different tight fraction keeps arrivals, complexity and run times, and only adds tight jobs
    w3 = generate(make_params("hectic", n_jobs=300, tight_fraction=0.5), 11)
    assert np.array_equal(w1.submit, w3.submit) and np.array_equal(w1.runtime, w3.runtime)
    assert (w3.tight | ~w1.tight).all() and w3.tight.sum() > w1.tight.sum()


def test_workload_statistics():
    p = make_params("hectic", n_jobs=20000, arrival_rate=0.1)
    w = generate(p, 0)
    gaps = np.diff(np.concatenate([[0.0], w.submit]))
    assert gaps.mean() == pytest.approx(10.0, rel=0.03)
    assert np.bincount(w.complexity, minlength=3) / w.n_jobs == pytest.approx([0.4, 0.4, 0.2], abs=0.015)
    assert w.tight.mean() == pytest.approx(0.2, abs=0.01)
    # log-normal with mean exactly W̄: sample mean of run time / W̄ ≈ 1, log-sd ≈ σ
    wbar = np.array([g.mean_runtime_s for g in p.gpu_types]).T[w.complexity]
    ratio = w.runtime / wbar
    assert ratio.mean() == pytest.approx(1.0, abs=0.005)
    assert np.log(ratio).std() == pytest.approx(0.11, rel=0.03)
    assert np.allclose(w.deadline - w.submit, np.where(w.tight, 3600.0, 28800.0))


def test_default_fleet_round_robin():
    assert make_params("hectic").resolved_slot_types() == (
        "RTX 3090",
        "RTX A5000",
        "RTX A4500",
        "RTX A4000",
        "RTX 3090",
    )
    assert make_params("hectic", c_max=7).resolved_slot_types()[5:] == ("RTX A5000", "RTX A4500")


def test_stock_model_probabilities():
    from gpu_sched_env.cgrsp.fleet import Fleet

    fl = Fleet.from_params(make_params("hectic"))
    # t = 0 is 05:00 UTC (band ×1.0); t = 5 h is 10:00 UTC (band ×0.5)
    assert fl.band(0.0) == 0 and fl.band(5 * 3600.0) == 2 and fl.band(14 * 3600.0) == 3
    i3090 = fl.type_names.index("RTX 3090")
    assert fl.p_high[2][i3090] == pytest.approx(0.25)
    assert fl.p_high_medium[2][i3090] == pytest.approx(0.25 + 0.375)
    assert fl.p_high[3][i3090] == pytest.approx(0.65)  # 0.5 × 1.3
    assert fl.p_high_medium[3][i3090] == pytest.approx(0.65 + 0.90)  # p_M capped at 0.90: no Low
    # empirical frequencies of the draw match
    rng = np.random.default_rng(0)
    levels = np.array([fl.stock_levels(5 * 3600.0, list(rng.random(4)))[i3090] for _ in range(20000)])
    assert np.bincount(levels, minlength=3) / levels.size == pytest.approx([0.25, 0.375, 0.375], abs=0.015)


def test_expected_delay_uses_the_realised_level_probabilities():
    # where p_H + p_M > 1 the draw never reaches Low: p_M is what is left above p_H (a
    # formula with the uncapped sum gave RH's planner negative delays, so busy slots looked
    # as if they started in the past and every job was planned onto them)
    from gpu_sched_env.cgrsp.fleet import Fleet

    fl = Fleet.from_params(make_params("hectic"))
    i3090 = fl.type_names.index("RTX 3090")
    assert fl.level_probs(3, i3090) == pytest.approx((0.65, 0.35, 0.0))
    assert fl.expected_delay(3, i3090) == pytest.approx(0.65 * 5.0 + 0.35 * 75.0)
    assert fl.expected_delay(2, i3090) == pytest.approx(0.25 * 5.0 + 0.375 * 75.0 + 0.375 * 3900.0)
    for b in range(len(fl.band_starts)):
        for g in range(fl.n_types):
            probs = fl.level_probs(b, g)
            assert min(probs) >= 0.0 and sum(probs) == pytest.approx(1.0)
            assert min(fl.delay_mean) <= fl.expected_delay(b, g) <= max(fl.delay_mean)
