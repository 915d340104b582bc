import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gpu_sched_env  # noqa: F401
from gpu_sched_agents.heuristics.llm import HeuristicAgent
from gpu_sched_env.core.errors import ConfigError, InvalidActionError, ResetNeededError
from gpu_sched_env.llm import simulate


@pytest.mark.parametrize("engine", ["discrete", "event"])
def test_env_checker(engine):
    # the discriminating workload starts with all 20 requests startable, so the action the
    # checker samples before its seeded reset is legal (on "mixed" it is not: see
    # tests/test_env_contract.py)
    check_env(gym.make("LLMServe-v0", workload="discriminating", engine=engine).unwrapped)


@pytest.mark.parametrize("policy", ["fifo", "wsrpt"])
@pytest.mark.parametrize("workload", ["discriminating", "mixed"])
def test_agents_reproduce_simulate(policy, workload):
    env = (
        gym.make("LLMServe-v0", workload=workload, n_requests=200)
        if workload == "mixed"
        else gym.make("LLMServe-v0", workload="discriminating")
    )
    agent = HeuristicAgent(policy, env)
    obs, info = env.reset(seed=0)
    done, ret = False, 0.0
    while not done:
        a, _ = agent.predict(obs)
        obs, r, done, _, info = env.step(a)
        ret += r
    wl = env.unwrapped.sim.workload
    ref = simulate(policy, wl).summary()
    assert info["summary"] == ref
    assert -ret * env.unwrapped._pref == pytest.approx(ref["weighted_wait"])


def rollout(env, seed):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(1)
    obs_list, done = [obs], False
    while not done:
        mask = info["action_mask"]
        np.testing.assert_array_equal(mask, env.unwrapped.action_masks())
        obs, r, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        obs_list.append(obs)
    return np.array(obs_list), info["summary"]


def test_default_workload_varies_with_the_seed():
    env = gym.make("LLMServe-v0")
    (a, sa), (b, sb) = rollout(env, 0), rollout(env, 1)
    assert sa["weighted_wait"] != sb["weighted_wait"]
    assert a.shape != b.shape or not np.array_equal(a, b)


def test_seeding():
    env = gym.make("LLMServe-v0", workload="mixed", n_requests=30)
    a, sa = rollout(env, 5)
    b, sb = rollout(env, 5)
    c, _ = rollout(env, 6)
    np.testing.assert_array_equal(a, b)
    assert sa == sb
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_mask_is_exactly_the_startable_requests_and_forbidden_raises():
    env = gym.make("LLMServe-v0", workload="discriminating", illegal_action="raise").unwrapped
    obs, info = env.reset(seed=0)
    sim = env.sim
    mask = env.action_masks()
    assert mask.sum() == 20
    # start 8 requests: the cluster is full, but 16 GPUs / tau 2 -> the 9th has no GPUs
    for i in range(8):
        env.step(i)
    assert env.sim.time == pytest.approx(2.0)  # FIFO-like choice: next decision at t = 2.0
    with pytest.raises(InvalidActionError, match="legal"):
        env.step(0)  # already done
    legal = set(np.flatnonzero(env.action_masks()))
    assert legal == set(sim.candidates().tolist()) == set(range(8, 20))
    with pytest.raises(InvalidActionError):
        env.step(99)


def test_pickle_and_terminate():
    env = gym.make("LLMServe-v0", workload="discriminating").unwrapped
    env.reset(seed=0)
    env.step(10)
    clone = pickle.loads(pickle.dumps(env))
    o1, o2 = env.step(11), clone.step(11)
    np.testing.assert_array_equal(o1[0], o2[0])
    steps = 0
    done = False
    while not done:
        _, _, done, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        steps += 1
        assert not trunc
    assert steps == 18 and info["summary"]["completed"] == 20
    with pytest.raises(ResetNeededError):
        env.step(0)


def test_env_config_errors():
    with pytest.raises(ConfigError, match="n_requests"):
        gym.make("LLMServe-v0", workload="discriminating", n_requests=10)
    with pytest.raises(ConfigError, match="engine"):
        gym.make("LLMServe-v0", engine="fast")
