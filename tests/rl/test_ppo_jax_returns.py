"""algo=ppo_jax's returns and its selection's picks on hand-worked numbers (no env compile).

Time-aware GAE (γ^(Δt/τ)), the lexicographic and worst-regime picks with their second stages,
and a toy run whose every step lasts τ: the time-aware program then learns what the per-decision
one does.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from ppo_jax_toy import ToyEnv

from gpu_sched_agents.rl.ppo_jax import constraint, returns
from gpu_sched_agents.rl.ppo_jax.ppo import PPOHyper, Transition, gae, make_train

R = [1.0, 2.0, 3.0]
V = [0.5, 1.0, 1.5]


def traj(reward, value, dt=None, done=(0.0, 0.0, 0.0)):
    col = lambda x: jnp.asarray(x, jnp.float32)[:, None]  # noqa: E731 [n_steps, 1 env]
    return Transition(None, None, None, None, col(value), col(reward), col(done), None if dt is None else col(dt))


def test_time_aware_gae_reduces_to_the_per_decision_discount_when_every_step_lasts_tau():
    # by hand, γ 0.9, λ 0.5, last value 2: δ = (1.4, 2.35, 3.3); A2 = 3.3, A1 = 2.35 + 0.45·3.3 = 3.835,
    # A0 = 1.4 + 0.45·3.835 = 3.12575
    want = [3.12575, 3.835, 3.3]
    adv, ret = gae(traj(R, V), jnp.asarray([2.0]), 0.9, 0.5)
    np.testing.assert_allclose(adv[:, 0], want, rtol=1e-6)
    g = returns.step_discounts(0.9, jnp.full((3, 1), 60.0), 60.0)
    np.testing.assert_allclose(g, 0.9, rtol=1e-7)
    adv_t, ret_t = gae(traj(R, V), jnp.asarray([2.0]), g, 0.5)
    np.testing.assert_allclose(adv_t[:, 0], want, rtol=1e-6)
    np.testing.assert_allclose(ret_t, ret, rtol=1e-6)


def test_time_aware_gae_discounts_by_elapsed_time():
    # Δt = (0, 120, 60) s with τ = 60 s: γ_t = (1, 0.81, 0.9). δ2 = 3 + 0.9·2 − 1.5 = 3.3;
    # δ1 = 2 + 0.81·1.5 − 1 = 2.215, A1 = 2.215 + 0.81·0.5·3.3 = 3.5515; δ0 = 1 + 1 − 0.5 = 1.5,
    # A0 = 1.5 + 0.5·3.5515 = 3.27575. A same-instant step (Δt = 0) is not discounted.
    g = returns.step_discounts(0.9, jnp.asarray([[0.0], [120.0], [60.0]]), 60.0)
    np.testing.assert_allclose(g[:, 0], [1.0, 0.81, 0.9], rtol=1e-6)
    adv, _ = gae(traj(R, V), jnp.asarray([2.0]), g, 0.5)
    np.testing.assert_allclose(adv[:, 0], [3.27575, 3.5515, 3.3], rtol=1e-6)
    # a day's end cuts the bootstrap and the trace, as in the per-decision GAE
    adv_d, _ = gae(traj(R, V, done=(0.0, 1.0, 0.0)), jnp.asarray([2.0]), g, 0.5)
    np.testing.assert_allclose(adv_d[:, 0], [1.5 + 0.5 * 1.0, 2.0 - 1.0, 3.3], rtol=1e-6)


def test_worst_regime_selection_on_a_hand_made_table():
    """The generalist's pick: fewest regimes with more misses than the rule, then the best worst-regime excess."""
    rules = {"hectic": (44.0, 0.0), "surge": (0.30, 0.0)}  # margins: 2 % of 44 = 0.88 min; surge: the 0.05 floor
    evals = pd.DataFrame(
        {
            "steps": [1, 2, 3, 4],
            "hectic_wait": [44.2, 44.0, 44.9, 43.0],
            "hectic_miss": [0.0, 0.0, 0.0, 0.01],
            "surge_wait": [0.36, 0.40, 0.31, 0.30],
            "surge_miss": [0.0, 0.0, 0.0, 0.0],
        }
    )
    keys = [constraint.worst_regime_key(r, rules, 0.02, 0.05) for _, r in evals.iterrows()]
    assert keys[0] == (0, pytest.approx(1.2))  # surge +0.06 over a 0.05 margin is the worst of its two regimes
    assert keys[2] == (0, pytest.approx(0.9 / 0.88))  # hectic +0.9 over 0.88
    assert keys[3][0] == 1  # the lowest waits, but more misses than the rule in one regime: last
    assert constraint.worst_regime_pick(evals, rules, 0.02, 0.05) == 2
    assert constraint.worst_regime_pick(evals, rules, 0.02, 0.20) == 0  # a 0.2 min floor: hectic decides


def test_lexicographic_selection_on_a_hand_made_table():
    evals = pd.DataFrame(
        {"steps": [1, 2, 3, 4], "mean_wait_min": [40.0, 42.0, 41.0, 45.0], "miss_pct": [0.5, 0.0, 0.02, 0.0]}
    )
    assert constraint.lexicographic_pick(evals, 0.02) == 2  # 0.02 % ties the rule: allowed, lowest wait
    assert constraint.lexicographic_pick(evals, 0.0) == 1  # only the miss-free ones, then the lower wait
    assert constraint.lexicographic_pick(evals, 1.0) == 0  # all within the rule: the lowest wait
    worse = evals.assign(miss_pct=[0.5, 0.3, 0.3, 0.4])
    assert constraint.lexicographic_pick(worse, 0.0) == 2  # none qualifies: fewest misses (0.3 %), then lower wait
    from gpu_sched_agents.rl.ppo_jax.jax_eval import selection_objective

    # the one-job-hour objective would have taken the 40-min checkpoint with 0.5 % missed
    scores = [selection_objective(evals.iloc[[i]]) for i in range(4)]
    assert int(np.argmin(scores)) == 0


def test_the_second_stage_pools_both_stages_days_and_repicks():
    """best_by_key's top rows replayed; pooled_pick weighs each stage by its days and ranks on the pool."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, TEST_SEED0

    assert constraint.SELECTION_ROOM == TEST_SEED0 - SELECT_SEED0
    evals = pd.DataFrame(
        {"mean_wait_min": [43.0, 43.5, 44.0, 42.0], "miss_pct": [0.0, 0.0, 0.0, 0.2]}, index=[8, 9, 10, 11]
    )
    assert constraint.best_by_key(evals, 0.0, 2) == [8, 9]  # 11 misses: last, whatever its wait
    table, pick = constraint.pooled_pick(evals, {8: (43.2, 0.01), 9: (43.4, 0.0)}, 100, 900, 0.0, 0.0)
    assert pick == 9  # 8 misses on the further days
    assert table.pooled_miss_pct[8] == pytest.approx(0.009) and table.pooled_wait_min[9] == pytest.approx(43.41)
    assert table.recheck_wait_min.isna().tolist() == [False, False, True, True]
    table, pick = constraint.pooled_pick(evals, {8: (43.2, 0.01), 9: (43.4, 0.0)}, 100, 900, 0.0, 0.01)
    assert pick == 8 and table.pooled_rule_miss_pct.iloc[0] == pytest.approx(0.009)  # the rule missed as much


def test_the_worst_regime_second_stage_pools_each_regime_and_repicks():
    rules = {"hectic": (44.0, 0.0), "surge": (0.30, 0.0)}
    evals = pd.DataFrame(
        {"hectic_wait": [44.0, 44.3, 43.0], "hectic_miss": [0.0, 0.0, 0.5], "surge_wait": [0.31, 0.30, 0.30]}
    ).assign(surge_miss=0.0)
    assert constraint.best_by_worst_regime(evals, rules, 0.02, 0.05, 2) == [0, 1]  # 2 misses: last
    assert constraint.best_by_worst_regime(evals, rules, 0.02, 0.05, 1) == [
        constraint.worst_regime_pick(evals, rules, 0.02, 0.05)
    ]
    replayed = {0: {"hectic_wait": 44.0, "hectic_miss": 0.02, "surge_wait": 0.3, "surge_miss": 0.0}}
    replayed[1] = {"hectic_wait": 44.3, "hectic_miss": 0.0, "surge_wait": 0.3, "surge_miss": 0.0}
    second = {"hectic": (44.0, 0.0), "surge": (0.30, 0.0)}
    table, pick = constraint.pooled_regime_pick(evals, replayed, 100, 900, rules, second, 0.02, 0.05)
    assert pick == 1 and table.pooled_hectic_miss[0] == pytest.approx(0.018)  # 0 misses on the further days
    assert table.recheck_hectic_wait.isna().tolist() == [False, False, True]
    _, pick = constraint.pooled_regime_pick(
        evals, replayed, 100, 900, rules, {**second, "hectic": (44.0, 0.02)}, 0.02, 0.05
    )
    assert pick == 0  # the rule misses as much there: 0's lower worst excess wins


class ClockedToy(ToyEnv):
    """The toy MDP whose every step lasts ``TAU`` simulated seconds (``info["dt"]``)."""

    TAU = 30.0

    def step(self, key, s, action, params):
        obs, s2, reward, done, info = super().step(key, s, action, params)
        return obs, s2, reward, done, {**info, "dt": jnp.float32(self.TAU)}


@pytest.mark.e2e
def test_time_aware_training_equals_per_decision_when_every_step_lasts_tau():
    env = ClockedToy()
    base = dict(n_envs=4, n_steps=8, total_timesteps=4 * 8 * 4, batch_size=16, n_epochs=2, net_arch=(8,), gamma=0.9)
    per_decision, _ = jax.jit(make_train(PPOHyper(**base), env, env.default_params).train)(jax.random.PRNGKey(0))
    clocked = PPOHyper(**base, tau_s=ClockedToy.TAU)
    assert clocked.time_aware
    timed, _ = jax.jit(make_train(clocked, env, env.default_params).train)(jax.random.PRNGKey(0))
    for a, b in zip(
        jax.tree_util.tree_leaves(per_decision.train_state.params), jax.tree_util.tree_leaves(timed.train_state.params)
    ):  # equal to float rounding (γ·λ is rounded once in float64 on the per-decision path)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-6)
    halved = PPOHyper(**base, tau_s=2 * ClockedToy.TAU)  # γ per 60 s: a longer horizon, another network
    other, _ = jax.jit(make_train(halved, env, env.default_params).train)(jax.random.PRNGKey(0))
    diff = [
        np.abs(np.asarray(a) - np.asarray(b)).max()
        for a, b in zip(
            jax.tree_util.tree_leaves(per_decision.train_state.params),
            jax.tree_util.tree_leaves(other.train_state.params),
        )
    ]
    assert max(diff) > 1e-4
