import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from gpu_sched_agents.rl.compare import TEST_METRICS, comparison


def _frame(rng, pol, seeds):
    n = len(seeds)
    return pd.DataFrame(
        {
            "policy": pol,
            "seed": seeds,
            "mean_wait_min": rng.normal(100, 20, n),
            "miss_pct": rng.normal(10, 3, n),
            "mean_tardiness_min": rng.normal(5, 1, n),
            "cost_usd": rng.normal(6, 0.5, n),
        }
    )


def test_comparison_pairs_matched_seeds_and_adjusts_over_the_family():
    rng = np.random.default_rng(5)
    learned = _frame(rng, "x", list(range(10)))
    heur = pd.concat([_frame(rng, "fifo", list(range(10))), _frame(rng, "rh", list(range(2, 12)))], ignore_index=True)
    table, tests = comparison(learned, heur, "ppo")
    assert list(table.index) == ["ppo", "fifo", "rh"]
    assert list(tests[["vs", "metric"]].itertuples(index=False, name=None)) == [
        (h, m) for h in ("fifo", "rh") for m in TEST_METRICS
    ]
    ref = learned.set_index("seed")
    t_ps = []
    for r in tests.itertuples():
        g = heur[heur.policy == r.vs].set_index("seed")
        common = ref.index.intersection(g.index)  # rh: seeds 2..9 only
        a, b = ref.loc[common, r.metric].to_numpy(), g.loc[common, r.metric].to_numpy()
        assert r.n == len(common) == (10 if r.vs == "fifo" else 8)
        assert r.mean_diff == pytest.approx((a - b).mean())
        assert r.t_p == pytest.approx(stats.ttest_rel(a, b).pvalue)
        assert r.wilcoxon_p == pytest.approx(stats.wilcoxon(a, b).pvalue)
        t_ps.append(r.t_p)
    assert tests.t_p_holm.to_numpy() == pytest.approx(multipletests(t_ps, method="holm")[1])
    assert (tests.better == ((tests.mean_diff < 0) & (tests.t_p < 0.05))).all()
    assert comparison(learned, heur.iloc[:0], "ppo")[1].empty


def test_the_heuristics_days_are_stored_and_served_equal_to_fresh_ones(tmp_path, monkeypatch):
    """train.py's heuristic rows come from the user's cache on a rerun: equal to a fresh simulation, same order."""
    import pandas as pd

    from gpu_sched_agents.rl import compare
    from gpu_sched_env.cgrsp.batch import run_grid
    from gpu_sched_env.core.store import REFERENCE_CACHE

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(REFERENCE_CACHE, raising=False)  # tests/conftest.py turns the stores off
    names, seeds, params = ["spt", "cadr_defer_exp"], [20002, 20000, 20001], {"stock_process": "fresh"}
    fresh = run_grid(names, seeds, day="quiet", params=params, executor="serial")
    part = compare.heuristic_runs(names, seeds[:1], "quiet", params)
    calls = []
    monkeypatch.setattr(compare, "run_grid", lambda n, s, **kw: calls.append(list(s)) or run_grid(n, s, **kw))
    whole = compare.heuristic_runs(names, seeds, "quiet", params)
    assert calls == [seeds[1:]] and len(part) == 2
    again = compare.heuristic_runs(names, seeds, "quiet", params)
    assert calls == [seeds[1:]]  # nothing simulated
    for got in (whole, again):
        pd.testing.assert_frame_equal(got[fresh.columns], fresh, check_dtype=False)
    compare.heuristic_runs(names, seeds, "quiet", {"stock_process": "markov", "stock_dwell_s": 900.0})
    assert calls[-1] == seeds  # other parameters: other cells
