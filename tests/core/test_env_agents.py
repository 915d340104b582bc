"""One env-agent pattern: HeuristicAgent(name, env, **knobs) on single and vectorised envs."""

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_agents.heuristics import hgsp, llm, mig
from gpu_sched_env.core.errors import ConfigError

CASES = [
    (hgsp, "greedy", "HGSP-v0", {"n_tasks": 40}),
    (llm, "wsrpt", "LLMServe-v0", {"workload": "mixed", "n_requests": 30}),
    (mig, "best_fit", "MIG-v0", {}),
]


def _single_actions(module, name, env_id, kw, seed, n):
    env = gym.make(env_id, **kw)
    agent = module.HeuristicAgent(name, env)
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(n):
        a, _ = agent.predict(obs)
        out.append(int(a))
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    return out


@pytest.mark.parametrize(("module", "name", "env_id", "kw"), CASES)
@pytest.mark.parametrize("vec", ["gymnasium", "sb3"])
def test_vectorised_agent_matches_one_agent_per_env(module, name, env_id, kw, vec):
    seeds, n = [3, 4], 12
    refs = [_single_actions(module, name, env_id, kw, s, n) for s in seeds]
    n = min(n, *map(len, refs))
    fns = [lambda: gym.make(env_id, **kw) for _ in seeds]
    if vec == "gymnasium":
        venv = gym.vector.SyncVectorEnv(fns)
        obs, _ = venv.reset(seed=seeds)
    else:
        venv = DummyVecEnv(fns)
        for i, s in enumerate(seeds):
            venv.envs[i].reset(seed=s)  # SB3 seeds env i with seed + i; set both explicitly
        obs = None  # the agent reads each env's decision, not the observation
    agent = module.HeuristicAgent(name, venv)
    got = []
    for _ in range(n):
        a, _ = agent.predict(obs)
        assert a.shape == (2,) and a.dtype == np.int64
        got.append(a.tolist())
        if vec == "gymnasium":
            obs, *_ = venv.step(a)
        else:
            venv.step_async(a)
            obs, *_ = venv.step_wait()
    assert [list(r) for r in zip(*got)] == [r[:n] for r in refs]
    assert len({tuple(r[:n]) for r in refs}) == 2  # the two seeds really differ


@pytest.mark.parametrize(("module", "name", "env_id", "kw"), CASES)
def test_agent_errors(module, name, env_id, kw):
    with pytest.raises(ConfigError, match="policy = 'nope' is not known"):
        module.HeuristicAgent("nope")
    with pytest.raises(RuntimeError, match="no env: pass env= or call bind"):
        module.HeuristicAgent(name).predict(None)
    env = gym.make(env_id, **kw)
    agent = module.HeuristicAgent(name).bind(env)
    env.reset(seed=0)
    assert agent.predict(None)[0].dtype == np.int64


def test_knobs_reach_the_policy():
    agent = hgsp.HeuristicAgent("sagreedy", None, iters=7)
    assert agent.policy.iters == 7
    with pytest.raises(ConfigError, match="unknown sagreedy parameters: K"):
        hgsp.HeuristicAgent("sagreedy", None, K=3)
