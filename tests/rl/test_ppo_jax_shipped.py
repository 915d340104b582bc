"""The per-decision ``algo=ppo_jax`` program gives the numbers it gave before time-aware returns existed.

``GOLDEN``: Σ|w| of each parameter leaf after a tiny run of the shipped hyper-parameters on the JAX
env (quiet day, seed 0), computed on main 9e5adfa (before time-aware returns and the options since
removed existed) with this file's ``tiny_run()``; on the same machine the current code gives the
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
    # XLA's CPU code differs between CPU models (vector widths), so float32 rounding over the tiny training drifts
    # by about 1e-6 of a sum from one machine to another; any change of the program moves them by far more.
    np.testing.assert_allclose(sums, GOLDEN, rtol=1e-5)


@pytest.mark.e2e
def test_time_aware_run_on_the_env(env):
    """τ on the real env (its ``info["dt"]``): finite losses, and another network than the per-decision one."""
    timed, m = tiny_run(env, tau_s=60.0)
    assert np.isfinite(np.asarray(m["value_loss"])).all() and np.isfinite(np.asarray(m["policy_loss"])).all()
    per_decision, _ = tiny_run(env)
    leaves = zip(*(jax.tree_util.tree_leaves(r.train_state.params) for r in (timed, per_decision)))
    assert any(not np.array_equal(a, b) for a, b in leaves)
