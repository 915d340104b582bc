import pickle

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_agents.heuristics.hgsp import HeuristicAgent, SAGreedy
from gpu_sched_env.core.errors import ConfigError, InvalidActionError
from gpu_sched_env.hgsp import Problem, generate_tasks, make_cluster, run


def small_fit_tasks(n=40, seed=0) -> pd.DataFrame:
    # every task fits every GPU (<= 24 GB), so any sampled action is legal
    df = generate_tasks("tasks3", seed, n=n).to_frame()
    df["memory"] = np.minimum(df["memory"], 24.0)
    return df


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_env_checker():
    # check_env steps with unmasked random actions; a task set whose tasks fit every GPU
    # makes every action legal (a masked action raises by design).
    check_env(gym.make("HGSP-v0", tasks=small_fit_tasks()).unwrapped)
    check_env(gym.make("HGSP-v0", tasks=small_fit_tasks(), cluster="large").unwrapped)


def rollout(env, seed, actions_from=None):
    obs, info = env.reset(seed=seed)
    out = [obs]
    rng = np.random.default_rng(0)
    done = False
    rewards = []
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        a = rng.choice(legal)
        obs, r, done, trunc, info = env.step(a)
        out.append(obs)
        rewards.append(r)
    return np.array(out), np.array(rewards), info


def test_same_seed_same_rollout_and_new_sets_per_seed():
    env = gym.make("HGSP-v0", n_tasks=30)
    a = rollout(env, 3)
    b = rollout(env, 3)
    c = rollout(env, 4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2]["summary"] == b[2]["summary"]
    assert not np.array_equal(a[0][0], c[0][0])


def test_pickle_midway():
    env = gym.make("HGSP-v0", n_tasks=20).unwrapped
    obs, info = env.reset(seed=1)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    clone = pickle.loads(pickle.dumps(env))
    a = np.flatnonzero(env.action_masks())[0]
    o1 = env.step(a)
    o2 = clone.step(a)
    np.testing.assert_array_equal(o1[0], o2[0])
    assert o1[1] == o2[1]


def test_mask_equals_legal_actions_and_forbidden_raises():
    env = gym.make("HGSP-v0", tasks="tasks1", n_tasks=200, illegal_action="raise").unwrapped
    obs, info = env.reset(seed=0)
    saw_restricted = False
    done = False
    while not done:
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, info["action_mask"])
        i = env.decision().task
        legal = env.problem.tasks.memory[i] <= env.cluster.memory
        np.testing.assert_array_equal(mask, legal)
        assert obs in env.observation_space
        if not mask.all():
            saw_restricted = True
            bad = int(np.flatnonzero(~mask)[0])
            with pytest.raises(InvalidActionError, match="legal actions now"):
                env.step(bad)
        obs, r, done, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        assert not trunc
    assert saw_restricted
    assert not env.action_masks().any()
    with pytest.raises(InvalidActionError):
        env2 = gym.make("HGSP-v0", n_tasks=5).unwrapped
        env2.reset(seed=0)
        env2.step(99)


@pytest.mark.parametrize("policy", ["fifo", "greedy"])
@pytest.mark.parametrize("cluster", ["small", "medium"])
def test_agents_reproduce_run_exactly(policy, cluster):
    df = generate_tasks("tasks1", 4, n=400).to_frame()
    env = gym.make("HGSP-v0", tasks=df, cluster=cluster)
    agent = HeuristicAgent(policy, env)
    obs, info = env.reset(seed=0)
    done, ret = False, 0.0
    while not done:
        a, _ = agent.predict(obs)
        obs, r, done, _, info = env.step(a)
        ret += r
    ref = run(policy, df, cluster)
    s = env.unwrapped.schedule()
    np.testing.assert_array_equal(s.gpu, ref.schedule.gpu)
    np.testing.assert_array_equal(s.end, ref.schedule.end)
    assert info["summary"] == ref.summary()
    assert -ret * env.unwrapped._tref == pytest.approx(ref.summary()["wt"])


def test_sagreedy_decoder_agent_replays_sagreedy():
    ts = generate_tasks("tasks1", 0, n=300)
    ref = run("sagreedy", ts, "small", 0, iters=20)
    pol = SAGreedy(iters=20)
    problem = Problem(ts, make_cluster("small"))
    pol.reset(problem, __import__("gpu_sched_env.core.rng", fromlist=["stream"]).stream(0, "hgsp.policy"))
    order = pol.order(problem)
    np.testing.assert_array_equal(order, ref.order)
    env = gym.make("HGSP-v0", tasks=ts, order=order)
    agent = HeuristicAgent("greedy", env)  # SAGreedy's decoder is the EFT rule
    obs, _ = env.reset()
    done = False
    while not done:
        obs, _, done, _, info = env.step(agent.predict(obs)[0])
    np.testing.assert_array_equal(env.unwrapped.schedule().end, ref.schedule.end)
    assert info["summary"]["wt"] == pytest.approx(ref.summary()["wt"])


def test_env_config_errors():
    with pytest.raises(ConfigError, match="n_tasks"):
        gym.make("HGSP-v0", tasks=small_fit_tasks(), n_tasks=5)
    with pytest.raises(ConfigError, match="order"):
        gym.make("HGSP-v0", order=[0, 1])
    with pytest.raises(ConfigError, match="unknown reward_weights keys: speed"):
        gym.make("HGSP-v0", reward_weights={"speed": 1.0})


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_env_checker_with_masked_actions():
    tasks = small_fit_tasks()
    tasks["memory"] = 60.0  # only the A100 (80 GB) can hold these: A30/L40 actions are masked
    env = gym.make("HGSP-v0", tasks=tasks).unwrapped
    env.reset(seed=0)
    assert env.action_masks().sum() == 1
    check_env(env)
