"""Exact resume (``gpu_sched_agents.rl.resume``): which checkpoint a run resumes from, and what its state restores.

``tests/test_faults_resume.py`` kills whole ``train.py`` runs; here the pieces, in this process:
a complete checkpoint is one with its model file, an old one without ``.state`` is resumed
inexactly with a warning, and a MaskablePPO continued from a checkpoint's state takes the
uninterrupted run's updates to the last bit (and without the state it does not).
"""

from __future__ import annotations

import logging
import pickle

import pytest
import torch as th
from stable_baselines3.common.vec_env import VecNormalize

from gpu_sched_agents.rl.envs import make_vec_env
from gpu_sched_agents.rl.registry import get_algo
from gpu_sched_agents.rl.resume import ExactCheckpoint, read_state, state_path
from gpu_sched_agents.rl.train import latest_checkpoint, plain_action_space
from gpu_sched_env.cgrsp.config import as_env_config
from gpu_sched_env.core.errors import ConfigError

KW = as_env_config({"day": "normal", "window": 4})
PARTS = (("", "zip"), ("", "state"), ("_vecnormalize", "pkl"))  # a checkpoint's files
PPO = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "policy_kwargs": {"net_arch": [16]}}


def test_a_checkpoint_whose_model_file_is_missing_is_not_resumed_from(tmp_path):
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    for name in ("model_128_steps.zip", "model_128_steps.state", "model_256_steps.state"):
        (folder / name).write_bytes(b"")
    # 256's state was written, its model file (written last) was not: the kill came in between
    assert latest_checkpoint(tmp_path) == folder / "model_128_steps.zip"


def test_an_old_checkpoint_without_state_resumes_inexactly_with_a_warning(tmp_path, caplog):
    old = tmp_path / "model_128_steps.zip"
    old.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="gpu_sched_agents.rl.resume"):
        assert read_state(old) is None
    assert "model_128_steps.state" in caplog.text and "resuming inexactly" in caplog.text


def test_a_state_file_of_another_format_is_refused(tmp_path):
    ckpt = tmp_path / "model_128_steps.zip"
    state_path(ckpt).write_bytes(pickle.dumps({"format": 0}))
    with pytest.raises(ConfigError, match="not a checkpoint state of format 1"):
        read_state(ckpt)


def _learner(folder, resume_from=None):
    """MaskablePPO on two normal-day envs behind VecNormalize, as train.py builds it; checkpoints every rollout."""
    spec = get_algo("ppo")
    venv = make_vec_env(KW, 2, 0)
    state = None
    if resume_from is None:
        venv = VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=0.99)
        model = spec.cls(spec.policy, venv, seed=0, device="cpu", **PPO)
    else:
        stats = resume_from.with_name(resume_from.name.replace("model_", "model_vecnormalize_").replace(".zip", ".pkl"))
        venv = VecNormalize.load(str(stats), venv)
        state = read_state(resume_from)
        model = spec.cls.load(resume_from, env=venv, device="cpu", force_reset=state is None)
    model.action_space = plain_action_space(model.action_space)
    return model, ExactCheckpoint(64, folder, {}, resume=state)


def _params(model):
    return {k: v.clone() for k, v in model.policy.state_dict().items()}


def test_a_resumed_learner_takes_the_uninterrupted_updates_to_the_last_bit(tmp_path):
    whole, ck = _learner(tmp_path / "whole")
    whole.learn(192, callback=[ck])  # three rollouts of 2 × 32 steps: checkpoints at 64, 128, 192
    names = {p.name for p in (tmp_path / "whole").iterdir()}
    assert names == {f"model{kind}_{n}_steps.{ext}" for n in (64, 128, 192) for kind, ext in PARTS}
    want = _params(whole)

    def resumed(state_kept: bool):
        ckpt = tmp_path / "whole" / "model_64_steps.zip"
        if not state_kept:
            state_path(ckpt).rename(ckpt.with_suffix(".kept"))
        model, ck = _learner(tmp_path / "resumed", resume_from=ckpt)
        model.learn(192 - model.num_timesteps, callback=[ck], reset_num_timesteps=False)
        if not state_kept:
            ckpt.with_suffix(".kept").rename(state_path(ckpt))
        return _params(model)

    got = resumed(state_kept=True)
    assert all(th.equal(got[k], want[k]) for k in want)
    inexact = resumed(state_kept=False)  # envs reset, random streams reseeded: other updates
    assert not all(th.equal(inexact[k], want[k]) for k in want)
