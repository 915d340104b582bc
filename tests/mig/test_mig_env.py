import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gpu_sched_env  # noqa: F401  (registers MIG-v0)
from gpu_sched_agents.heuristics.mig import BestFit, HeuristicAgent
from gpu_sched_env.core.errors import InvalidActionError, ResetNeededError
from gpu_sched_env.mig.env import MIGEnv
from gpu_sched_env.mig.sim import run_policy
from gpu_sched_env.mig.workload import mig_dataset


def rollout(env, seed, agent=None):
    obs, info = env.reset(seed=seed)
    trace = [obs.copy()]
    done = False
    total = 0.0
    while not done:
        a = agent.predict(obs)[0] if agent else env.action_space.sample()
        obs, r, done, trunc, info = env.step(a)
        assert not trunc
        trace.append(obs.copy())
        total += r
    return np.array(trace), total, info


def test_check_env_on_id():
    env = gym.make("MIG-v0", n_jobs=12)
    check_env(env.unwrapped)


def test_same_seed_rollouts_identical_and_pickle():
    env = gym.make("MIG-v0", n_jobs=15)
    t1, r1, _ = rollout(env, 5)
    t2, r2, _ = rollout(env, 5)
    np.testing.assert_array_equal(t1, t2)
    assert r1 == r2
    t3, _, _ = rollout(env, 6)
    assert t3.shape != t1.shape or not np.array_equal(t1, t3)
    env2 = pickle.loads(pickle.dumps(env.unwrapped))
    env2.reset(seed=1)


def test_mask_equals_legal_actions_and_forbidden_raises():
    env = MIGEnv(n_jobs=20, illegal_action="raise")
    obs, info = env.reset(seed=3)
    done = False
    while not done:
        mask = env.action_masks()
        assert np.array_equal(mask, info["action_mask"])
        for a in range(env.action_space.n):
            probe = copy.deepcopy(env)
            if mask[a]:
                probe.step(a)
            else:
                with pytest.raises(InvalidActionError):
                    probe.step(a)
        obs, _, done, _, info = env.step(int(np.flatnonzero(mask)[0]))
    assert not env.action_masks().any()
    with pytest.raises(ResetNeededError, match="reset"):
        env.step(0)


def test_best_fit_through_env_reproduces_simulator_exactly():
    for seed in (2, 3, 5):
        jobs = mig_dataset(seed)
        env = MIGEnv(jobs=jobs)
        _, total, info = rollout(env, 0, HeuristicAgent("best_fit", env))
        sim = run_policy(jobs, BestFit())
        assert env.sim.result("best_fit").schedule.equals(sim.schedule)
        assert -total == sim.metrics.makespan == info["planned_makespan"]


def test_reward_parts_and_weights():
    jobs = mig_dataset(2)
    env = MIGEnv(jobs=jobs, reward_weights={"makespan": 0.0, "deadline": 2.0})
    env.reset()
    _, r, _, _, info = env.step(env.decision_state().mask().argmax())
    assert set(info["reward_parts"]) == {"makespan", "deadline"}
    assert info["reward_parts"]["deadline"] == -2.0 * info["reward_raw"]["deadline"]
    assert info["reward_parts"]["makespan"] == 0.0  # weight 0
    assert r == sum(info["reward_parts"].values())
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown reward_weights keys: speed"):
        MIGEnv(reward_weights={"speed": 1.0})
