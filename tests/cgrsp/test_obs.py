"""The observation: the job window object and the ``model`` block (``features="model"``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp.extensions import deferred_slots
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.fleet import HIGH
from gpu_sched_env.cgrsp.obs import MODEL_CLIP_MIN, MODEL_COLS, JobWindow
from gpu_sched_env.cgrsp.stock import defer_cost, next_event_gap
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.errors import ConfigError

COL = {c: i for i, c in enumerate(MODEL_COLS)}


def _log_min(seconds: float) -> float:
    return min(1.0, math.log1p(seconds / 60.0) / math.log1p(MODEL_CLIP_MIN))


def _walk(env: CGRSPEnv, seed: int, steps: int):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield obs
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if done:
            return


def test_basic_features_have_no_model_key_and_the_default_is_basic():
    env = CGRSPEnv(n_jobs=50)
    assert env.cfg.features == "basic"
    obs, _ = env.reset(seed=0)
    assert "model" not in obs and "model" not in env.observation_space.spaces


def test_bad_features_value_is_a_config_error_naming_field_and_choices():
    with pytest.raises(ConfigError, match=r"features.*'rich'.*basic.*model"):
        CGRSPEnv(features="rich")


@pytest.mark.parametrize("stock", [{}, {"stock_process": "markov", "stock_dwell_s": 900}])
def test_model_block_is_the_public_models_expectations_in_bounds(stock):
    """Every row: the type's status delay now, the rules' defer cost, the band's mean delay and probabilities,
    the next-event gap."""
    env = CGRSPEnv(n_jobs=300, window=3, window_by="class", order="spt", action_mode="slot", features="model", **stock)
    seen_low_delay = False
    for obs in _walk(env, seed=2, steps=400):
        assert env.observation_space.contains(obs)
        sim = env.sim
        fl = sim.fleet
        band, gap = fl.band(sim.t), next_event_gap(sim)
        m = obs["model"]
        for g in range(fl.n_types):
            probs = fl.level_probs(band, g)
            expect = (
                _log_min(fl.delay_mean[sim.stock[g]]),
                _log_min(defer_cost(sim, g, gap)),
                _log_min(fl.expected_delay(band, g)),
                probs[0],
                probs[1],
                _log_min(gap),
            )
            np.testing.assert_allclose(m[g], expect, rtol=1e-5, atol=1e-6)
            seen_low_delay |= sim.stock[g] != HIGH
    assert seen_low_delay  # the delay column was not always the High level's


def test_model_block_agrees_with_the_deferring_rule():
    """Where the expected rule defers a slot, its status' delay exceeds the defer cost in the observation."""
    env = CGRSPEnv(n_jobs=300, action_mode="slot", window=1, features="model")
    checked = 0
    for obs in _walk(env, seed=5, steps=300):
        sim = env.sim
        held = deferred_slots(SimView(sim), "expected")
        st = sim.fleet.slot_type
        for s in held:
            g = st[s]
            assert obs["model"][g, COL["delay_now"]] >= obs["model"][g, COL["defer_cost"]]
            checked += 1
    assert checked > 0


def test_model_block_reads_only_what_a_policy_may_read():
    """The block computed from the read-only policy view (no realised draws on it) is the env's."""
    env = CGRSPEnv(
        n_jobs=200, window=1, action_mode="slot", features="model", stock_process="markov", stock_dwell_s=300
    )
    for obs in _walk(env, seed=3, steps=200):
        np.testing.assert_array_equal(obs["model"], env._enc.model_block(SimView(env.sim)))


def test_job_window_is_its_own_object_and_matches_a_sort_of_the_queue():
    env = CGRSPEnv(n_jobs=200, window=3, window_by="class", order="deadline", action_mode="slot")
    assert isinstance(env.jobs, JobWindow)
    for _ in _walk(env, seed=4, steps=300):
        sim = env.sim
        ids = np.fromiter(sim.waiting, int)
        cx = np.asarray(sim.complexity)[ids]
        d = np.asarray(sim.deadline)[ids]
        heads = sorted(
            (
                int(ids[cx == k][np.lexsort((np.asarray(sim.submit)[ids][cx == k], d[cx == k]))][0])
                for k in set(cx.tolist())
            ),
            key=lambda j: (sim.deadline[j], sim.submit[j]),
        )
        assert env.window_jobs.tolist() == heads
