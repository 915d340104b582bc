"""CGRSP-v0 rollouts: determinism, pickling, vector envs, masks, bounds, reward identities."""

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.rewards import REWARD_PARTS
from gpu_sched_env.core.errors import InvalidActionError


def random_rollout(env, seed, rng_seed=0, max_steps=None):
    """Uniform legal actions; returns the list of (action, obs, reward, terminated, info)."""
    rng = np.random.default_rng(rng_seed)
    obs, info = env.reset(seed=seed)
    out = [(None, obs, 0.0, False, info)]
    done = False
    while not done and (max_steps is None or len(out) <= max_steps):
        legal = np.flatnonzero(info["action_mask"])
        a = int(rng.choice(legal))
        obs, r, done, trunc, info = env.step(a)
        assert not trunc
        out.append((a, obs, r, done, info))
    return out


def same_obs(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# ----------------------------------------------------------------------------- determinism
def test_two_same_seed_rollouts_are_identical():
    ra = random_rollout(gym.make("CGRSP-v0", n_jobs=150), seed=7, rng_seed=3)
    rb = random_rollout(gym.make("CGRSP-v0", n_jobs=150), seed=7, rng_seed=3)
    assert len(ra) == len(rb)
    for (a1, o1, r1, d1, i1), (a2, o2, r2, d2, i2) in zip(ra, rb):
        assert a1 == a2 and r1 == r2 and d1 == d2 and same_obs(o1, o2)
        assert np.array_equal(i1["action_mask"], i2["action_mask"])
    rc = random_rollout(gym.make("CGRSP-v0", n_jobs=150), seed=8, rng_seed=3)
    assert not same_obs(ra[1][1], rc[1][1])


def test_unseeded_reset_draws_the_day_from_np_random():
    env = CGRSPEnv(day="normal")
    env.reset(seed=11)
    env.reset()
    s1 = env.run_seed
    env.reset(seed=11)
    env.reset()
    assert env.run_seed == s1 != 11


# ----------------------------------------------------------------------------- pickling
def test_pickled_env_continues_identically():
    env = CGRSPEnv(day="normal", window=8)
    random_rollout(env, seed=5, max_steps=30)  # mid-episode
    clone = pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(1)
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        o1, r1, done, _, i1 = env.step(a)
        o2, r2, d2, _, i2 = clone.step(a)
        assert r1 == r2 and done == d2 and same_obs(o1, o2)
    assert env.result().jobs.equals(clone.result().jobs)


def test_pickle_of_a_fresh_reset_env():
    env = gym.make("CGRSP-surge-v0")
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env))
    a = int(np.flatnonzero(env.unwrapped.action_masks())[0])
    assert same_obs(env.step(a)[0], clone.step(a)[0])


# ----------------------------------------------------------------------------- vector envs
def test_sync_vector_env_random_masked_rollout():
    vec = gym.vector.SyncVectorEnv([lambda: gym.make("CGRSP-normal-v0", window=6) for _ in range(2)])
    obs, info = vec.reset(seed=[3, 4])
    assert obs["jobs"].shape == (2, 6, 15)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(400):
        masks = info["action_mask"]
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, r, term, trunc, info = vec.step(acts)
        assert vec.observation_space.contains(obs)
        finished += int(term.sum())
    assert finished >= 2  # a normal day is ~200 steps
    vec.close()


@pytest.mark.e2e
def test_sb3_subproc_vec_env_random_masked_rollout():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv(
        [lambda: gym.make("gpu_sched_env:CGRSP-quiet-v0", window=4) for _ in range(2)], start_method="forkserver"
    )
    vec.seed(0)
    obs = vec.reset()
    rng = np.random.default_rng(0)
    summaries = []
    for _ in range(60):
        masks = vec.env_method("action_masks")
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, r, dones, infos = vec.step(acts)
        summaries += [i["summary"] for d, i in zip(dones, infos) if d]
    vec.close()
    assert len(summaries) >= 2
    assert all(s["completed"] == s["n_jobs"] == 6 for s in summaries)


# ----------------------------------------------------------------------------- termination
@pytest.mark.parametrize(
    "day, kw",
    [("quiet", {}), ("normal", {"c_max": 1}), ("hectic", {"n_jobs": 120, "c_max": 3}), ("surge", {"n_jobs": 150})],
)
def test_episodes_terminate_under_random_masked_actions(day, kw):
    env = CGRSPEnv(day=day, window=5, **kw)
    n = env.params.n_jobs
    for seed in range(2):
        roll = random_rollout(env, seed=seed, rng_seed=seed)
        assert roll[-1][3] is True
        assert len(roll) - 1 <= 3 * n  # at most N dispatches and 2N events
        assert roll[-1][4]["summary"]["completed"] == n


# ----------------------------------------------------------------------------- reward identities
@pytest.mark.parametrize("day, kw", [("normal", {}), ("hectic", {}), ("surge", {"tight_fraction": 0.9})])
def test_episode_reward_parts_equal_the_objective(day, kw):
    env = CGRSPEnv(day=day, window=8, order="submit", reward_weights={"cost": 50.0}, **kw)  # FIFO-ish: misses
    roll = random_rollout(env, seed=2, rng_seed=9)
    jobs = env.result().jobs
    raw = {k: sum(step[4]["reward_raw"][k] for step in roll[1:]) for k in REWARD_PARTS}
    assert raw["wait"] == pytest.approx(jobs.wait.sum(), rel=1e-9)
    assert raw["miss"] == (~jobs.met).sum()
    assert raw["cost"] == pytest.approx(jobs.cost.sum(), rel=1e-9)
    assert roll[-1][4]["episode_raw"] == pytest.approx(raw)
    p = env.params
    total = sum(step[2] for step in roll[1:])
    expect = -(p.alpha1 * jobs.wait.sum() + p.alpha2 * (~jobs.met).sum() + 50.0 * jobs.cost.sum()) / 3600.0
    assert total == pytest.approx(expect, rel=1e-9)
    for step in roll[1:]:
        assert sum(step[4]["reward_parts"].values()) == pytest.approx(step[2], abs=1e-12)
    if day != "normal":
        assert raw["miss"] > 0  # the identity was tested on a day with misses


def test_reward_parts_are_credited_when_documented():
    """Wait accrues with time (plus provisioning at dispatch); a miss when its deadline passes."""
    env = CGRSPEnv(day="hectic", n_jobs=200, window=4)
    rng = np.random.default_rng(4)
    _, info = env.reset(seed=3)
    sim = env.sim
    cum_wait = cum_miss = 0.0
    done = False
    while not done:
        _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        cum_wait += info["reward_raw"]["wait"]
        cum_miss += info["reward_raw"]["miss"]
        t = sim.t
        sub = np.asarray(sim.submit[: sim.n_arrived])
        disp = np.asarray(sim.dispatch[: sim.n_arrived])
        start = sim.realised_starts()[: sim.n_arrived]
        dispatched = np.isfinite(disp)
        expect_wait = np.where(dispatched, start, t) - sub  # queue time so far + realised delays
        assert cum_wait == pytest.approx(expect_wait.sum(), rel=1e-9, abs=1e-6)
        if not done:
            comp = np.asarray(sim.completion)
            dl = np.asarray(sim.deadline)
            passed_unmet = ((dl <= t) & (comp > dl)).sum()
            assert cum_miss == passed_unmet


# ----------------------------------------------------------------------------- properties
env_configs = st.fixed_dictionaries(
    {
        "day": st.sampled_from(["quiet", "normal", "hectic", "surge"]),
        "window": st.integers(1, 6),
        "c_max": st.integers(1, 6),
        "order": st.sampled_from(["deadline", "submit", "spt", "laxity"]),
        "tight_fraction": st.sampled_from([0.0, 0.2, 0.9]),
    }
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=env_configs, seed=st.integers(0, 10_000), n_steps=st.integers(0, 120), rng_seed=st.integers(0, 100))
def test_mask_is_exactly_the_set_of_legal_actions(cfg, seed, n_steps, rng_seed):
    env = CGRSPEnv(n_jobs=60, illegal_action="raise", **cfg)  # strict: the actions that raise are the illegal ones
    roll = random_rollout(env, seed=seed, rng_seed=rng_seed, max_steps=n_steps)
    if roll[-1][3]:
        assert not env.action_masks().any()
        return
    mask = env.action_masks()
    assert mask.any()
    for a in range(env.action_space.n):
        trial = copy.deepcopy(env)
        try:
            trial.step(a)
            legal = True
        except InvalidActionError:
            legal = False
        assert mask[a] == legal, (a, mask[a])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=env_configs, seed=st.integers(0, 10_000), rng_seed=st.integers(0, 100))
def test_observations_stay_inside_the_space(cfg, seed, rng_seed):
    env = CGRSPEnv(n_jobs=80, **cfg)
    space = env.observation_space
    for _, obs, *_ in random_rollout(env, seed=seed, rng_seed=rng_seed):
        for k, v in obs.items():
            assert space[k].contains(v), (k, v)


def test_observations_stay_inside_the_space_on_a_full_hectic_day():
    env = CGRSPEnv(day="hectic", window=16)
    space = env.observation_space
    worst = 0.0
    for _, obs, *_ in random_rollout(env, seed=0):
        assert space.contains(obs)
        worst = max(worst, float(obs["jobs"][:, 6].max()))
    assert worst > 1.0  # waits of hours were actually seen (the bound is not vacuous)


def test_window_is_the_first_k_waiting_jobs_in_canonical_order():
    for order in ("deadline", "submit", "spt", "laxity"):
        env = CGRSPEnv(day="hectic", n_jobs=200, window=5, order=order)
        rng = np.random.default_rng(0)
        _, info = env.reset(seed=1)
        sim = env.sim
        wbar = np.array([g.mean_runtime_s for g in env.params.gpu_types], float).T
        done = False
        while not done:
            ids = np.fromiter(sim.waiting, int)
            d, sub = np.asarray(sim.deadline)[ids], np.asarray(sim.submit)[ids]
            cx = np.asarray(sim.complexity)[ids]
            key = {
                "deadline": (sub, d),
                "submit": (sub,),
                "spt": (sub, d, wbar[cx, 0]),  # nominal W̄ on the RTX 3090 (the first type)
                "laxity": (sub, d - np.asarray(sim.fleet.fastest_wbar)[cx]),
            }[order]
            expect = ids[np.lexsort(key)][:5]
            assert np.array_equal(env._win, expect), order
            _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
