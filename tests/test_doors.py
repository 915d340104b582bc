"""The two doors: ``python -m studies`` runs from the checkout's root, and each door names the other."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.e2e
def test_python_m_studies_runs_from_the_root_without_path_edits():
    r = subprocess.run(
        [sys.executable, "-m", "studies", "bench", "nope"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2 and "unknown benchmark 'nope'; allowed: sim, env" in r.stderr, r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "studies", "hgsp-report", "--part", "tasks1", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m studies hgsp-report --part tasks1"), r.stderr


def test_gpu_sched_says_where_the_research_commands_live(capfd):
    # one spelling per job: the research programme is `python -m studies`, never gpu-sched
    from gpu_sched_env.cli import main

    assert main(["headroom", "--layer", "a"]) == 2
    err = capfd.readouterr().err
    assert "run: python -m studies headroom --layer a" in err and "not installed with the package" in err
    assert main(["bench"]) == 2 and "run: python -m studies bench" in capfd.readouterr().err
    assert main(["--help"]) == 0
    assert "python -m studies --help" in capfd.readouterr().out  # each door names the other
    from studies.commands import main as studies_main

    assert studies_main(["--help"]) == 0 and "gpu-sched --help" in capfd.readouterr().out


def test_the_research_programme_has_at_most_25_commands_each_a_question():
    from gpu_sched_env.core.commands import Group
    from studies.commands import BENCH, STUDIES, count

    assert count() == 24 and count() <= 25  # docs/architecture.md's review section states the number
    assert count(BENCH) == 4
    parts = [e for e in STUDIES.commands.values() if isinstance(e, Group) and e.flag]
    assert len(parts) == 8 and all(len(g.commands) >= 2 for g in parts)


def test_no_study_module_is_runnable_two_ways():
    """A study runs as ``python -m studies NAME``; only the benchmarks' measured children run as modules."""
    root = Path(__file__).resolve().parents[1]
    guarded = sorted(
        str(p.relative_to(root))
        for p in (root / "studies").rglob("*.py")
        if 'if __name__ == "__main__"' in p.read_text(encoding="utf-8")
    )
    assert guarded == ["studies/__main__.py", "studies/bench/sim.py", "studies/bench/trace_load.py"], guarded


def test_the_suites_heavy_first_files_exist():
    from tests.conftest import HEAVY_FIRST

    assert [f for f in HEAVY_FIRST if not (ROOT / f).is_file()] == []
    assert len(set(HEAVY_FIRST)) == len(HEAVY_FIRST)
