"""FIFO, SPT and spt_rescue_defer_exp as JAX policies give simulate()'s days job for job."""

import jax
import numpy as np
import pytest

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP, evaluate, rollout, stack_days
from gpu_sched_env.cgrsp.jax import rules as jrules
from tests.cgrsp.jax.helpers import MARKOV, assert_same_records, joint_heads

COMBOS = [("hectic", "fresh"), ("hectic", "markov"), ("surge", "fresh"), ("surge", "markov")]
ENVS: dict = {}


def env_for(day, stock):
    if (day, stock) not in ENVS:
        ENVS[day, stock] = JaxCGRSP.from_config(joint_heads(day, stock))
    return ENVS[day, stock]


def _check(day, stock, name, seeds):
    env = env_for(day, stock)
    run = jax.jit(lambda s: rollout(env, RULES[name], s, env.default_params))
    for seed in seeds:
        _, st = env.reset_to_day(env.materialise(seed))
        st = run(st)
        res = simulate(name, day, seed=seed, **(MARKOV if stock == "markov" else {}))
        assert bool(st.done)
        assert_same_records(res, st)
        assert int(st.n_miss) == round(res.summary()["miss_pct"] / 100 * res.summary()["n_jobs"])


FAST = {("spt_rescue_defer_exp", c) for c in COMBOS} | {("fifo", ("hectic", "fresh")), ("spt", ("surge", "markov"))}


@pytest.mark.parametrize(("name", "day", "stock"), [
    pytest.param(n, d, s, marks=() if (n, (d, s)) in FAST else pytest.mark.slow) for n in sorted(RULES) for d, s in COMBOS])
def test_rule_replays_simulate(day, stock, name):
    _check(day, stock, name, [30])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize(("day", "stock"), COMBOS)
def test_rule_replays_simulate_many_seeds(day, stock, name):
    _check(day, stock, name, range(40, 52))


def test_evaluate_batches_days_and_keys():
    env = env_for("surge", "fresh")
    seeds = [1, 2]
    out = evaluate(env, RULES["spt_rescue_defer_exp"], stack_days([env.materialise(s) for s in seeds]))
    want = [simulate("spt_rescue_defer_exp", "surge", seed=s).summary() for s in seeds]
    np.testing.assert_allclose(np.asarray(out["mean_wait_min"]), [w["mean_wait_min"] for w in want], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(out["cost_usd"]), [w["cost_usd"] for w in want], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(out["miss_pct"]), [w["miss_pct"] for w in want], rtol=1e-12)
    nat = evaluate(env, RULES["fifo"], jax.random.split(jax.random.PRNGKey(0), 3))
    assert np.all(np.asarray(nat["completed"]) == env.spec.n) and len(set(np.asarray(nat["mean_wait_min"]).tolist())) == 3


def test_knob_defaults_are_the_reference_rules():
    from gpu_sched_agents.heuristics.cgrsp.extensions import RULES as REF

    cfg = REF["spt_rescue_defer_exp"].Config.build("spt_rescue_defer_exp")
    assert cfg.theta == jrules.THETA_S and tuple(cfg.spt_weights) == jrules.SPT_WEIGHTS
    assert tuple(cfg.stock_penalty) == jrules.STOCK_PENALTY and cfg.defer_scale == jrules.DEFER_SCALE and cfg.defer == "expected"
