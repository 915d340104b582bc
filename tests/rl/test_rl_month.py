"""The month protocol: matched days for every policy, job-weighted monthly figures, paired tests."""

import pandas as pd
import pytest

from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_agents.rl.month import (
    month_comparison,
    month_days,
    month_markdown,
    month_runs,
    month_totals,
)
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.evaluation import evaluate
from gpu_sched_env.cgrsp.workload import DEFAULT_MONTH_MIX, month_day_seed


def test_month_days_follow_the_mix_and_the_programmes_seeds():
    plan = month_days([0, 3])
    assert len(plan) == 60
    for _, g in plan.groupby("rep"):
        assert g.day.value_counts().to_dict() == DEFAULT_MONTH_MIX
    assert plan.iloc[31].seed == month_day_seed(3, 1) == 1_003_001


@pytest.mark.e2e
def test_a_heuristic_played_as_the_learned_policy_matches_its_own_rows():
    """EDF through the env on the month days = EDF simulated: the days really are matched."""
    config = CGRSPEnvConfig(window=40, params={"n_jobs": 12})
    runs = month_runs(
        HeuristicAgent("edf"), "agent", config, ["edf", "fifo"], [0, 1], lambda a, c, s: evaluate(a, c, s)
    )
    tot = month_totals(runs).set_index(["policy", "rep"])
    pd.testing.assert_series_equal(tot.loc["agent"].mean_wait_min, tot.loc["edf"].mean_wait_min, check_names=False)
    assert (tot.loc["agent"].jobs == 30 * 12).all()
    table, tests = month_comparison(runs, "agent")
    assert set(table.index) == {"agent", "edf", "fifo"} and table.loc["agent", "reps"] == 2
    edf = tests[(tests.vs == "edf") & (tests.metric == "mean_wait_min")].iloc[0]
    assert edf.mean_diff == pytest.approx(0.0, abs=1e-9)
    fifo = tests[(tests.vs == "fifo") & (tests.metric == "mean_wait_min")].iloc[0]
    assert fifo.mean_diff != 0.0  # a different policy does differ: the comparison can fail
    assert "| fifo |" in month_markdown(table, tests, "agent", "fresh", 2)
