"""``train.py`` with a refused setting: one line ``train.py: <message>`` on stderr, exit status 2, no run folder.

Each case is a ``python train.py`` process of its own (the refusal comes before any env is
stepped). The processes are forked from one fresh interpreter that imported ``train.py``'s modules
once (``tests/forked.py``): the imports, ~5 s of CPU per process here, are paid once for the
file, and each case is still a process with its own exit status, stderr, ``sys.argv`` and
Hydra. ``HYDRA_FULL_ERROR=1`` is set, as the training tests set it, so a ConfigError that
reached Hydra would print its whole traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.forked import run_forked

ROOT = Path(__file__).resolve().parents[1]

# override(s) -> the field the message must name
CASES = {
    "budget": (["train.total_timesteps=-5"], "train.total_timesteps"),
    "env": (["env.c_max=0"], "c_max"),
    "ppo_jax batch": (["algo=ppo_jax", "algo.batch_size=7"], "algo.batch_size"),
    "a schema as an option": (["day=day_schema"], "day = 'day_schema' is the group's schema"),
}
# what train.py imports before Hydra starts (its own imports), loaded once in the parent of the cases
PRELOAD = ["hydra", "gpu_sched_agents.rl.best", "gpu_sched_agents.rl.config", "gpu_sched_agents.rl.entry"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Every case's ``train.py`` process: its result and its own temporary folder (``runs/run`` is Hydra's run dir)."""
    folders = {name: tmp_path_factory.mktemp("case") for name in [*CASES, "resume"]}
    jobs = {
        name: {
            "argv": ["train.py", f"hydra.run.dir={folders[name] / 'runs' / 'run'}", *overrides],
            "cwd": ROOT,
            "env": {"HYDRA_FULL_ERROR": "1"},
        }
        for name, (overrides, _) in CASES.items()
    }
    nowhere = folders["resume"] / "nowhere"
    jobs["resume"] = {
        "argv": [
            "train.py",
            f"hydra.run.dir={folders['resume'] / 'runs' / 'run'}",
            "resume=true",
            f"resume_from={nowhere}",
        ],
        "cwd": ROOT,
        "env": {"HYDRA_FULL_ERROR": "1"},
    }
    done = run_forked(jobs, PRELOAD, tmp_path_factory.mktemp("output"), timeout=300)
    return {name: (done[name], folders[name]) for name in jobs}


@pytest.mark.parametrize("case", CASES)
def test_a_refused_setting_is_one_line_and_exit_2(case, runs):
    _, field = CASES[case]
    proc, tmp_path = runs[case]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("train.py: ") and field in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "runs").exists()  # Hydra's folder (and its parent) taken back


def test_a_refused_resume_is_one_line_and_exit_2(runs):
    proc, tmp_path = runs["resume"]
    nowhere = tmp_path / "nowhere"
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines() == [f"train.py: resume_from = {str(nowhere)!r} is not a directory"]
    assert not (tmp_path / "runs").exists()
