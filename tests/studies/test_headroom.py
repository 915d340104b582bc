"""`gpu-sched diagnose headroom`: the planner against the strongest rule, paired, appended and resumed."""

import pandas as pd
import pytest

from gpu_sched_env.core.errors import ConfigError
from studies.diagnose import DIAGNOSTICS, headroom


def test_budgets_parse_lists_and_name_their_rows():
    b = headroom.parse_budget("n_rollouts=16,max_candidates=8,portfolio=[cadr_defer_exp,spt_defer_exp],confidence_z=1.5")
    assert b == {"n_rollouts": 16, "max_candidates": 8, "portfolio": ("cadr_defer_exp", "spt_defer_exp"), "confidence_z": 1.5}
    assert headroom.budget_label(b) == "rollout confidence_z=1.5,max_candidates=8,n_rollouts=16,portfolio=[cadr_defer_exp,spt_defer_exp]"
    with pytest.raises(ConfigError, match="--budget 'n_rollouts': expected NAME=VALUE with NAME one of base_rule, n_rollouts"):
        headroom.parse_budget("n_rollouts")
    with pytest.raises(ConfigError, match="names no knob"):
        headroom.parse_budget(",")


def test_bad_knob_is_refused_before_anything_runs(tmp_path):
    out = tmp_path / "h.csv"
    with pytest.raises(ConfigError, match="portfolio = 'fifo'"):
        headroom.run("surge", ["fresh"], range(20000, 20001), [{"portfolio": ("fifo",)}], out, workers=1, progress=False)
    assert not out.exists()


def test_rows_are_paired_appended_and_resumed(tmp_path, capsys):
    out = tmp_path / "h.csv"
    argv = ["--day", "surge", "--stock", "fresh", "900", "--seeds", "2", "--workers", "1", "--no-progress",
            "--budget", "n_rollouts=1,horizon_s=120.0", "--out", str(out)]
    png = tmp_path / "h.png"
    assert headroom.main([*argv, "--png", str(png)]) == 0
    assert png.stat().st_size > 10_000
    df = pd.read_csv(out, dtype={"stock": str})
    assert list(df.columns) == headroom.COLUMNS and len(df) == 2 * 2 * 2
    assert set(df.policy) == {"spt_rescue_defer_exp", "rollout"} and (df.wall_s > 0).all()
    s = headroom.summary(df)
    rows = s[s.label != headroom.RULE]
    assert len(rows) == 2 and (rows.paired_n == 2).all()
    assert rows.mean_wait_min_t_p.between(0, 1).all() and rows.mean_wait_min_ci.notna().all()
    # the paired difference is the planner's mean wait minus the rule's on the same days
    for stock, r in rows.set_index("stock").iterrows():
        rule = s[(s.label == headroom.RULE) & (s.stock == stock)].mean_wait_min.item()
        assert r.mean_wait_min_diff == pytest.approx(r.mean_wait_min - rule)
    # a rerun resumes: nothing is run twice; one more seed adds only its days
    before = out.read_text()
    assert headroom.main(argv) == 0 and out.read_text() == before
    assert headroom.main([*argv, "--seeds", "3"]) == 0  # the last --seeds counts
    assert len(pd.read_csv(out)) == 3 * 2 * 2 and out.read_text().startswith(before)
    assert "mean_wait_min_diff" in capsys.readouterr().out
    # --no-run summarises the file as it is
    before = out.read_text()
    assert headroom.main(["--no-run", "--out", str(out), "--png", str(png)]) == 0
    assert out.read_text() == before and "rollout horizon_s=120.0,n_rollouts=1" in capsys.readouterr().out
    assert headroom.main(["--no-run", "--out", str(tmp_path / "none.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_foreign_csv_is_not_appended_to(tmp_path):
    out = tmp_path / "h.csv"
    out.write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match="not a headroom CSV"):
        headroom.done_keys(out)
    assert "headroom" in DIAGNOSTICS
