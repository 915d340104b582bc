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
        [sys.executable, "-m", "studies", "diagnose", "hgsp-tasks1", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.startswith("usage: python -m studies diagnose hgsp-tasks1"), r.stderr


def test_gpu_sched_says_where_the_research_commands_live(capfd):
    # one spelling per job: the research programme is `python -m studies`, never gpu-sched
    from gpu_sched_env.cli import main

    assert main(["diagnose", "headroom", "--layer", "a"]) == 2
    err = capfd.readouterr().err
    assert "run: python -m studies diagnose headroom --layer a" in err and "not installed with the package" in err
    assert main(["bench"]) == 2 and "run: python -m studies bench" in capfd.readouterr().err
    assert main(["--help"]) == 0
    assert "python -m studies --help" in capfd.readouterr().out  # each door names the other
    from studies.commands import main as studies_main

    assert studies_main(["--help"]) == 0 and "gpu-sched --help" in capfd.readouterr().out
