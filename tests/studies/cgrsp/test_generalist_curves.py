"""generalist-curves: the selection tables of generalist folders read, as ratios to the rule, and drawn."""

import re

import pandas as pd
import pytest

from studies.cgrsp.learning.generalist_curves import main, parse_from, ratios, read_curves


def write_folder(root, waits, rule=2.0, regimes=("hectic_fresh", "surge_fresh")):
    """A generalist output folder: two seeds' selection tables, the learned waits ``waits`` per evaluation."""
    run = root / "generalist_b1000_sel250"
    run.mkdir(parents=True)
    for seed in (0, 1):
        rows = []
        for i, w in enumerate(waits):
            row = {"steps": 250 * (i + 1), "picked": i == len(waits) - 1}
            for r in regimes:
                row |= {f"{r}_wait": w + seed, f"{r}_miss": 0.0, f"{r}_rule_wait": rule, f"{r}_rule_miss": 0.0}
            rows.append(row)
        pd.DataFrame(rows).to_csv(run / f"seed{seed}_select.csv", index=False)
    return root


def test_ratios_are_each_regimes_learned_over_rule_wait(tmp_path):
    folder = write_folder(tmp_path / "a", [4.0, 3.0, 2.2])
    t = ratios(read_curves(folder))
    assert list(t.columns) == ["steps", "seed", "run", "picked", "hectic_fresh", "surge_fresh"]
    assert t[t.seed == 0].hectic_fresh.tolist() == pytest.approx([2.0, 1.5, 1.1])
    assert t[t.seed == 1].surge_fresh.tolist() == pytest.approx([2.5, 2.0, 1.6])


def test_the_command_draws_the_folders_and_prints_the_last_evaluation(tmp_path, capsys):
    a, b = write_folder(tmp_path / "a", [4.0, 2.2]), write_folder(tmp_path / "b", [3.0, 2.0])
    out = tmp_path / "fig" / "curves.png"
    assert main(["--from", f"{a}=global", f"{b}=regime", "--out", str(out)]) == 0
    assert out.stat().st_size > 10_000  # a drawn PNG
    text = capsys.readouterr().out
    assert "global: last evaluation (steps 500)" in text and "regime: last evaluation" in text
    assert "1.100" in text  # seed 0 of global, 2.2 / 2.0


def test_bad_arguments_are_refused(tmp_path, capsys):
    a = write_folder(tmp_path / "a", [4.0])
    c = write_folder(tmp_path / "c", [4.0], regimes=("hectic_D900",))
    with pytest.raises(ValueError, match=r"label 'x' is given twice"):
        parse_from([f"{a}=x", f"{c}=x"])
    cases = [
        (["--from", str(tmp_path / "none"), "--out", "f.png"], r"no generalist_b\*_sel\*/seed\*_select.csv"),
        (["--from", str(a), "--out", "f.pdf"], r"--out = f.pdf: give a .png path"),
        (["--from", str(a), "--out", "f.png", "--ymax", "1"], r"--ymax = 1.0: allowed > 1"),
        (["--from", str(a), str(c), "--out", "f.png"], r"the folders judge different regimes"),
    ]
    for argv, match in cases:
        with pytest.raises(SystemExit):
            main(argv)
        assert re.search(match, capsys.readouterr().err), argv
