"""A ``train.py`` run killed (SIGKILL) after a checkpoint and resumed ends where the uninterrupted run ends.

For each learner: one run left alone; one run killed as soon as its first checkpoint's model
file appears (written last, so the checkpoint is complete), then resumed with
``resume=true resume_from=<its folder>``. The two folders must hold the same
``learning_curve.csv`` rows (every evaluation, the one at the checkpoint included, none twice),
the same ``best.json`` and the same ``final_eval.csv``, to the last digit. Tiny runs on the
hectic day, whose learning curve moves from one evaluation to the next (a constant curve would
match whatever the resume did), with a checkpoint at every rollout (``algo=ppo_jax``: update).
Each run is a process of its own, forked from one interpreter that imported train.py's libraries
once (``tests/rl/train_runs.py``'s fork server); the kill is a SIGKILL to that process.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.rl.train_runs import ROOT, Finished, Trainer

COMMON = [
    "day=hectic",
    "seed=3",
    "train.eval_seeds=[10000]",
    "train.final_eval_seeds=2",
    "train.progress_bar=false",
]
LEARNERS = {
    "ppo": (
        "zip",
        [
            "algo=ppo",
            "train.total_timesteps=512",
            "train.n_envs=2",
            "train.eval_freq=128",
            "train.checkpoint_freq=128",
            "algo.n_steps=64",
            "algo.batch_size=64",
            "algo.n_epochs=2",
            "algo.net_arch=[16]",
        ],
    ),
    "dqn": (
        "zip",
        [
            "algo=dqn",
            "train.total_timesteps=384",
            "train.n_envs=1",
            "train.eval_freq=128",
            "train.checkpoint_freq=128",
            "algo.learning_starts=32",
            "algo.buffer_size=1000",
            "algo.batch_size=16",
            "algo.net_arch=[16]",
        ],
    ),
    "ppo_jax": (
        "npz",
        [
            "algo=ppo_jax",
            "train.total_timesteps=768",
            "train.n_envs=4",
            "algo.n_steps=32",
            "algo.batch_size=64",
            "algo.n_epochs=1",
            "algo.net_arch=[16]",
            "train.eval_freq=256",
            "train.checkpoint_freq=128",
            "algo.jax_eval_seeds=2",
            "algo.jax_eval_rules=[spt_rescue_defer_exp]",
            "algo.select_days=4",
            "algo.select_every=128",
        ],
    ),
}
WALL_CLOCK = ("wall", "time_s", "fps")  # columns measured in seconds of this machine, never compared


def _argv(out: Path, args: list[str]) -> list[str]:
    return ["train.py", f"hydra.run.dir={out}", *COMMON, *args]


def _train(out: Path, args: list[str], trainer: Trainer) -> Finished:
    proc = trainer.server.run(_argv(out, args), ROOT, trainer.env(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def _killed_at_first_checkpoint(out: Path, args: list[str], model: str, trainer: Trainer) -> list[str]:
    """Start the run, SIGKILL it once a checkpoint's model file exists; the checkpoint files it left."""
    proc = trainer.server.start(_argv(out, args), ROOT, trainer.env())
    try:
        t0 = time.monotonic()
        while not list((out / "checkpoints").glob(f"model_*_steps.{model}")):
            assert proc.poll() is None, f"the run ended before its first checkpoint:\n{proc.out.read_text()[-3000:]}"
            assert time.monotonic() - t0 < 300, "no checkpoint after 300 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)  # no handler, no atexit, no flush
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -9
    return sorted(p.name for p in (out / "checkpoints").iterdir())


def _curve(folder: Path) -> pd.DataFrame:
    curve = pd.read_csv(folder / "learning_curve.csv")
    return curve.drop(columns=[c for c in curve.columns if any(w in c for w in WALL_CLOCK)])


@pytest.mark.e2e
@pytest.mark.parametrize("learner", LEARNERS)
def test_a_killed_and_resumed_run_ends_as_the_uninterrupted_one(learner, tmp_path, trainer):
    model, args = LEARNERS[learner]
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    _train(whole, args, trainer)

    left = _killed_at_first_checkpoint(killed, args, model, trainer)
    assert f"model_128_steps.{model}" in left and "model_128_steps.state" in left, left
    assert not (killed / f"final_model.{model}").exists()  # killed before the end of training
    resumed = _train(tmp_path / "resume", [*args, "resume=true", f"resume_from={killed}"], trainer)
    assert "inexactly" not in resumed.stdout + resumed.stderr  # the checkpoint had its state

    want, got = _curve(whole), _curve(killed)
    assert want.timesteps.is_unique and want.objective.dropna().nunique() > 1, want  # the curve moves
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert json.loads((killed / "best.json").read_text()) == json.loads((whole / "best.json").read_text())
    assert (killed / "final_eval.csv").read_bytes() == (whole / "final_eval.csv").read_bytes()
    assert (killed / "final_eval_per_seed.csv").read_bytes() == (whole / "final_eval_per_seed.csv").read_bytes()
