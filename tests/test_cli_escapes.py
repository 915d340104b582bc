"""``gpu-sched`` escapes closed: clear messages, no tracebacks, no silent defaults."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpu_sched_env.cgrsp.workload import WORKLOAD_PARAMS
from gpu_sched_env.cli import main
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.fanout import map_cells


def _fails(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as e:
        main(list(argv))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_compare_with_a_malformed_trace_says_what_is_wrong_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_s\nx,abc\n")
    err = _fails(
        capsys, "compare", "--trace", str(bad), "--seeds", "1", "--policies", "fifo", "--out", str(tmp_path / "o")
    )
    assert "trace: missing column(s) complexity, deadline_s" in err
    assert not (tmp_path / "o").exists()
    bad.write_text("submit_s,complexity,deadline_s\n10,huge,100\n")
    assert "complexity" in _fails(capsys, "compare", "--trace", str(bad), "--seeds", "1", "--out", str(tmp_path / "o"))


def test_the_same_in_a_fresh_process(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_s\nx,abc\n")
    out = subprocess.run(
        [sys.executable, "-m", "gpu_sched_env.cli", "compare", "--trace", str(bad), "--seeds", "1"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr and "missing column(s)" in out.stderr


@pytest.mark.parametrize("n", ["-1", "0"])
def test_workers_below_one_are_refused(capsys, tmp_path, n):
    err = _fails(capsys, "compare", "--workers", n, "--seeds", "1", "--out", str(tmp_path / "o"))
    assert f"--workers {n}: must be at least 1 (leave it out for the default" in err


def test_fanout_refuses_zero_workers():
    with pytest.raises(ConfigError, match=r"workers = 0 is out of range"):
        map_cells(abs, [{"x": 1}, {"x": 2}], executor="process", workers=0)


def test_trace_refuses_a_parameter_that_is_not_a_workload_parameter(capsys, tmp_path):
    err = _fails(capsys, "trace", "--day", "hectic", "--param", "c_max=3", "--out", str(tmp_path / "t.csv"))
    assert "c_max" in err and ", ".join(sorted(WORKLOAD_PARAMS)) in err
    assert not (tmp_path / "t.csv").exists()
    assert main(["trace", "--day", "hectic", "--param", "n_jobs=12", "--out", str(tmp_path / "t.csv")]) == 0


def test_research_commands_and_unknown_names_fail_with_where_to_go(capfd):
    assert main(["reward", "nope"]) == 2  # the research programme is the other door: no child process
    err = capfd.readouterr().err
    assert "'reward' is not a command of gpu-sched; run: python -m studies reward nope" in err
    assert main(["nope"]) == 2
    err = capfd.readouterr().err
    assert "unknown command 'nope'; allowed: compare, trace, evaluate, generate-jobs" in err and "usage:" in err


def test_compare_prints_no_progress_lines_when_not_a_terminal(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_sched_env.cli",
            "compare",
            "--seeds",
            "4",
            "--policies",
            "fifo",
            "edf",
            "--param",
            "n_jobs=20",
            "--executor",
            "serial",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert "it/s" not in out.stderr and "%|" not in out.stderr  # no tqdm bar updates in a log
    assert "fifo" in out.stdout
