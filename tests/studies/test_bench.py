"""The benchmarks are modules of ``studies.bench`` (``python -m studies bench NAME``), not scripts run by path."""

import pytest

from gpu_sched_env.core.commands import walk
from studies.bench import sim
from studies.commands import BENCH, main


def test_bench_calls_the_benchmark_module(capsys):
    assert main(["bench", "scenarios", "--part", "edge", "--tasks", "3", "--repeats", "1", "--time-limit", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "bench_edge: 3 tasks" in out and "membatch" in out
    assert main(["bench", "nope"]) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("spelling", [s for s, _ in walk(BENCH, "python -m studies bench")])
def test_every_benchmark_is_a_module_with_main_and_help(spelling, capsys):
    with pytest.raises(SystemExit) as e:
        main([*spelling.split()[3:], "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {spelling}") and out[len(f"usage: {spelling}")].isspace()


@pytest.mark.e2e
def test_sim_scaling_child_runs_as_a_module_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the child must find ``studies`` without relying on the caller's cwd
    row = sim.run_child("fifo", 1_000)
    assert set(row) == {"seconds", "cpu_s", "peak_mb"} and 0 < row["cpu_s"] and row["peak_mb"] > 10
