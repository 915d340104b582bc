"""FIFO, SPT and spt_rescue_defer_exp as JAX policies give simulate()'s days job for job."""

import jax
import numpy as np
import pytest

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP, evaluate, rollout, stack_days
from gpu_sched_env.cgrsp.jax import rules as jrules
from tests.cgrsp.jax.helpers import COMBOS, MARKOV, assert_same_records, env_for, joint_heads, reset_to

_RUNS: dict = {}


def _run(env, rule):
    """The jitted rollout of ``rule`` on ``env``, one per env and rule in the process (the params an argument)."""
    if (env, rule.name) not in _RUNS:
        _RUNS[env, rule.name] = jax.jit(lambda s, p: rollout(env, rule, s, p))
    return _RUNS[env, rule.name]


def _check(day, stock, name, seeds, **knobs):
    env = env_for(day, stock)
    rule = jrules.defer_exp_rule(**knobs) if knobs else RULES[name]
    run = _run(env, rule)
    for seed in seeds:  # one compiled reset and rollout for every seed (helpers.reset_to)
        _, st = reset_to(env, seed)
        st = run(st, env.default_params)
        res = simulate(name, day, seed=seed, **(MARKOV if stock == "markov" else {}), **knobs)
        assert bool(st.done)
        assert_same_records(res, st)
        assert int(st.n_miss) == round(res.summary()["miss_pct"] / 100 * res.summary()["n_jobs"])


FAST = {("spt_rescue_defer_exp", c) for c in COMBOS} | {("fifo", ("hectic", "fresh")), ("spt", ("surge", "markov"))}


@pytest.mark.parametrize(
    ("name", "day", "stock"),
    [
        pytest.param(n, d, s, marks=() if (n, (d, s)) in FAST else pytest.mark.slow)
        for n in sorted(RULES)
        for d, s in COMBOS
    ],
)
def test_rule_replays_simulate(day, stock, name):
    _check(day, stock, name, [30])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize(("day", "stock"), COMBOS)
def test_rule_replays_simulate_many_seeds(day, stock, name):
    _check(day, stock, name, range(40, 52))


# the rule before its two corrections and each correction alone: the reference keeps them reachable by its knobs
@pytest.mark.parametrize(
    ("defer_gap", "slot_score", "day", "stock"),
    [
        ("busy", "rule", "hectic", "fresh"),
        ("busy", "rule", "surge", "markov"),
        ("plan", "rule", "surge", "fresh"),
        ("busy", "delay", "hectic", "markov"),
    ],
)
def test_defer_knobs_replay_simulate(defer_gap, slot_score, day, stock):
    _check(day, stock, "spt_rescue_defer_exp", [30, 31], defer_gap=defer_gap, slot_score=slot_score)


def test_the_knobs_matter_and_bad_ones_are_config_errors():
    """The corrected rule and the rule before its corrections play other days (else the knob tests prove nothing)."""
    from gpu_sched_env.core.errors import ConfigError

    env = env_for("surge", "fresh")
    days = stack_days([env.materialise(s) for s in (3, 4)])
    new = evaluate(env, RULES["spt_rescue_defer_exp"], days)
    old = evaluate(env, jrules.defer_exp_rule("busy", "rule"), days)
    assert not np.array_equal(np.asarray(new["mean_wait_min"]), np.asarray(old["mean_wait_min"]))
    assert jrules.defer_exp_rule().name == "spt_rescue_defer_exp"
    with pytest.raises(ConfigError, match="defer_gap = 'soon'.*plan, busy"):
        jrules.defer_exp_rule(defer_gap="soon")
    with pytest.raises(ConfigError, match="slot_score = 'price'.*delay, rule"):
        jrules.defer_exp_rule(slot_score="price")


def test_evaluate_batches_days_and_keys():
    env = env_for("surge", "fresh")
    seeds = [1, 2]
    out = evaluate(env, RULES["spt_rescue_defer_exp"], stack_days([env.materialise(s) for s in seeds]))
    want = [simulate("spt_rescue_defer_exp", "surge", seed=s).summary() for s in seeds]
    np.testing.assert_allclose(np.asarray(out["mean_wait_min"]), [w["mean_wait_min"] for w in want], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(out["cost_usd"]), [w["cost_usd"] for w in want], rtol=1e-9)
    np.testing.assert_allclose(np.asarray(out["miss_pct"]), [w["miss_pct"] for w in want], rtol=1e-12)
    nat = evaluate(env, RULES["fifo"], jax.random.split(jax.random.PRNGKey(0), 3))
    assert (
        np.all(np.asarray(nat["completed"]) == env.spec.n) and len(set(np.asarray(nat["mean_wait_min"]).tolist())) == 3
    )


def test_knob_defaults_are_the_reference_rules():
    from gpu_sched_agents.heuristics.cgrsp.extensions import RULES as REF

    cfg = REF["spt_rescue_defer_exp"].Config.build("spt_rescue_defer_exp")
    assert cfg.theta == jrules.THETA_S and tuple(cfg.spt_weights) == jrules.SPT_WEIGHTS
    assert (
        tuple(cfg.stock_penalty) == jrules.STOCK_PENALTY
        and cfg.defer_scale == jrules.DEFER_SCALE
        and cfg.defer == "expected"
    )
    assert cfg.defer_gap == jrules.DEFER_GAP and cfg.slot_score == jrules.SLOT_SCORE  # the corrections' knobs
    from gpu_sched_agents.heuristics.cgrsp.config import DEFER_GAPS, SLOT_SCORES

    assert tuple(jrules.DEFER_GAPS) == DEFER_GAPS and tuple(jrules.SLOT_RULES) == SLOT_SCORES


def test_an_env_is_freed_with_its_rule_programs():
    """The jitted acts and day programs a rule evaluation keeps close over their env; they live on the env,
    so an env nothing else holds is collected (a weak-keyed module table of them never freed one)."""
    import gc
    import weakref

    from gpu_sched_env.cgrsp.jax import env as env_module

    # an env no other test shares (its own weights), of the same shapes as the surge env of the tests above: its
    # day program is test_the_knobs_matter's (the params are an argument), which JAX's compile cache serves
    env = JaxCGRSP.from_config(joint_heads("surge").replace(reward_weights={"miss": 1.0}))
    out = evaluate(env, RULES["spt_rescue_defer_exp"], stack_days([env.materialise(s) for s in (3, 4)]))
    assert (out["completed"] == env.spec.n).all()
    gone = weakref.ref(env)
    for k in [k for k, v in env_module._SHARED.items() if v is env]:  # from_config's own table of shared envs
        del env_module._SHARED[k]
    del env
    gc.collect()
    assert gone() is None
