"""Bad job logs, seeds and output paths of ``gpu-sched trace``, ``compare`` and ``generate-jobs``.

Each is one line naming the option (or the log's row and column), the value and what is
allowed; exit status 2, no traceback, and nothing written: the output checks run before
anything is computed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.trace import EXAMPLE_TRACE, MAX_TIME_S, Trace
from gpu_sched_env.cli import main
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import check_output_dir, check_output_file

ROOT = Path(__file__).resolve().parents[1]
MIG_CONFIG = ROOT / "conf" / "mig" / "test_config.yaml"
# a folder no process can create files in, whoever runs the tests (root included)
UNWRITABLE = "/proc/gpu-sched-test"
needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc refuses new files on Linux")


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _refused(capsys, tmp_path: Path, *argv: str) -> str:
    """The one-line error of ``gpu-sched ARGV``; asserts exit status 2 and that nothing was written."""
    before = _listing(tmp_path)
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse's error(): usage, then "gpu-sched CMD: error: ..."
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert _listing(tmp_path) == before
    return err.strip().splitlines()[-1]


# ---------------------------------------------------------------- the log's values
def test_a_parquet_log_with_a_null_job_id(tmp_path, capsys):
    log = tmp_path / "ids.parquet"
    cols = {"submit_s": [0.0, 1.0], "complexity": ["low", "low"], "deadline_s": [10.0, 10.0]}
    pq.write_table(pa.table({"job_id": pa.array(["a", None]), **cols}), log)
    line = _refused(capsys, tmp_path, "compare", "--trace", str(log), "--seeds", "1", "--out", str(tmp_path / "o"))
    assert line.endswith("error: trace row 1, column job_id = None: allowed: a non-empty label")
    pq.write_table(pa.table({"job_id": pa.array([7, None]), **cols}), log)  # integer labels with a null
    with pytest.raises(ConfigError, match=r"trace row 1, column job_id = None: allowed: a non-empty label"):
        Trace.load(log, make_params("normal"))


@pytest.mark.parametrize("column", ["submit_s", "deadline_s"])
@pytest.mark.parametrize("value", ["1e20", "1.0000000000000002e9", "inf"])
def test_times_beyond_the_bound_are_refused_not_played_as_zero_waits(tmp_path, capsys, column, value):
    log = tmp_path / "far.csv"
    row = {"submit_s": "0", "complexity": "low", "deadline_s": "3600", column: value}
    if column == "submit_s":
        row["deadline_s"] = value
    pd.DataFrame([row]).to_csv(log, index=False)
    line = _refused(capsys, tmp_path, "compare", "--trace", str(log), "--seeds", "1", "--out", str(tmp_path / "o"))
    assert f"trace row 0 (file line 2), column {column} = '{value}'" in line
    assert "allowed: a finite number of seconds ≥ 0 and ≤ 1e9" in line


def test_the_bound_itself_is_allowed():
    assert MAX_TIME_S == 1e9
    far = pd.DataFrame({"submit_s": [MAX_TIME_S - 100.0], "complexity": ["low"], "deadline_s": [MAX_TIME_S]})
    s = simulate("fifo", "normal", 0, trace=far).summary()
    assert s["completed"] == 1 and s["mean_wait_min"] >= 0
    with pytest.raises(ConfigError, match=r"column deadline_s = 1000000000.0000001: allowed: .*≤ 1e9"):
        simulate("fifo", "normal", 0, trace=far.assign(deadline_s=np.nextafter(MAX_TIME_S, np.inf)))


# ---------------------------------------------------------------- seeds
@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("trace", "--day", "hectic", "--seed", "-1"), "gpu-sched trace: error: --seed -1: allowed: an integer ≥ 0"),
        (("trace", "--month", "-1"), "gpu-sched trace: error: --month -1: allowed: an integer ≥ 0"),
    ],
)
def test_trace_refuses_negative_seeds(tmp_path, capsys, argv, line):
    assert _refused(capsys, tmp_path, *argv, "--out", str(tmp_path / "t.csv")) == line


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("--seed", "-1"), "gpu-sched generate-jobs: --seed -1: allowed: an integer ≥ 0"),
        (("--seeds", "1", "-2"), "gpu-sched generate-jobs: --seeds -2: allowed: an integer ≥ 0"),
        (
            ("--primes", "2", "--first-prime", "-3"),
            "gpu-sched generate-jobs: --first-prime -3: allowed: an integer ≥ 0",
        ),
    ],
)
def test_generate_jobs_refuses_negative_seeds(tmp_path, capsys, argv, line):
    assert _refused(capsys, tmp_path, "generate-jobs", str(MIG_CONFIG), *argv, "-o", str(tmp_path / "j")) == line


# ---------------------------------------------------------------- output paths
@pytest.fixture
def paths(tmp_path):
    """A folder named like a file (x.csv, x.json) and a file (plain)."""
    (tmp_path / "x.csv").mkdir()
    (tmp_path / "x.json").mkdir()
    (tmp_path / "plain").write_text("a file\n")
    return tmp_path


def test_trace_out_paths(paths, capsys):
    def refused(out: str) -> str:
        return _refused(capsys, paths, "trace", "--month", "0", "--out", out)

    assert refused(str(paths / "x.csv")).endswith(f"--out '{paths}/x.csv': is a folder; allowed: a file path")
    assert refused(str(paths / "plain" / "t.csv")).endswith(
        f"--out '{paths}/plain/t.csv': '{paths}/plain' is a file, not a folder; allowed: a path in a writable folder"
    )
    assert refused(str(paths / "t.json")).endswith(
        f"--out '{paths}/t.json': the suffix '.json' is not allowed; allowed: .csv, .parquet"
    )


def test_compare_out_is_a_folder(paths, capsys):
    """compare writes per_seed.csv, summary.csv ... into a subfolder of --out: --out names a folder."""
    log = ("--trace", str(EXAMPLE_TRACE), "--day", "normal", "--seeds", "1", "--policies", "fifo")
    line = _refused(capsys, paths, "compare", *log, "--out", str(paths / "plain"))
    assert line.endswith(f"--out '{paths}/plain': is a file; allowed: a folder")
    (paths / "cmp").mkdir()
    (paths / "cmp" / "trace_example_trace_normal").write_text("a file where the tables' folder goes\n")
    line = _refused(capsys, paths, "compare", *log, "--out", str(paths / "cmp"))
    assert line.endswith(f"--out '{paths}/cmp/trace_example_trace_normal': is a file; allowed: a folder")
    (paths / "cmp" / "trace_example_trace_normal").unlink()
    (paths / "cmp" / "trace_example_trace_normal" / "per_seed.csv").mkdir(parents=True)
    line = _refused(capsys, paths, "compare", *log, "--out", str(paths / "cmp"))
    assert "per_seed.csv' is a folder; allowed: a file there" in line


def test_generate_jobs_out_is_a_file_for_one_set_and_a_folder_for_bulk(paths, capsys):
    cfg = str(MIG_CONFIG)
    line = _refused(capsys, paths, "generate-jobs", cfg, "-o", str(paths / "x.json"))
    assert (
        line
        == f"gpu-sched generate-jobs: -o/--out (a file for one set) '{paths}/x.json': is a folder; allowed: a file path"
    )
    line = _refused(capsys, paths, "generate-jobs", cfg, "--seeds", "1", "2", "-o", str(paths / "plain"))
    assert (
        line == f"gpu-sched generate-jobs: -o/--out (a folder for bulk) '{paths}/plain': is a file; allowed: a folder"
    )
    line = _refused(capsys, paths, "generate-jobs", cfg, "-o", str(paths / "plain" / "j.json"))
    assert line.endswith(f"'{paths}/plain' is a file, not a folder; allowed: a path in a writable folder")
    assert main(["generate-jobs", cfg, "--jobs", "3", "-o", str(paths / "ok.json")]) == 0  # a good one still writes


@needs_proc
@pytest.mark.parametrize(
    "argv",
    [
        ("trace", "--day", "quiet", "--out", f"{UNWRITABLE}.csv"),
        ("compare", "--seeds", "1", "--policies", "fifo", "--out", UNWRITABLE),
        ("generate-jobs", str(MIG_CONFIG), "-o", f"{UNWRITABLE}.json"),
        ("generate-jobs", str(MIG_CONFIG), "--seeds", "1", "-o", UNWRITABLE),
    ],
)
def test_unwritable_out_paths(tmp_path, capsys, argv):
    line = _refused(capsys, tmp_path, *argv)
    assert "cannot write in '/proc' (" in line and line.endswith("allowed: a path in a writable folder")
    assert not any(Path("/proc").glob(".write-check-*"))


def test_the_checkers_leave_nothing_behind_and_accept_new_folders(tmp_path):
    out = tmp_path / "new" / "deeper" / "t.csv"
    assert check_output_file("--out", out, (".csv",)) == out
    assert check_output_dir("--out", tmp_path / "new" / "dir", ["a.csv"]) == tmp_path / "new" / "dir"
    assert os.listdir(tmp_path) == []  # no folder made, no probe left
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match=r"--out '.*dangling/t.csv': '.*dangling' is a broken link"):
        check_output_file("--out", link / "t.csv")
