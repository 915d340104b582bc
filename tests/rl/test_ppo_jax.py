"""algo=ppo_jax's core on a toy MDP with a known optimum: PPO learns it, masks hold, export is exact."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from ppo_jax_toy import MASK, N_CTX, R, T, ToyEnv, optimal_return, random_return
from stable_baselines3.common.running_mean_std import RunningMeanStd

from gpu_sched_agents.rl.policies import factored_mode as torch_factored_mode
from gpu_sched_agents.rl.ppo_jax.export import (
    NumpyPolicy,
    actor_arrays,
    flatten_without_mask,
    save_policy,
)
from gpu_sched_agents.rl.ppo_jax.network import ActorCritic, factored_mode, masked_logits
from gpu_sched_agents.rl.ppo_jax.ppo import (
    PPOHyper,
    RewardStats,
    Transition,
    _update_stats,
    _update_stats_by_regime,
    gae,
    make_train,
)

HP = PPOHyper(
    n_envs=16,
    n_steps=32,
    total_timesteps=16 * 32 * 60,
    batch_size=128,
    n_epochs=4,
    learning_rate=3e-3,
    gamma=0.99,
    net_arch=(32, 32),
)


def greedy_return(policy: NumpyPolicy) -> tuple[float, int]:
    """Mean return of ``policy``'s deterministic action over the four start contexts, and illegal picks."""
    total, illegal = 0.0, 0
    for c0 in range(N_CTX):
        c = c0
        for t in range(T):
            a = int(policy.act(ToyEnv.flatten_obs({"c": c, "t": t}), MASK[c]))
            illegal += not MASK[c, a]
            total += R[c, a]
            c = (c + a) % N_CTX
    return total / N_CTX, illegal


@pytest.fixture(scope="module")
def trained():
    env = ToyEnv()
    trainer = make_train(HP, env, env.default_params)
    runner, metrics = jax.jit(trainer.train)(jax.random.PRNGKey(0))
    return trainer, runner, jax.device_get(metrics)


@pytest.mark.e2e
def test_ppo_learns_the_toy_optimum_through_the_mask(trained):
    _, runner, metrics = trained
    opt, rnd = optimal_return(), random_return()
    assert opt - rnd > 1.0  # the optimum needs planning: a random legal policy is far below
    policy = NumpyPolicy(actor_arrays(jax.device_get(runner.train_state.params)))
    ret, illegal = greedy_return(policy)
    assert illegal == 0
    assert ret >= 0.98 * opt, (ret, opt)
    # sampled training returns rose from the random policy's level to near the optimum
    first, last = np.nanmean(metrics["episode_return"][:3]), np.nanmean(metrics["episode_return"][-10:])
    assert first < rnd + 0.3 and last > 0.9 * opt, (first, last)
    assert int(runner.update) == HP.n_updates
    # one fresh day per env per update: every day after an env's first in an update is a replay, counted
    assert (metrics["episodes"] >= HP.n_envs).all()
    np.testing.assert_array_equal(metrics["replayed_days"], metrics["episodes"] - HP.n_envs)


@pytest.mark.e2e
def test_training_is_reproducible_and_vmaps_over_seeds():
    env = ToyEnv()
    hp = PPOHyper(n_envs=4, n_steps=8, total_timesteps=4 * 8 * 3, batch_size=16, n_epochs=2, net_arch=(8,))
    trainer = make_train(hp, env, env.default_params)
    keys = jax.random.split(jax.random.PRNGKey(1), 2)
    runners, _ = jax.jit(jax.vmap(trainer.train))(keys)
    one, _ = jax.jit(trainer.train)(keys[1])
    for a, b in zip(
        jax.tree_util.tree_leaves(runners.train_state.params), jax.tree_util.tree_leaves(one.train_state.params)
    ):
        np.testing.assert_allclose(np.asarray(a[1]), np.asarray(b), rtol=1e-5, atol=1e-6)
    a0 = jax.tree_util.tree_leaves(runners.train_state.params)[0]
    assert not np.allclose(a0[0], a0[1])  # two seeds, two networks
    # split budgets: run(init, 1) then run(·, 2) equals run(init, 3)
    r1, _ = trainer.run(trainer.init(keys[0]), 1)
    r3, _ = trainer.run(r1, 2)
    whole, _ = trainer.train(keys[0])
    for a, b in zip(jax.tree_util.tree_leaves(r3), jax.tree_util.tree_leaves(whole)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_selection_objective_prices_a_miss_as_a_job_hour():
    import pandas as pd

    from gpu_sched_agents.rl.ppo_jax.jax_eval import selection_objective

    days = pd.DataFrame({"mean_wait_min": [40.0, 42.0], "miss_pct": [0.0, 1.0]})
    # mean wait 41 min + 0.5 % of the jobs missed × 60 min each = 41.3
    assert selection_objective(days) == pytest.approx(41.3)
    assert selection_objective(days.assign(miss_pct=0.0)) < selection_objective(days)


def test_numpy_forward_equals_the_jax_forward(tmp_path):
    net = ActorCritic(n_actions=16, net_arch=(64, 32))
    params = net.init(jax.random.PRNGKey(3), jnp.zeros((1, 249)))
    x = np.random.default_rng(0).normal(size=(200, 249)).astype(np.float32) * 3
    mask = np.random.default_rng(1).random((200, 16)) < 0.4
    mask[:, -1] = np.random.default_rng(2).random(200) < 0.5
    mask[~mask.any(axis=1), 0] = True
    logits, _ = net.apply(params, x)
    path = save_policy(tmp_path / "p.npz", params, 249, 16)
    policy = NumpyPolicy.load(path)
    np.testing.assert_allclose(policy.logits(x), np.asarray(logits), rtol=1e-5, atol=1e-5)
    jax_act = np.asarray(factored_mode(masked_logits(logits, jnp.asarray(mask))))
    np.testing.assert_array_equal(policy.act(x, mask), jax_act)
    assert mask[np.arange(200), jax_act].all()  # never an illegal action
    # the two-level mode is algo=ppo's (torch) on the same probabilities
    import torch as th

    p = th.softmax(th.as_tensor(np.array(masked_logits(logits, jnp.asarray(mask)))), dim=1)
    np.testing.assert_array_equal(torch_factored_mode(p).numpy(), jax_act)
    sampled = np.array([policy.act(x[i], mask[i], deterministic=False) for i in range(200)])
    assert mask[np.arange(200), sampled].all()


def test_policy_file_errors(tmp_path):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match="does not exist"):
        NumpyPolicy.load(tmp_path / "none.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ConfigError, match="not an exported ppo_jax policy"):
        NumpyPolicy.load(tmp_path / "other.npz")
    policy = NumpyPolicy({"pi_out/kernel": np.zeros((3, 2), np.float32), "pi_out/bias": np.zeros(2, np.float32)})
    with pytest.raises(ConfigError, match="needs action_masks"):
        policy.predict(np.zeros(3, np.float32))


def test_flatten_without_mask_drops_only_the_mask():
    from gymnasium import spaces

    space = spaces.Dict(
        {"action_mask": spaces.MultiBinary(3), "a": spaces.Box(0, 1, (2, 2)), "b": spaces.Box(0, 1, (3,))}
    )
    obs = {
        "action_mask": np.array([1, 0, 1], np.int8),
        "a": np.arange(4.0).reshape(2, 2),
        "b": np.array([7.0, 8.0, 9.0]),
    }
    np.testing.assert_array_equal(flatten_without_mask(space, obs), [0, 1, 2, 3, 7, 8, 9])


def test_gae_matches_a_plain_loop():
    rng = np.random.default_rng(0)
    n, e = 7, 3
    r, v, d = rng.normal(size=(n, e)), rng.normal(size=(n, e)), rng.random((n, e)) < 0.3
    last = rng.normal(size=e)
    t = Transition(
        None, None, None, None, jnp.asarray(v, jnp.float32), jnp.asarray(r, jnp.float32), jnp.asarray(d, jnp.float32)
    )
    adv, ret = gae(t, jnp.asarray(last, jnp.float32), 0.9, 0.8)
    want = np.zeros((n, e))
    nxt_adv, nxt_v = np.zeros(e), last
    for i in reversed(range(n)):
        delta = r[i] + 0.9 * nxt_v * (1 - d[i]) - v[i]
        nxt_adv = delta + 0.9 * 0.8 * (1 - d[i]) * nxt_adv
        want[i], nxt_v = nxt_adv, v[i]
    np.testing.assert_allclose(adv, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ret, want + v, rtol=1e-5, atol=1e-5)


def test_reward_scaling_is_vecnormalizes():
    """The running return statistics and scaled rewards equal SB3 VecNormalize's (rewards only)."""
    rng = np.random.default_rng(0)
    rms, ret = RunningMeanStd(shape=()), np.zeros(4)
    s = RewardStats(jnp.float32(0.0), jnp.float32(1.0), jnp.float32(1e-4), jnp.zeros(4))
    for _ in range(50):
        r, d = rng.normal(3.0, 2.0, 4), rng.random(4) < 0.1
        ret = ret * 0.9 + r
        rms.update(ret)
        want = np.clip(r / np.sqrt(rms.var + 1e-8), -10, 10)
        ret[d] = 0
        s, got = _update_stats(s, jnp.asarray(r, jnp.float32), jnp.asarray(d), 0.9)
        np.testing.assert_allclose(got, want, rtol=2e-4)
    np.testing.assert_allclose(float(s.var), rms.var, rtol=2e-4)


def test_reward_scaling_per_regime_is_vecnormalize_per_regime():
    """Per regime: each regime's statistic is VecNormalize's over its own envs' returns, its rewards scaled by it."""
    rng = np.random.default_rng(1)
    regime = np.array([0, 0, 1, 1, 1, 2])  # regime 2's envs are all but one step idle below; regime 3 never plays
    rms, ret = [RunningMeanStd(shape=()) for _ in range(4)], np.zeros(6)
    ones = jnp.ones(4, jnp.float32)
    s = RewardStats(0.0 * ones, ones, 1e-4 * ones, jnp.zeros(6))
    for step in range(40):
        reg = regime if step % 10 == 0 else np.where(regime == 2, 0, regime)  # regime 2 only every tenth step
        r = rng.normal(np.where(reg == 1, 300.0, 3.0), 2.0)  # regime 1's rewards two orders larger
        d = rng.random(6) < 0.1
        ret = ret * 0.9 + r
        for g in np.unique(reg):
            rms[g].update(ret[reg == g])
        want = np.clip(r / np.sqrt(np.array([rms[g].var for g in reg]) + 1e-8), -10, 10)
        ret[d] = 0
        s, got = _update_stats_by_regime(s, jnp.asarray(r, jnp.float32), jnp.asarray(d), 0.9, jnp.asarray(reg))
        np.testing.assert_allclose(got, want, rtol=5e-4)
    np.testing.assert_allclose(np.asarray(s.var)[:3], [m.var for m in rms[:3]], rtol=5e-4)
    assert float(s.var[3]) == 1.0 and float(s.count[3]) == pytest.approx(1e-4)  # untouched


def test_reward_norm_by_regime_is_refused_on_a_single_regime_env():
    from gpu_sched_env.core.errors import ConfigError

    env = ToyEnv()
    env.is_mixed = False
    with pytest.raises(ConfigError, match=r"reward_norm = 'regime' with normalize_reward = True on a single-regime"):
        make_train(PPOHyper(reward_norm="regime"), env, env.default_params)
    with pytest.raises(ConfigError, match=r"algo.reward_norm = 'task' is not known; allowed: global, regime"):
        make_train(PPOHyper(reward_norm="task"), env, env.default_params)


@pytest.mark.e2e
def test_learned_rule_plays_new_weights_through_one_compiled_day():
    """Judging a learner every few updates compiles its day once: the weights are an argument of the program."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import _mlp_act, learned_rule, per_day, test_keys
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from gpu_sched_env.cgrsp.jax import rules as jrules
    from tests.cgrsp.jax.helpers import joint_heads

    env = JaxCGRSP.from_config(joint_heads("surge", "fresh"), records=False)
    net = ActorCritic(n_actions=env.n_actions, net_arch=(16,))
    nets = [NumpyPolicy(actor_arrays(net.init(jax.random.PRNGKey(k), jnp.zeros((1, env.obs_dim))))) for k in (0, 1)]
    keys = test_keys(2)
    first, second = (per_day(env, {"net": learned_rule(env, p)}, keys) for p in nets)
    program = jrules._day_metrics(env, learned_rule(env, nets[0]), jrules.max_steps_of(env.spec.n))
    assert program._cache_size() == 1  # the second network reused the first one's program
    assert not np.allclose(first.mean_wait_min, second.mean_wait_min)  # and played as itself
    # five days two at a time (the last batch padded): the same program; the days as in one batch of five
    chunked = per_day(env, {"net": learned_rule(env, nets[1])}, test_keys(5), chunk=2)
    assert program._cache_size() == 1
    whole = per_day(env, {"net": learned_rule(env, nets[1])}, test_keys(5), chunk=5)
    assert program._cache_size() == 2 and chunked.day_index.tolist() == list(range(5))
    pd.testing.assert_frame_equal(chunked, whole)
    pd.testing.assert_frame_equal(chunked.head(2), second)
    w = learned_rule(env, nets[1]).weights
    closed = per_day(env, {"net": lambda s, p: _mlp_act(env, s, p, w)}, keys)  # the weights as constants
    np.testing.assert_allclose(second[list(closed.columns[2:])], closed[list(closed.columns[2:])], rtol=1e-6)


def test_a_rules_jax_days_are_stored_and_a_learners_never(tmp_path, monkeypatch):
    """per_day keeps a registered rule's days in the user's cache (served equal); a learned actor is always played.

    The days are played by a stand-in for ``rules.evaluate`` that counts its calls (the real one's
    programs are the JAX suite's to test; compiling one here would cost more than the rest of this file).
    """
    import pandas as pd

    from gpu_sched_agents.rl.ppo_jax.jax_eval import METRICS, learned_rule, per_day, test_keys
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP
    from gpu_sched_env.cgrsp.jax import rules as jrules
    from gpu_sched_env.core.store import REFERENCE_CACHE
    from tests.cgrsp.jax.helpers import joint_heads

    played = []

    def fake_evaluate(on, rule, keys):
        played.append(rule.name)
        base = np.asarray(jax.random.key_data(keys), float)[:, -1] / 2**32
        return {m: base + k for k, m in enumerate(METRICS)}

    monkeypatch.setattr(jrules, "evaluate", fake_evaluate)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    store = tmp_path / "gpu_sched_env" / "jax_rule_days"
    env = JaxCGRSP.from_config(joint_heads("surge", "fresh"), records=False)
    rule, keys = {"r": RULES["spt_rescue_defer_exp"]}, test_keys(3)
    fresh = per_day(env, rule, keys)  # tests/conftest.py turns the stores off
    assert not store.exists() and played == ["spt_rescue_defer_exp"]
    monkeypatch.delenv(REFERENCE_CACHE)
    pd.testing.assert_frame_equal(per_day(env, rule, keys), fresh)
    assert len(list(store.glob("chunk-*"))) == 1 and len(played) == 2
    pd.testing.assert_frame_equal(per_day(env, {"x": RULES["spt_rescue_defer_exp"]}, keys), fresh.assign(policy="x"))
    assert len(played) == 2  # served, not played
    per_day(env, rule, test_keys(3, 10_000))  # other days: another cell
    assert len(list(store.glob("chunk-*"))) == 2 and len(played) == 3
    net = ActorCritic(n_actions=env.n_actions, net_arch=(16,))
    actor = NumpyPolicy(actor_arrays(net.init(jax.random.PRNGKey(0), jnp.zeros((1, env.obs_dim)))))
    for _ in range(2):
        per_day(env, {"net": learned_rule(env, actor)}, keys)
    assert len(list(store.glob("chunk-*"))) == 2 and len(played) == 5  # a learner: played each time
