"""``train.py`` with a refused setting: one line ``train.py: <message>`` on stderr, exit status 2, no run folder.

Each case is a fresh ``python train.py`` process (about 3 s: the imports and Hydra's composition;
the refusal comes before any env is stepped). ``HYDRA_FULL_ERROR=1`` is set, as the training
tests set it, so a ConfigError that reached Hydra would print its whole traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# override(s) -> the field the message must name
CASES = {
    "budget": (["train.total_timesteps=-5"], "train.total_timesteps"),
    "env": (["env.c_max=0"], "c_max"),
    "ppo_jax batch": (["algo=ppo_jax", "algo.batch_size=7"], "algo.batch_size"),
    "a schema as an option": (["day=day_schema"], "day = 'day_schema' is the group's schema"),
}


def train_py(tmp_path: Path, *overrides: str) -> tuple[subprocess.CompletedProcess, Path]:
    run = tmp_path / "runs" / "run"
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    proc = subprocess.run(
        [sys.executable, "train.py", f"hydra.run.dir={run}", *overrides],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, run


@pytest.mark.parametrize("case", CASES)
def test_a_refused_setting_is_one_line_and_exit_2(case, tmp_path):
    overrides, field = CASES[case]
    proc, run = train_py(tmp_path, *overrides)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("train.py: ") and field in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "runs").exists()  # Hydra's folder (and its parent) taken back


def test_a_refused_resume_is_one_line_and_exit_2(tmp_path):
    nowhere = tmp_path / "nowhere"
    proc, _ = train_py(tmp_path, "resume=true", f"resume_from={nowhere}")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [f"train.py: resume_from = {str(nowhere)!r} is not a directory"]
    assert not (tmp_path / "runs").exists()
