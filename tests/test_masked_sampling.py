"""MaskedDiscrete.sample(): the owner's legal actions, never a stale copy's; SB3 DQN with 2 envs."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest

import gpu_sched_env  # noqa: F401
from gpu_sched_env.core.spaces import MaskedDiscrete

SMALL = {"CGRSP-v0": {"window": 4, "n_jobs": 30}, "HGSP-v0": {"n_tasks": 30}}


def started(env_id, seed=0):
    """An env a few steps in, at a decision where some action is illegal."""
    env = gym.make(env_id, **SMALL[env_id]).unwrapped
    env.reset(seed=seed)
    for _ in range(3):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    while env.action_masks().all():
        env.step(0)
    return env


@pytest.mark.parametrize("env_id", SMALL)
def test_owner_samples_only_its_legal_actions(env_id):
    env = started(env_id)
    assert env.action_space.attached
    mask = env.action_masks()
    assert not mask.all()  # otherwise the test shows nothing
    draws = {int(env.action_space.sample()) for _ in range(300)}
    assert draws == set(np.flatnonzero(mask).tolist())  # every legal action, nothing else


@pytest.mark.parametrize("env_id", SMALL)
@pytest.mark.parametrize("copier", [lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy], ids=["pickle", "deepcopy"])
def test_a_copy_of_the_space_alone_is_detached_a_copy_of_the_env_is_not(env_id, copier):
    env = started(env_id)
    space = copier(env.action_space)
    assert isinstance(space, MaskedDiscrete) and not space.attached
    draws = {int(space.sample()) for _ in range(2000)}
    assert draws == set(range(space.n))  # the whole space, not the snapshot's mask
    clone = copier(env)
    assert clone.action_space.attached and clone.action_space is not env.action_space
    for _ in range(200):
        assert clone.action_masks()[clone.action_space.sample()]


@pytest.mark.e2e
def test_subproc_parent_space_is_detached_and_workers_use_forkserver():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # "module:id" imports gpu_sched_env in the fresh worker, which registers the ids
    vec = SubprocVecEnv(
        [lambda: gym.make("gpu_sched_env:HGSP-v0", n_tasks=30) for _ in range(2)], start_method="forkserver"
    )
    try:
        vec.reset()
        assert not vec.action_space.attached  # never samples a stale pickled env's mask
        masks = vec.env_method("action_masks")
        assert len(masks) == 2 and all(m.any() for m in masks)
    finally:
        vec.close()


@pytest.mark.parametrize("env_id", SMALL)
def test_sb3_dqn_with_two_envs_runs_and_warm_up_actions_of_env_0_are_legal(env_id):
    """SB3's own DQN (mask-blind) on 2 DummyVecEnv envs: warm-up sampling, then ε-greedy.

    SB3 samples every env's warm-up action from ``env.action_space`` (env 0's space), and its
    greedy actions ignore the mask, so the mask-blind learner is wrapped in the project's
    ``IllegalActionFallback``: the env itself then never raises, and the wrapper counts
    what it replaced. Env 0's warm-up actions come from its own mask: none is replaced.
    """
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gpu_sched_agents.rl.envs import IllegalActionFallback

    def thunk():  # over a strict env: the wrapper's replacements are the only ones, and nothing may raise
        return IllegalActionFallback(gym.make(env_id, illegal_action="raise", **SMALL[env_id]))

    class Record(BaseCallback):
        def __init__(self):
            super().__init__()
            self.rows = []  # (timestep, env index, replaced)

        def _on_step(self) -> bool:
            for i, info in enumerate(self.locals["infos"]):
                self.rows.append((self.num_timesteps, i, bool(info["illegal_action"])))
            return True

    venv = DummyVecEnv([thunk, thunk])
    venv.seed(0)
    learning_starts = 60  # timesteps (both envs): 30 warm-up steps each
    model = DQN(
        "MultiInputPolicy" if env_id.startswith("CGRSP") else "MlpPolicy",
        venv,
        learning_starts=learning_starts,
        buffer_size=1000,
        batch_size=16,
        train_freq=4,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )
    rec = Record()
    model.learn(400, callback=rec)
    assert rec.rows[-1][0] >= 400
    warm0 = [r for t, i, r in rec.rows if t <= learning_starts and i == 0]
    assert len(warm0) == learning_starts // 2 and not any(warm0)
    venv.close()
