"""The experiments CLI: one command per experiment, tidy Parquet, Markdown and figures."""

import pandas as pd
import pytest

from studies.cgrsp.programme.cli import main

FAST = ["--param", "n_jobs=25", "--executor", "serial", "--no-progress"]


def test_sweep_command_writes_results_report_and_figure(tmp_path, capsys):
    assert (
        main(
            ["cmax", "--policies", "fifo", "edf", "--seeds", "0-2", "--values", "3", "5", "--out", str(tmp_path), *FAST]
        )
        == 0
    )
    d = tmp_path / "cmax"
    df = pd.read_parquet(d / "results.parquet")
    assert len(df) == 2 * 3 * 2
    assert {"experiment", "cell", "c_max", "policy", "seed", "miss_pct", "mean_wait_min", "key"} <= set(df.columns)
    assert sorted(df["c_max"].unique()) == [3, 5]
    md = (d / "report.md").read_text()
    assert "python -m studies experiments cmax" in md and "c_max=3" in md and "cmax_lines.png" in md
    assert (d / "cmax_lines.png").stat().st_size > 5_000
    assert "12 cells (12 simulated now" in capsys.readouterr().out
    main(["cmax", "--policies", "fifo", "edf", "--seeds", "0-2", "--values", "3", "5", "--out", str(tmp_path), *FAST])
    assert "12 cells (0 simulated now, 12 from the store)" in capsys.readouterr().out


@pytest.mark.e2e
def test_validation_report_has_tests_and_contract(tmp_path):
    main(["validation", "--policies", "fifo", "rh", "--seeds", "0-2", "--out", str(tmp_path), *FAST])
    md = (tmp_path / "validation" / "report.md").read_text()
    assert "Holm" in md and "Cohen" in md and "rh − fifo" in md
    tests = pd.read_csv(tmp_path / "validation" / "validation_tests.csv")
    assert len(tests) == 2 and set(tests["metric"]) == {"miss_pct", "mean_wait_min"}


def test_bad_arguments_exit_with_a_message(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["rho", "--param", "c_max=2", "--out", str(tmp_path)])
    assert "rho_res" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["validation", "--seeds", "a-b", "--out", str(tmp_path)])


@pytest.mark.slow
def test_all_writes_every_report_timing_and_results_page(tmp_path):
    docs = tmp_path / "docs"
    args = [
        "all",
        "--policies",
        "fifo",
        "rh",
        "--seeds",
        "0-1",
        "--out",
        str(tmp_path / "runs"),
        "--docs",
        str(docs),
        *FAST,
    ]
    assert main(args) == 0
    page = (docs / "results.md").read_text()
    for name in ("single", "validation", "daytype", "tight", "cmax", "theta", "crstar", "rho", "objective", "month"):
        assert (tmp_path / "runs" / name / "results.parquet").is_file()
    assert "Run time of the programme" in page and "Calibration and departures" in page
    timing = pd.read_csv(tmp_path / "runs" / "timing.csv")
    assert timing["experiment"].iloc[-1] == "TOTAL"
    figs = list((docs / "figures").glob("*.png"))
    assert len(figs) >= 10
    assert all(f"figures/{f.name}" in page for f in figs)
