"""The programme's tables (studies.cgrsp.programme.tables) against totals and scores computed by hand."""

import pandas as pd
import pytest

from studies.cgrsp.programme import tables as T


def _runs() -> pd.DataFrame:
    # three policies, two seeds, hand-made totals
    rows = []
    for pol, wait_min, miss, tard_min, cost in (
        ("p1", 10, 10, 1, 6.0),
        ("p2", 12, 0, 0.5, 6.2),
        ("p3", 20, 50, 20, 6.1),
    ):
        for seed in (0, 1):
            rows.append(
                dict(
                    policy=pol,
                    seed=seed,
                    completed=100,
                    n_jobs=100,
                    mean_wait_min=wait_min,
                    miss_pct=miss,
                    mean_tardiness_min=tard_min,
                    cost_usd=cost,
                )
            )
    return pd.DataFrame(rows)


def test_composite_scores_min_max_by_hand():
    sc = T.composite_scores(_runs(), w_cost=[0.5], ratios=[1.0], basis="miss").set_index("policy")
    # wait totals [s]: p1 60 000, p2 72 000, p3 120 000; misses 10, 0, 50 → QoS 60 010, 72 000, 120 050
    q = {"p1": 60010.0, "p2": 72000.0, "p3": 120050.0}
    nq = {k: (v - 60010.0) / (120050.0 - 60010.0) for k, v in q.items()}
    nc = {"p1": 0.0, "p2": 1.0, "p3": 0.5}
    for p in q:
        assert sc.loc[p, "score"] == pytest.approx(0.5 * nc[p] + 0.5 * nq[p])
    assert sc["rank"].to_dict() == {"p1": 1, "p2": 2, "p3": 3}  # scores 0, 0.600, 0.750


def test_tardiness_rescoring_changes_the_winner():
    df = _runs()
    # QoS = Σwait + r·Σtardiness [s]: r = 1 → p1 66 000 < p2 75 000; r = 50 → p1 360 000 > p2 222 000
    sc = T.composite_scores(df, w_cost=[0.0], ratios=[1.0, 50.0], basis="tardiness")
    best = T.best_policy_grid(sc)
    assert best.loc["0", "α2/α1=1"] == "p1"
    assert best.loc["0", "α2/α1=50"] == "p2"


def test_month_totals_are_job_weighted():
    df = pd.DataFrame(
        [
            dict(
                policy="x",
                rep=0,
                seed=1,
                day="quiet",
                completed=10,
                n_jobs=10,
                mean_wait_min=1.0,
                miss_pct=0.0,
                mean_tardiness_min=0.0,
                cost_usd=1.0,
            ),
            dict(
                policy="x",
                rep=0,
                seed=2,
                day="hectic",
                completed=90,
                n_jobs=90,
                mean_wait_min=11.0,
                miss_pct=10.0,
                mean_tardiness_min=2.0,
                cost_usd=5.0,
            ),
        ]
    )
    m = T.month_totals(df).iloc[0]
    assert m["jobs"] == 100
    assert m["mean_wait_min"] == pytest.approx((10 * 1 + 90 * 11) / 100)
    assert m["miss_pct"] == pytest.approx(9.0)
    assert m["cost_usd"] == pytest.approx(6.0)
