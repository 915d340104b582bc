"""The default ``algo=ppo_jax`` program is unchanged by the new returns and constraint options; those run on the env.

``GOLDEN``: Σ|w| of each parameter leaf after a tiny run of the shipped hyper-parameters on the JAX
env (quiet day, seed 0), computed on main 9e5adfa (before time-aware returns and the miss
constraint existed) with this file's ``tiny_run()``; on the same machine the new code gives the
same bits. A tolerance of 1e-6 absorbs another CPU's float rounding only.
"""

import jax
import numpy as np
import pytest

from gpu_sched_agents.rl.ppo_jax.ppo import PPOHyper, make_train

GOLDEN = [
    0.02490232727723196,
    276.9385783467146,
    0.019829891360132024,
    0.5711674076337658,
    0.019184271397534758,
    276.96592990594036,
    0.0006040397565811872,
    3.2316031525842845,
]
BASE = dict(
    n_envs=4,
    n_steps=32,
    total_timesteps=4 * 32 * 3,
    batch_size=32,
    n_epochs=2,
    net_arch=(16,),
    gamma=0.95,
    lr_final_frac=0.1,
)


@pytest.fixture(scope="module")
def env():
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from gpu_sched_env.cgrsp.jax.bench import joint_heads_config

    return JaxCGRSP.from_config(joint_heads_config("quiet"), records=False)


def tiny_run(env, **kw):
    hp = PPOHyper(**BASE, **kw)
    return jax.device_get(jax.jit(make_train(hp, env, env.default_params).train)(jax.random.PRNGKey(0)))


@pytest.mark.e2e
def test_the_default_program_gives_mains_numbers(env):
    runner, _ = tiny_run(env)
    sums = [float(np.abs(x).astype(np.float64).sum()) for x in jax.tree_util.tree_leaves(runner.train_state.params)]
    np.testing.assert_allclose(sums, GOLDEN, rtol=1e-6)
    assert float(runner.lam) == 64.0 and float(runner.rho) == 0.0  # carried, never used by the default


@pytest.mark.e2e
def test_time_aware_constrained_run_follows_the_dual_ascent(env):
    """τ and the constraint on the real env: λ after each update is max(0, λ + rate·(rollout miss % − target))."""
    runner, m = tiny_run(env, tau_s=60.0, miss_target_pct=0.0, lambda_rate=2.0, lambda_init_h=64.0, miss_weight=64.0)
    miss, price = np.asarray(m["rollout_miss_pct"]), np.asarray(m["miss_price_h"])
    assert np.isfinite(np.asarray(m["value_loss"])).all()
    assert price[0] == 64.0 and (miss >= 0).all() and miss.max() > 0  # a random policy misses some jobs
    want = np.maximum(0.0, price + 2.0 * (miss - 0.0))
    np.testing.assert_allclose(price[1:], want[:-1], rtol=1e-6)
    assert float(runner.lam) == pytest.approx(want[-1], rel=1e-6) and float(runner.lam) > 64.0
