"""Heuristics as agents on CGRSP-v0: exact replay of simulate(), small windows, evaluation."""

import pickle

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_agents.heuristics.cgrsp import ALL_POLICY_NAMES, PLANNERS, POLICY_NAMES
from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent, evaluate_heuristics
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.evaluation import evaluate
from gpu_sched_env.core.errors import ConfigError


def drive(env, agent, seed):
    obs, _ = env.reset(seed=seed)
    done, steps = False, 0
    while not done:
        obs, _, done, _, info = env.step(agent.predict(obs)[0])
        steps += 1
    return info, steps


def same_summary(a, b):
    return a.keys() == b.keys() and all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]) for k in a)


def assert_same_jobs(policy, day, seed, action_mode="joint", knobs=None, **params):
    knobs = knobs or {}
    ref = simulate(policy, day=day, seed=seed, **params, **knobs)
    env = CGRSPEnv(day=day, window=params.get("n_jobs", 1000), action_mode=action_mode, **params)
    info, steps = drive(env, HeuristicAgent(policy, env, **knobs), seed)
    got = env.result(policy)
    pd.testing.assert_frame_equal(ref.jobs, got.jobs, check_exact=True)
    assert same_summary({**info["summary"], "policy": policy}, ref.summary())
    assert got.n_decisions == ref.n_decisions
    return steps


# ----------------------------------------------------------------------------- exact replay
@pytest.mark.parametrize("action_mode", ["joint", "slot"])
@pytest.mark.parametrize("policy", [p for p in ALL_POLICY_NAMES if p not in PLANNERS])
def test_heuristic_agent_reproduces_simulate_exactly(policy, action_mode):
    for seed in (0, 1, 2):
        assert_same_jobs(policy, "quiet", seed, action_mode)
    for seed in (0, 1):
        assert_same_jobs(policy, "normal", seed, action_mode)
    assert_same_jobs(policy, "hectic", 3, action_mode, n_jobs=250)
    assert_same_jobs(policy, "surge", 4, action_mode, n_jobs=300, c_max=3)


@pytest.mark.parametrize("action_mode", ["joint", "slot"])
def test_the_rollout_planner_as_an_agent_reproduces_simulate(action_mode):
    knobs = {"n_rollouts": 1, "horizon_s": 200.0, "n_confirm": 2, "confirm_horizon_s": 200.0}
    assert_same_jobs("rollout", "surge", 4, action_mode, knobs=knobs, n_jobs=120, c_max=3)


@pytest.mark.parametrize(
    "policy, knobs",
    [("rh", {"rho_res": 2, "rh_defer": "expected"}), ("spt_rescue", {"theta": 300.0}), ("cadr", {"cr_star": 1.5})],
)
def test_heuristic_agent_with_knobs_reproduces_simulate(policy, knobs):
    assert_same_jobs(policy, "hectic", 3, "slot", knobs=knobs, n_jobs=250, c_max=4)
    default = simulate(policy, day="hectic", seed=3, n_jobs=250, c_max=4)
    assert not default.jobs.equals(simulate(policy, day="hectic", seed=3, n_jobs=250, c_max=4, **knobs).jobs)


def test_heuristic_agent_rejects_a_knob_of_another_policy():
    env = CGRSPEnv(day="quiet", n_jobs=20)
    env.reset(seed=0)
    with pytest.raises(ConfigError, match=r"unknown knobs for policy 'fifo': theta; allowed: none"):
        HeuristicAgent("fifo", env, theta=300.0).predict(None)


@pytest.mark.parametrize("action_mode", ["joint", "slot"])
@pytest.mark.parametrize("policy", ["fifo", "rh", "cadr"])
def test_heuristic_agent_reproduces_a_full_hectic_day(policy, action_mode):
    steps = assert_same_jobs(policy, "hectic", 42, action_mode)
    assert steps >= 950


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("day", ["surge", "hectic"])
def test_heuristic_agent_reproduces_full_days_on_more_seeds(policy, day):
    for seed in (5, 6):
        assert_same_jobs(policy, day, seed)


# ----------------------------------------------------------------------------- small windows
@pytest.mark.parametrize("fallback", ["substitute", "same_class", "wait"])
@pytest.mark.parametrize("policy", ["fifo", "spt", "rh", "random", "cadr"])
def test_small_window_rule(policy, fallback):
    """1. first planned job in the window; 2. substitute (window job 0, or with same_class the
    first window job of the planned job's class, on the first planned slot) or skip; 3. wait
    if legal, else the lowest legal action."""
    env = CGRSPEnv(day="hectic", n_jobs=150, window=2)
    agent = HeuristicAgent(policy, env, fallback)
    env.reset(seed=5)
    seen = dict.fromkeys(["plan", "substitute", "wait", "forced"], 0)
    done = False
    while not done:
        plan = agent.plan(env)
        a = agent.action(env)
        assert agent.action(env) == a  # idempotent without a step
        mask = env.action_masks()
        assert mask[a]
        in_window = [(j, s) for j, s in plan if j in env.window_jobs]
        if in_window:
            assert env.decode(a) == in_window[0]
            seen["plan"] += 1
        elif plan and fallback != "wait":
            cx, win = env.sim.complexity, env.window_jobs
            same = [w for w in win if cx[w] == cx[plan[0][0]]] if fallback == "same_class" else []
            assert env.decode(a) == ((same or win)[0], plan[0][1])
            seen["substitute"] += 1
        elif mask[-1]:
            assert a == env.action_space.n - 1
            seen["wait"] += 1
        else:
            assert a == np.flatnonzero(mask)[0]
            seen["forced"] += 1
        _, _, done, _, _ = env.step(a)
    assert seen["plan"] > 0  # the branches were exercised
    if fallback == "wait":
        assert seen["wait"] > 0 and seen["substitute"] == 0
    else:
        assert seen["substitute"] > 0


def test_same_class_fallback_on_class_heads_keeps_the_planned_class():
    """In a class-head window the stand-in for a planned job beyond it is its class's head."""
    env = CGRSPEnv(day="hectic", n_jobs=300, window=3, window_by="class", action_mode="slot")
    agent = HeuristicAgent("spt_rescue_defer_exp", env, "same_class")
    env.reset(seed=2)
    stood_in = 0
    done = False
    while not done:
        plan = [(j, s) for j, s in agent.plan(env) if s == env.offered_slot]
        a = agent.action(env)
        if plan and plan[0][0] not in env.window_jobs:
            j, _ = env.decode(a)
            assert env.sim.complexity[j] == env.sim.complexity[plan[0][0]]
            stood_in += 1
        _, _, done, _, _ = env.step(a)
    assert stood_in > 0


def test_small_window_agents_can_deviate_from_simulate_but_finish():
    env = CGRSPEnv(day="hectic", n_jobs=300, window=1, order="deadline")
    info, _ = drive(env, HeuristicAgent("spt", env), 0)
    ref = simulate("spt", "hectic", 0, n_jobs=300).summary()
    assert info["summary"]["completed"] == 300
    # with one visible job (earliest deadline) SPT cannot pick short jobs: it behaves differently
    assert info["summary"]["mean_wait_min"] != pytest.approx(ref["mean_wait_min"])


def test_heuristic_action_after_the_end_is_wait_and_unknown_name_raises():
    env = CGRSPEnv(day="quiet")
    agent = HeuristicAgent("edf", env)
    drive(env, agent, 0)
    assert agent.action(env) == env.wait_action == env.action_space.n - 1
    with pytest.raises(ConfigError, match="lifo"):
        HeuristicAgent("lifo")
    with pytest.raises(RuntimeError, match="bind"):
        HeuristicAgent("edf").predict(None)
    with pytest.raises(ConfigError, match="fallback"):
        HeuristicAgent("edf", fallback="guess")
    from stable_baselines3.common.vec_env import SubprocVecEnv

    with pytest.raises(ConfigError, match="in-process"):
        HeuristicAgent("edf").bind(type("FakeSubproc", (SubprocVecEnv,), {"__init__": lambda self: None})())


def test_pickling_mid_episode_keeps_heuristic_replay_exact():
    env = CGRSPEnv(day="hectic", n_jobs=200, window=200)
    agent = HeuristicAgent("cadr", env)
    env.reset(seed=8)
    for _ in range(60):
        env.step(agent.action(env))
    clone = pickle.loads(pickle.dumps(env))
    fresh = HeuristicAgent("cadr", clone)  # a new policy instance, reset on the clone's day
    done = False
    while not done:
        _, _, done, _, _ = clone.step(fresh.action(clone))
    pd.testing.assert_frame_equal(clone.result().jobs, simulate("cadr", "hectic", 8, n_jobs=200).jobs, check_exact=True)


# ----------------------------------------------------------------------------- vector envs
def test_heuristic_agent_on_gymnasium_sync_vector_env():
    vec = gym.vector.SyncVectorEnv([lambda: gym.make("CGRSP-normal-v0", window=100) for _ in range(2)])
    agent = HeuristicAgent("spt", vec)
    obs, _ = vec.reset(seed=10)  # sub-env i gets seed 10 + i
    results = {}
    while len(results) < 2:
        action, _ = agent.predict(obs)
        assert action.shape == (2,) and action.dtype == np.int64
        obs, _, term, _, _ = vec.step(action)
        for i in np.flatnonzero(term):
            if i not in results:
                results[i] = vec.envs[i].unwrapped.result("spt")  # before next-step autoreset
    for i in (0, 1):
        pd.testing.assert_frame_equal(results[i].jobs, simulate("spt", "normal", 10 + i).jobs, check_exact=True)
    vec.close()


def test_heuristic_agent_on_sb3_dummy_vec_env():
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: gym.make("CGRSP-quiet-v0", window=10) for _ in range(2)])
    vec.seed(3)
    obs = vec.reset()
    agent = HeuristicAgent("rh", vec)
    summaries = {}
    while len(summaries) < 2:
        action, _ = agent.predict(obs)
        obs, _, dones, infos = vec.step(action)
        for i in np.flatnonzero(dones):
            summaries.setdefault(i, infos[i]["summary"])
    for i in (0, 1):
        ref = simulate("rh", "quiet", 3 + i).summary()
        assert summaries[i]["mean_wait_min"] == ref["mean_wait_min"]
        assert summaries[i]["cost_usd"] == ref["cost_usd"]
    vec.close()


# ----------------------------------------------------------------------------- evaluation
def test_evaluate_heuristic_agents_matches_simulate():
    df = evaluate(HeuristicAgent("edf"), {"day": "normal", "window": 100}, seeds=[0, 1])
    assert list(df.seed) == [0, 1] and set(df.policy) == {"edf"}
    for _, row in df.iterrows():
        ref = simulate("edf", "normal", int(row.seed)).summary()
        assert row.mean_wait_min == ref["mean_wait_min"] and row.miss_pct == ref["miss_pct"]
        assert row.raw_wait == pytest.approx(ref["mean_wait_min"] * 60 * 100, rel=1e-9)
        assert row.episode_return == pytest.approx(-(row.raw_wait + 10 * row.raw_miss + row.raw_cost) / 3600, rel=1e-9)


def test_evaluate_heuristics_defaults_to_a_full_window():
    df = evaluate_heuristics(["fifo", "cadr"], {"day": "hectic", "n_jobs": 120}, seeds=[1])
    assert list(df.policy) == ["fifo", "cadr"] and set(df.window) == {120}
    for _, row in df.iterrows():
        assert row.mean_wait_min == simulate(row.policy, "hectic", 1, n_jobs=120).summary()["mean_wait_min"]


def test_evaluate_runs_an_sb3_maskable_ppo_model():
    from sb3_contrib import MaskablePPO

    env = gym.make("CGRSP-quiet-v0", window=4)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=32, batch_size=16, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    df = evaluate(model, {"day": "quiet", "window": 4}, seeds=[0, 1])
    assert list(df.policy) == ["MaskablePPO", "MaskablePPO"]
    assert (df.completed == 6).all() and (df.steps >= 6).all()
    again = evaluate(model, {"day": "quiet", "window": 4}, seeds=[0, 1])
    pd.testing.assert_frame_equal(df, again)  # deterministic predictions, same days
