"""The JAX env equals CGRSP-v0 under ``reward="occupancy"`` and the shaping potentials.

Random masked play on the reference's draws, step for step (observations, masks, rewards to
1e-7 relative, raw parts): prefixes that reach the first miss (so the deadline risk Φ_r and the miss part
are both exercised), a whole day, and each option on its own.
"""

import numpy as np
import pytest

from gpu_sched_env.cgrsp.env import REWARD_PARTS, CGRSPEnv
from gpu_sched_env.cgrsp.jax import JaxCGRSP
from tests.cgrsp.jax.helpers import assert_same_records, joint_heads, side_by_side


def markov_design(day: str, stock: str):
    """conf/env/markov.yaml's reward and shaping on the JAX env's design."""
    kw = {"reward": "occupancy", "shaping": "backlog_risk", "shaping_gamma": 0.97, "reward_weights": {"miss": 14400.0}}
    return joint_heads(day, stock).replace(**kw)


def steps_to_first_miss(cfg, seed: int) -> int:
    """Steps of side_by_side's random masked play (same action stream) until a miss is booked."""
    ref = CGRSPEnv(cfg)
    ref.reset(seed=seed)
    rng = np.random.default_rng(1000 + seed)
    k = 0
    while True:
        _, _, term, _, info = ref.step(int(rng.choice(np.flatnonzero(ref.action_masks()))))
        k += 1
        if info["reward_raw"]["miss"] > 0 or term:
            assert not term, "the day ended without a miss: pick another seed"
            return k


@pytest.mark.parametrize(
    ("day", "stock"),
    [("surge", "fresh"), ("surge", "markov"), pytest.param("hectic", "markov", marks=pytest.mark.slow)],
)
def test_prefix_to_a_miss(day, stock):
    cfg = markov_design(day, stock)
    env = JaxCGRSP.from_config(cfg)
    n = steps_to_first_miss(cfg, 5) + 20  # past the first miss: risk lifted by the deadline, misses booked
    ref, st, _, steps = side_by_side(env, cfg, 5, max_steps=n, horizon_s=4 * 86400.0, rew_rtol=1e-7)
    assert steps == n and ref.ledger.episode_raw["miss"] >= 1
    assert int(st.n_miss) == ref.ledger.episode_raw["miss"]
    assert_same_records(ref.sim, st)


def test_whole_day_returns():
    """A whole hectic day: every step's reward, the episode's raw parts and the summed shaped return."""
    cfg = markov_design("hectic", "fresh")
    env = JaxCGRSP.from_config(cfg)
    ref, st, info, steps = side_by_side(env, cfg, 7, horizon_s=20 * 86400.0, rew_rtol=1e-7)
    assert bool(st.done) and steps > 1000
    np.testing.assert_allclose(np.asarray(st.ep_raw), [ref.ledger.episode_raw[k] for k in REWARD_PARTS], rtol=1e-6)
    summ = ref.result().summary()
    np.testing.assert_allclose(float(info["mean_wait_min"]), summ["mean_wait_min"], rtol=1e-9)


@pytest.mark.parametrize(
    ("reward", "shaping", "gamma", "weights"),
    [
        # e2e: occupancy and the backlog potential are pinned together, in the fast tier, by the prefix and
        # whole-day tests above (occupancy with backlog_risk); alone they name which part differs (docs/tests.md)
        pytest.param("occupancy", "none", 1.0, {}, marks=pytest.mark.e2e),
        ("capacity", "backlog_risk", 0.9, {"excess_run": 0.3}),  # the opt-in SPT charge on the joint design's reward
        ("capacity", "none", 1.0, {"order_regret": 1.0}),  # the opt-in order charge (a shorter class passed over)
        pytest.param("occupancy", "backlog", 1.0, {}, marks=pytest.mark.e2e),
        ("deadline", "backlog_risk", 0.95, {}),
    ],
)
def test_each_option_alone(reward, shaping, gamma, weights):
    cfg = joint_heads("hectic", "markov").replace(
        reward=reward, shaping=shaping, shaping_gamma=gamma, reward_weights=weights
    )
    env = JaxCGRSP.from_config(cfg)
    side_by_side(env, cfg, 11, max_steps=150, horizon_s=4 * 86400.0, rew_rtol=1e-7)


def test_shaping_moves_the_reward():
    """The shaping term is on: the same play without it gives other rewards (the test above could not tell).

    The play: 30 steps of the first legal action. Both envs replay it in the compiled replay the prefix
    tests use (helpers.side_by_side's: no program of its own); that it is the first legal action of the
    JAX env's own mask at every step is asserted, the stream taken from CGRSP-v0's masks.
    """
    from tests.cgrsp.jax.helpers import REPLAY_STEPS, _replay_program

    cfg = markov_design("surge", "fresh")
    on, off = JaxCGRSP.from_config(cfg), JaxCGRSP.from_config(cfg.replace(shaping="none"))
    ref = CGRSPEnv(cfg)
    ref.reset(seed=3)
    actions = np.zeros(REPLAY_STEPS, np.int32)
    for k in range(30):
        actions[k] = int(np.flatnonzero(ref.action_masks())[0])
        ref.step(int(actions[k]))
    day = on.materialise(3)
    rewards = []
    for env in (on, off):
        _, mask0, (_, masks, r, *_), _, _ = _replay_program(env, REPLAY_STEPS)(day, actions, 30, env.default_params)
        before = np.concatenate([np.asarray(mask0)[None], np.asarray(masks)[:29]])
        assert [int(np.flatnonzero(m)[0]) for m in before] == actions[:30].tolist()  # the JAX env's first legal
        rewards.append(np.asarray(r)[:30])
    diffs = rewards[0] - rewards[1]
    assert max(abs(d) for d in diffs) > 1e-3
