"""``python -m studies reward --part scale``: the shaping term beside the rest of the reward, by hour of the day."""

import pandas as pd
import pytest

from studies.cgrsp.reward import reward_scale as rs


def test_table_groups_steps_by_hour_of_the_day():
    steps = pd.DataFrame({"t_h": [0.1, 0.9, 1.5, 3.2], "shaping": [1.0, 3.0, 5.0, 7.0], "rest": [-1.0, -1.0, 0, 0]})
    t = rs.table(steps)
    assert t.hours.tolist() == ["0-1", "1-2", "3-4"] and t.steps.tolist() == [2, 1, 1]
    assert t.shaping_mean.tolist() == [2.0, 5.0, 7.0] and t.shaping_std.tolist() == [1.0, 0.0, 0.0]
    assert t.rest_mean.tolist() == [-1.0, 0.0, 0.0]


def test_a_design_the_rule_cannot_play_is_refused():
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match="action_mode = 'when': the rule plays the joint design's actions"):
        rs.run("hectic_fresh", ["env.action_mode=when"], 1)
    with pytest.raises(SystemExit):
        rs.main(["--days", "0"])


@pytest.mark.e2e
def test_discounted_backlog_shaping_drifts_with_the_time_of_day(capsys):
    """With γ 0.95 the backlog shaping's (1 − γ)·Φ_b is large early in the day, when many jobs are still
    to be dispatched, and falls as they go; undiscounted it is only the dispatches' refund, far smaller."""
    over = ["env.reward=occupancy", "env.shaping=backlog"]
    drift = rs.run("hectic_fresh", [*over, "env.shaping_gamma=0.95"], 1)
    flat = rs.run("hectic_fresh", [*over, "env.shaping_gamma=1.0"], 1)
    assert drift.shaping_mean.iloc[0] > 10 * drift.shaping_mean.iloc[-1] > 0
    assert drift.shaping_mean.iloc[0] > 10 * flat.shaping_mean.iloc[0] > 0
    assert (drift.steps == flat.steps).all()  # the same days of the rule: the rest of the reward is the same
    pd.testing.assert_series_equal(drift.rest_mean, flat.rest_mean)
    assert (abs(drift.shaping_mean) > 10 * abs(drift.rest_mean)).iloc[0]
    assert rs.main(["--days", "1", "--overrides", *over]) == 0
    assert "hours  steps  shaping_mean" in capsys.readouterr().out
