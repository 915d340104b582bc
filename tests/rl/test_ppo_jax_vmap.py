"""``jax.vmap(trainer.train)`` over seeds on the JAX env: it finishes, and each seed equals the seed trained alone.

It used to hang on the CPU (a batched QR in the orthogonal initialiser deadlocked XLA's intra-op
thread pool; :func:`gpu_sched_agents.rl.ppo_jax.ppo.network_init`), so the check runs in a child
process with a time limit: a regression fails here instead of hanging the suite. Two layers of
128, as shipped: one 128-wide layer did not hang (fewer, smaller QRs at once).
"""

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import jax
    import numpy as np

    from gpu_sched_agents.rl.ppo_jax.ppo import PPOHyper, make_train
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from gpu_sched_env.cgrsp.jax.bench import joint_heads_config

    env = JaxCGRSP.from_config(joint_heads_config("quiet"), records=False)
    hp = PPOHyper(n_envs=4, n_steps=16, total_timesteps=4 * 16 * 2, batch_size=32, n_epochs=2, net_arch=(128, 128))
    trainer = make_train(hp, env, env.default_params, episode_keys=("mean_wait_min",))
    keys = jax.random.split(jax.random.PRNGKey(7), 2)
    runners, metrics = jax.device_get(jax.jit(jax.vmap(trainer.train))(keys))
    alone = jax.jit(trainer.train)
    for i in range(2):
        one, m_one = jax.device_get(alone(keys[i]))
        both = jax.tree_util.tree_leaves(runners.train_state.params), jax.tree_util.tree_leaves(one.train_state.params)
        for a, b in zip(*both):
            np.testing.assert_allclose(a[i], b, rtol=2e-4, atol=2e-5)
        for k in ("policy_loss", "value_loss", "entropy", "reward_mean", "episodes"):
            np.testing.assert_allclose(metrics[k][i], m_one[k], rtol=2e-4, atol=2e-5, err_msg=k)
        np.testing.assert_array_equal(np.asarray(runners.env_state.t[i]), np.asarray(one.env_state.t))
        assert int(runners.update[i]) == hp.n_updates
    first = jax.tree_util.tree_leaves(runners.train_state.params)[0]
    assert not np.allclose(first[0], first[1])  # two seeds, two networks
    print("VMAP-OK")
    """
)


@pytest.mark.e2e
def test_vmapped_seeds_train_and_equal_each_seed_alone_on_the_jax_env():
    try:
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired as e:  # the hang this guards against
        raise AssertionError("jax.vmap(trainer.train) over 2 seeds did not finish in 900 s (hang?)") from e
    assert out.returncode == 0 and "VMAP-OK" in out.stdout, out.stderr[-3000:]
