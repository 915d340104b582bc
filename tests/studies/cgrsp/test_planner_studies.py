"""`python -m studies strong-rules --part rule-fix` and `planner-calibration` on tiny budgets."""

import pandas as pd

from studies.cgrsp import rule_fix
from studies.cgrsp.planner import calibration


def test_rule_fix_table_pairs_every_variant_with_the_published_rule():
    df = rule_fix.measure(["surge"], ["fresh"], range(20000, 20003), n_jobs=150)
    assert len(df) == 4 * 3 and set(df.variant) == set(rule_fix.VARIANTS)
    text = rule_fix.markdown(df)
    assert "| surge | fresh | published | 3 |" in text and text.count("\n") == 2 + 4
    pub = df[df.variant == "published"].mean_wait_min.mean()
    both = df[df.variant == "both (the rule now)"].mean_wait_min.mean()
    assert f"{both - pub:+.3f}" in text


def test_calibration_compares_screen_and_full_day_differences(tmp_path, capsys):
    stem = tmp_path / "cal"
    assert (
        calibration.main(
            [
                "--stock",
                "fresh",
                "--seeds",
                "1",
                "--points",
                "1",
                "--futures",
                "2",
                "--horizons",
                "120",
                "--out",
                str(stem),
            ]
        )
        == 0
    )
    df = pd.read_csv(stem.with_suffix(".csv"))
    assert len(df) >= 1 and set(df.horizon_s) == {120.0} and df.d_full.notna().all()
    assert stem.with_suffix(".png").exists() and "| fresh | 120 |" in capsys.readouterr().out
    assert calibration.main(["--futures", "1", "--out", str(stem)]) == 2
