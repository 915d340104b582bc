"""The rule studies of studies/cgrsp on tiny budgets: strong-rules, persistence and the planner's cost."""

import pandas as pd
import pytest

from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS, make_policy
from gpu_sched_env.core.errors import ConfigError
from studies.cgrsp import persistence, strong_rules


@pytest.mark.e2e
def test_strong_rules_script_on_one_seed(tmp_path):
    mod = strong_rules
    out = tmp_path / "sr.md"
    assert mod.main(["--seeds", "1", "--out", str(out)]) == 0
    text = out.read_text()
    for name in (*mod.BASES, *EXTENSIONS):
        assert f"| {name} |" in text or f"| **{name}** |" in text
    assert "Strongest rule" in text


@pytest.mark.e2e
def test_persistence_script_on_a_tiny_budget(tmp_path):
    mod = persistence
    stem = tmp_path / "persistence"
    assert (
        mod.main(
            [
                "--rule-seeds",
                "2",
                "--planner-seeds",
                "1",
                "--dwells",
                "fresh",
                "900",
                "--days",
                "surge",
                "--planner-knob",
                "n_rollouts=1",
                "--planner-knob",
                "horizon_s=120.0",
                "--planner-knob",
                "n_confirm=2",
                "--planner-knob",
                "confirm_horizon_s=120.0",
                "--out",
                str(stem),
            ]
        )
        == 0
    )
    df = pd.read_csv(stem.with_suffix(".csv"))
    assert list(df.columns) == mod.COLUMNS
    assert len(df) == 2 * 2 + 1 * 2 and set(df.stock.astype(str)) == {"fresh", "900"}
    assert stem.with_suffix(".png").stat().st_size > 10_000
    # learned points plug in as a policy factory
    extra = mod.policy_points("fifo as learned", lambda p: make_policy("fifo", p), [20000], ["fresh"], ["surge"])
    assert len(extra) == 1 and extra.label.iloc[0] == "fifo as learned"
    with pytest.raises(ConfigError, match="dwell = 'often'"):
        mod.stock_params("often")


def test_planner_cost_on_a_tiny_budget(capsys):
    from studies.cgrsp.planner import cost as mod

    # the normal day: the planner still plans (16 and 10 planned points on seed 20000) in ~0.3 s
    # of CPU, where the surge day took ~23 s; the asserted rows and columns do not depend on the day
    assert (
        mod.main(
            [
                "--seeds",
                "1",
                "--days",
                "normal",
                "--knob",
                "n_rollouts=1",
                "--knob",
                "horizon_s=120.0",
                "--knob",
                "n_confirm=2",
                "--knob",
                "portfolio=[cadr_defer_exp]",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "portfolio=('cadr_defer_exp',)" in out and "ms_per_planned" in out
    assert out.count("rollout ") >= 2 and out.count("spt_rescue_defer_exp") >= 3  # two stock models, rule rows
    with pytest.raises(ConfigError, match="--knob 'n_rollouts'"):
        mod.main(["--knob", "n_rollouts"])
