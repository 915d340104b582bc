"""``action_mode="when"`` on CGRSP-v0: layout, mask, the next pair, errors, and the rule's timing through it.

The JAX env's equality under this design is tests/cgrsp/jax/test_when_jax.py.
"""

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.policies import build_policy
from gpu_sched_env.cgrsp.when import LearnedTiming
from gpu_sched_env.core.errors import ConfigError, InvalidActionError

MARKOV = {"stock_process": "markov", "stock_dwell_s": 900.0}
RULE = "spt_rescue_defer_exp"


def design(day: str = "hectic", params: dict | None = None, **kw) -> CGRSPEnvConfig:
    """conf/env/when.yaml's design (joint_heads' window and features, when actions)."""
    base = {"window": 3, "window_by": "class", "order": "spt", "action_mode": "when", "features": "model"}
    return CGRSPEnvConfig(day=day, params=params or {}, **(base | kw))


def test_layout_and_a_bad_mode():
    env = CGRSPEnv(design())
    assert env.action_space.n == 2 and env.wait_action == 1 and isinstance(env.actions, LearnedTiming)
    assert env.actions.simpler_designs(env.cfg)["joint"].action_mode == "joint"
    with pytest.raises(ConfigError, match="action_mode"):
        design(action_mode="whenever")


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_mask_pair_and_offered_slot_follow_the_base_order(params):
    """At every step: dispatch legal iff a job waits and a slot is idle; the pair is the base plan's first entry."""
    env = CGRSPEnv(design(params=params))
    obs, _ = env.reset(seed=3)
    base = build_policy(RULE, env.params, defer="none")
    base.reset(env.sim.view, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    for _ in range(300):
        sim = env.sim
        can = bool(sim.n_idle and sim.waiting)
        m = env.action_masks()
        assert m[0] == can and m[1] == (can and sim.has_future_event())
        pair = tuple(int(x) for x in base.decide(sim.view)[0]) if can else None
        offered = obs["slots"][: sim.params.c_max, -1]
        assert np.flatnonzero(offered).tolist() == ([] if pair is None else [pair[1]])
        assert env.offered_slot == (None if pair is None else pair[1])
        np.testing.assert_array_equal(obs["offer"], 0 if pair is None else obs["slots"][pair[1]])
        a, t = int(rng.choice(np.flatnonzero(m))), sim.t
        obs, _, term, _, _ = env.step(a)
        if a == 0:  # the pair's job left the queue now, for the pair's slot
            assert pair[0] not in sim.waiting and sim.dispatch[pair[0]] == t and sim.job_slot[pair[0]] == pair[1]
        if term:
            break


def test_illegal_actions_and_unexpressible_pairs_raise():
    env = CGRSPEnv(design())
    env.reset(seed=0)
    with pytest.raises(InvalidActionError, match="out of range"):
        env.step(2)
    sim = env.sim
    nxt = env.actions.next_pair(sim)
    other = (nxt[1] + 1) % sim.params.c_max
    with pytest.raises(InvalidActionError, match="not expressible in action_mode = 'when'"):
        env.encode(int(env.window_jobs[0]), other)
    assert env.encode(nxt[0], nxt[1]) == 0


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_the_rule_timing_through_the_design_is_close_to_simulate(params):
    """The rule's agent through the design (its *when*, the base order's *which*) against ``simulate()``."""
    env = CGRSPEnv(design(params=params))
    agent = HeuristicAgent(RULE, env)
    waits = []
    for seed in (20000, 20001):
        env.reset(seed=seed)
        term = False
        while not term:
            _, _, term, _, _ = env.step(agent.action(env))
        mine, ref = env.result().summary(), simulate(RULE, day="hectic", seed=seed, **params).summary()
        assert mine["completed"] == mine["n_jobs"] and mine["miss_pct"] <= ref["miss_pct"]
        waits.append((mine["mean_wait_min"], ref["mean_wait_min"]))
    w = np.asarray(waits)
    assert abs(w[:, 0].mean() - w[:, 1].mean()) <= 0.005 * w[:, 1].mean()
