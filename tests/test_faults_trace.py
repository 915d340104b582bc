"""A job log is read once per command, and a file replaced during a run changes nothing in it.

``compare --trace`` (and ``run_grid(trace=PATH)``) reads the file once, before the first day,
and every policy × seed, worker processes included, plays those parsed jobs: the tests count
the opens in-process, replace the file while cells are still to run (serially in-process, and
on real worker processes in a fresh interpreter), and check that the recorded SHA-256 is the
one of the bytes played.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gpu_sched_env.cgrsp import batch, simulate
from gpu_sched_env.cgrsp import trace as trace_mod
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.trace import EXAMPLE_TRACE, Trace, day_trace, write_trace
from gpu_sched_env.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHA = hashlib.sha256(EXAMPLE_TRACE.read_bytes()).hexdigest()


def _small(path: Path) -> Path:
    """A different, valid log: 10 jobs of a quiet day (what a replaced file holds)."""
    tmp = path.with_name("replacement.csv")
    write_trace(day_trace("quiet", 0, n_jobs=10), tmp)
    return tmp


def _compare(log: Path, out: Path, *extra: str) -> int:
    argv = ["compare", "--trace", str(log), "--day", "normal", "--seeds", "3", "--policies", "fifo", "edf"]
    return main([*argv, "--no-progress", "--out", str(out), *extra])


@pytest.fixture
def log(tmp_path):
    return Path(shutil.copy(EXAMPLE_TRACE, tmp_path / "live.csv"))


@pytest.fixture
def opens(monkeypatch):
    """Every open of a trace file, by path."""
    seen: list[str] = []
    real = trace_mod._open_file

    def counting(path):
        seen.append(str(path))
        return real(path)

    monkeypatch.setattr(trace_mod, "_open_file", counting)
    return seen


def test_compare_opens_the_log_once_for_every_policy_and_seed(log, tmp_path, opens):
    assert _compare(log, tmp_path / "out", "--executor", "serial") == 0
    assert opens == [str(log)]  # six days played, one read


def test_a_log_replaced_after_the_first_day_changes_nothing(log, tmp_path, monkeypatch, capsys):
    replacement = _small(log)
    real, played = batch.run_cell, []

    def run_then_replace(**cell):
        played.append(cell["trace"])
        row = real(**cell)
        if replacement.exists():  # after the first day only
            os.replace(replacement, log)
        return row

    monkeypatch.setattr(batch, "run_cell", run_then_replace)
    assert _compare(log, tmp_path / "out", "--executor", "serial") == 0
    per_seed = pd.read_csv(tmp_path / "out" / "trace_live_normal" / "per_seed.csv")
    assert len(per_seed) == 6 and set(per_seed["n_jobs"]) == {100}  # the replacement has 10 jobs
    assert all(t is played[0] for t in played)  # one parse, handed to every cell
    assert f"100 jobs, sha256 {SHA}" in capsys.readouterr().out
    recorded = json.loads((tmp_path / "out" / "trace_live_normal" / "trace.json").read_text())
    assert recorded == {"trace": str(log), "sha256": SHA, "rows": 100}
    assert hashlib.sha256(log.read_bytes()).hexdigest() != SHA  # the file did change under the run


def test_worker_processes_play_the_log_as_read_not_the_replaced_file(log, tmp_path, monkeypatch):
    """Two real worker processes; the log is replaced as soon as the first day's result is back."""
    from gpu_sched_env.core import fanout

    replacement = _small(log)
    real = fanout.iter_cells

    def replace_after_the_first(*args, **kwargs):
        for i, item in enumerate(real(*args, **kwargs)):
            yield item
            if i == 0:  # the other days are queued or running in the workers, which import afresh
                os.replace(replacement, log)

    monkeypatch.setattr(fanout, "iter_cells", replace_after_the_first)
    assert _compare(log, tmp_path / "out", "--executor", "process", "--workers", "2") == 0
    assert not replacement.exists()
    _played_the_log_as_read(tmp_path / "out")


def _played_the_log_as_read(out: Path) -> None:
    per_seed = pd.read_csv(out / "trace_live_normal" / "per_seed.csv")
    assert len(per_seed) == 6 and set(per_seed["n_jobs"]) == {100}  # the replacement has 10 jobs
    assert json.loads((out / "trace_live_normal" / "trace.json").read_text())["sha256"] == SHA
    for r in per_seed.itertuples():  # the log's own numbers, day by day
        assert r.mean_wait_min == simulate(r.policy, "normal", r.seed, trace=EXAMPLE_TRACE).summary()["mean_wait_min"]


# The command in a fresh interpreter, as a user runs it, on two worker processes: the log is
# replaced as soon as the first day's result is back.
CHILD = r"""
import os, sys
from gpu_sched_env.core import fanout
from gpu_sched_env.cli import main

log, replacement, out = sys.argv[1:4]
real = fanout.iter_cells

def replace_after_the_first(*args, **kwargs):
    for i, item in enumerate(real(*args, **kwargs)):
        yield item
        if i == 0:
            os.replace(replacement, log)
            print("replaced", flush=True)

fanout.iter_cells = replace_after_the_first
argv = ["compare", "--trace", log, "--day", "normal", "--seeds", "3", "--policies", "fifo", "edf"]
sys.exit(main([*argv, "--executor", "process", "--workers", "2", "--no-progress", "--out", out]))
"""


@pytest.mark.e2e
def test_the_command_in_a_fresh_process_plays_the_log_as_read(log, tmp_path):
    replacement = _small(log)
    res = subprocess.run(
        [sys.executable, "-c", CHILD, str(log), str(replacement), str(tmp_path / "out")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "replaced" in res.stdout and not replacement.exists()
    _played_the_log_as_read(tmp_path / "out")


def test_the_hash_is_of_the_bytes_parsed_even_if_the_file_is_replaced_after_the_open(log, monkeypatch):
    replacement = _small(log)
    real = trace_mod._open_file

    def open_then_replace(path):
        f = real(path)
        if replacement.exists():  # the first load only: the open handle still reads the file as it was
            os.replace(replacement, path)
        return f

    monkeypatch.setattr(trace_mod, "_open_file", open_then_replace)
    t = Trace.load(log, make_params("normal"))
    assert t.n_jobs == 100 and t.sha256 == SHA and t.source == str(log)
    assert Trace.load(log, make_params("normal")).n_jobs == 10  # a later load reads what is there now


def test_run_grid_reads_a_path_once_and_a_trace_pickles_with_its_jobs(log, opens):
    df = batch.run_grid(["fifo", "spt"], range(2), day="normal", trace=log, executor="serial", progress=False)
    assert len(df) == 4 and opens == [str(log)]
    t = Trace.load(log, make_params("normal"))
    log.unlink()
    back = pickle.loads(pickle.dumps(t))  # what a worker gets: the arrays, not the path
    pd.testing.assert_frame_equal(back.jobs, t.jobs)
    assert back.sha256 == SHA and list(back.job_id) == list(t.job_id)
    s = simulate("fifo", "normal", 1, trace=back).summary()
    row = df[(df.policy == "fifo") & (df.seed == 1)].iloc[0]
    assert s["n_jobs"] == 100 and s["mean_wait_min"] == row["mean_wait_min"]


def test_evaluate_reads_the_log_once_and_every_run_plays_it(log, tmp_path, opens, capsys):
    """``gpu-sched evaluate --trace``: one read for the policy and every baseline, its hash in trace_<stem>.json."""
    from gpu_sched_agents.evaluate.cli import main as evaluate

    out = tmp_path / "ev"
    assert evaluate(["cadr", "--trace", str(log), "--seeds", "2", "--out", str(out), "--workers", "1"]) == 0
    assert opens == [str(log)]  # checked, then played by cadr and every baseline: one read
    recorded = json.loads((out / "trace_live.json").read_text())
    assert {k: recorded[k] for k in ("trace", "sha256", "rows")} == {"trace": str(log), "sha256": SHA, "rows": 100}
    per_seed = pd.read_csv(out / "trace_live.csv")
    assert set(per_seed["n_jobs"]) == {100} and len(per_seed) > 2  # cadr and the baselines, 2 seeds each
    assert f"sha256 {SHA}" in capsys.readouterr().out
