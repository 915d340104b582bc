"""The JAX env equals CGRSP-v0 under ``action_mode="joint_hold"``.

Random masked play (holds included) on the reference's draws, step for step: hectic and surge ×
fresh and Markov stock, prefixes past the first miss, one whole day; the release of a hold on
hand-built states (status change, laxity trigger) decided alike.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP, evaluate
from gpu_sched_env.cgrsp.jax.hold import JaxHold, release
from gpu_sched_env.cgrsp.stock import defer_cost, next_event_gap
from tests.cgrsp.jax.helpers import assert_same_records, design_env, joint_heads, reset_to, side_by_side
from tests.cgrsp.jax.test_deadline_credit import steps_to_first_miss


def hold_design(day: str, stock: str):
    return joint_heads(day, stock).replace(action_mode="joint_hold")


def env_for(day: str, stock: str) -> JaxHold:
    return design_env("joint_hold", day, stock)[1]


def test_layout_and_supported():
    env = env_for("surge", "fresh")
    assert isinstance(env, JaxHold)
    assert env.n_actions == 3 * env.spec.c + env.spec.t + 1 and env.wait_action == env.n_actions - 1


@pytest.mark.parametrize(
    ("day", "stock"), [("hectic", "fresh"), ("hectic", "markov"), ("surge", "fresh"), ("surge", "markov")]
)
def test_prefix_to_a_miss(day, stock):
    cfg, env = design_env("joint_hold", day, stock)
    n = steps_to_first_miss(cfg, 5) + 10
    ref, st, _, steps = side_by_side(env, cfg, 5, max_steps=n, horizon_s=4 * 86400.0, rew_rtol=1e-7)
    assert steps == n and ref.ledger.episode_raw["miss"] >= 1
    np.testing.assert_array_equal(np.asarray(st.held), [g in ref.actions.held for g in range(env.spec.t)])
    assert_same_records(ref.sim, st)


def test_whole_day():
    cfg, env = design_env("joint_hold", "surge", "fresh")
    ref, st, info, _ = side_by_side(env, cfg, 7, horizon_s=20 * 86400.0, rew_rtol=1e-7)
    assert bool(st.done)
    assert_same_records(ref.sim, st)
    summ = ref.result().summary()
    np.testing.assert_allclose(float(info["mean_wait_min"]), summ["mean_wait_min"], rtol=1e-9)
    assert int(info["miss"]) == round(summ["miss_pct"] / 100 * summ["n_jobs"])


@pytest.mark.parametrize("stock", ["fresh", "markov"])
def test_release_on_hand_built_states(stock):
    """The status change and the laxity trigger release a hold alike in both envs (the first decision point)."""
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    cfg, env = design_env("joint_hold", "hectic", stock)
    ref = CGRSPEnv(cfg)
    ref.reset(seed=0)
    sim = ref.sim
    _, st = reset_to(env, 0)
    g = sim.fleet.slot_type[0]
    j = next(iter(sim.waiting))
    w = sim.fleet.wbar[sim.complexity[j]][g]
    cost = defer_cost(sim, g, next_event_gap(sim))
    for offset, status_change, kept in [(1.0, False, True), (-1.0, False, False), (1.0, True, False)]:
        d = sim.t + w + cost + offset
        lvl = sim.stock[g]
        now = (lvl + 1) % 3 if status_change else lvl
        sim.deadline[j], sim.stock[g] = d, now
        ref.actions.held = {g: lvl}
        ref.actions.on_advance(sim, True)
        s = st.replace(
            day=st.day.replace(deadline=st.day.deadline.at[j].set(d)),
            stock=st.stock.at[g].set(now),
            held=jnp.zeros_like(st.held).at[g].set(True),
            held_level=st.held_level.at[g].set(lvl),
        )
        got = np.asarray(jax.jit(lambda s: release(env, env.default_params, s))(s))
        assert (g in ref.actions.held) == kept == bool(got[g]), (offset, status_change)
        sim.stock[g] = lvl


@pytest.mark.slow  # two compiles of a vmapped rollout: ~2.5 min on the 2-core machine
def test_rules_play_the_same_day_as_in_the_joint_design():
    """The JAX rules never hold: on this design they play the joint design's day (the baselines of ppo_jax)."""
    hold, joint = env_for("hectic", "fresh"), JaxCGRSP.from_config(joint_heads("hectic", "fresh"))
    keys = jax.random.split(jax.random.PRNGKey(3), 2)
    a = evaluate(hold, RULES["spt_rescue_defer_exp"], keys)
    b = evaluate(joint, RULES["spt_rescue_defer_exp"], keys)
    np.testing.assert_allclose(np.asarray(a["mean_wait_min"]), np.asarray(b["mean_wait_min"]), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(a["miss"]), np.asarray(b["miss"]))


def test_illegal_actions_play_their_substitute_and_lose_no_job():
    """joint_hold has a defined outcome for every action too: an illegal one plays the substitute
    (wait where legal, else the lowest legal action; ``legal.legalise``), is flagged and counted, a
    day of 30 % illegal actions still completes every job, and ``checked=True`` raises naming the action."""
    from gpu_sched_env.cgrsp.jax.illegal import illegal_play

    env = JaxCGRSP.from_config(hold_design("hectic", "fresh"), records=False)
    out = illegal_play(env, jax.random.split(jax.random.PRNGKey(3), 2), 0.3, jax.random.PRNGKey(4))
    assert (out["completed"] == out["n_jobs"]).all()
    assert (out["n_invalid"] > 0).all()
    p = env.default_params
    _, s = reset_to(env, 0)  # a day's first state (the reference's draws: compiles ~4x faster than a native reset)
    mask = np.asarray(env.action_mask(s, p))
    bad = int(np.flatnonzero(~mask)[0])
    want = env.wait_action if mask[-1] else int(np.argmax(mask))
    got, want_out = env.step(jax.random.PRNGKey(1), s, bad, p), env.step(jax.random.PRNGKey(1), s, want, p)
    assert bool(got[4]["invalid_action"]) and int(got[1].n_invalid) == 1
    assert np.array_equal(np.asarray(got[0]), np.asarray(want_out[0])) and float(got[2]) == float(want_out[2])
    checked = JaxCGRSP.from_config(hold_design("hectic", "fresh"), records=False, checked=True)
    with pytest.raises(Exception, match=f"action {bad} is illegal in the joint_hold design"):
        jax.block_until_ready(checked.step(jax.random.PRNGKey(1), s, bad, p))


def test_a_day_of_holds_ends_within_the_step_cap():
    """Holding whenever a hold is legal, else waiting whenever that is legal, is a legal policy: it
    needs more than 3·N steps (the joint design's cap, which once flagged such days as stalled),
    completes every job, and stays within ``rules.cap_of`` (3·N + T·(3·N + 1))."""
    from jax import lax

    from gpu_sched_env.cgrsp.jax.rules import cap_of, max_steps_of

    env = JaxCGRSP.from_config(hold_design("hectic", "markov"), records=False)
    p, kc = env.default_params, env.K * env.spec.c
    cap = cap_of(env)
    assert cap == max_steps_of(env.spec.n, env.n_hold) == 3 * env.spec.n + env.n_hold * (3 * env.spec.n + 1)

    @jax.jit
    def play(key):
        _, s = env._reset(key, p)

        def body(c):
            s, i, holds = c
            m = env._action_mask(s, p)
            hold = m[kc : kc + env.n_hold]
            other = jnp.where(m[env.wait_action], env.wait_action, jnp.argmax(m))
            a = jnp.where(hold.any(), kc + jnp.argmax(hold), other).astype(jnp.int32)
            holds = holds + ((a >= kc) & (a < kc + env.n_hold)).astype(jnp.int32)
            return env._step(key, s, a, p)[1], i + 1, holds

        zero = jnp.zeros((), jnp.int32)
        s, steps, holds = lax.while_loop(lambda c: ~c[0].done & (c[1] < cap), body, (s, zero, zero))
        return s.done, s.n_completed, steps, holds

    done, completed, steps, holds = (int(x) for x in play(jax.random.PRNGKey(0)))
    assert done and completed == env.spec.n
    assert 3 * env.spec.n < steps <= cap and holds > 2 * env.spec.n
