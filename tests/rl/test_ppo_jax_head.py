"""An exported actor's factored head (``pi_factored``: wait or act, then which): its distribution, export and play.

Training builds the flat head only; a factored actor is made here from a flat one by renaming its output layer.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gpu_sched_agents.rl.ppo_jax import export
from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy, actor_arrays, save_policy
from gpu_sched_agents.rl.ppo_jax.network import ActorCritic, factored_mode, masked_logits, policy_logits
from gpu_sched_env.core.errors import ConfigError

N = 16  # a hectic joint step: 3 heads × 5 slots, then the wait


def _masks(rows: int, seed: int) -> np.ndarray:
    """Random legal sets with every case: wait and others, only the wait, only others, one other."""
    rng = np.random.default_rng(seed)
    m = rng.random((rows, N)) < 0.4
    m[:, -1] = rng.random(rows) < 0.6
    m[0], m[1] = False, True
    m[0, -1] = True  # only the wait
    m[1, -1] = False  # only others
    m[2] = False
    m[2, [3, -1]] = True  # one other and the wait
    m[~m.any(axis=1), -1] = True
    return m


def test_factored_head_is_the_two_level_distribution():
    z = np.random.default_rng(0).normal(size=(300, N)).astype(np.float32) * 3
    m = _masks(300, 1)
    p = np.asarray(jax.nn.softmax(policy_logits(jnp.asarray(z), jnp.asarray(m), "factored")))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)
    assert (p[~m] == 0).all()  # never an illegal action
    sig = 1 / (1 + np.exp(-z[:, -1]))
    others = m[:, :-1].any(axis=1)
    both = others & m[:, -1]
    np.testing.assert_allclose(p[both, -1], sig[both], rtol=1e-5)  # p(wait) = σ(z) whatever the number of others
    flat = np.asarray(jax.nn.softmax(masked_logits(jnp.asarray(z[:, :-1]), jnp.asarray(m[:, :-1]))))
    np.testing.assert_allclose(p[both, :-1] / (1 - sig[both, None]), flat[both], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(p[~others, -1], 1.0)  # nothing else legal: the wait
    alone = ~m[:, -1]  # the wait illegal: the others' softmax
    np.testing.assert_allclose(p[alone, :-1], flat[alone], rtol=1e-5, atol=1e-7)
    # the flat head is the masked softmax it always was, and NumPy computes both heads as JAX does
    np.testing.assert_array_equal(policy_logits(jnp.asarray(z), jnp.asarray(m)), masked_logits(z, m))
    for head in ("flat", "factored"):
        np.testing.assert_allclose(
            export.policy_logits(z, m, head), np.asarray(policy_logits(jnp.asarray(z), jnp.asarray(m), head)), atol=2e-6
        )
    # its mode is the two-level mode: wait iff σ(z) > 1/2 (where both are legal)
    mode = np.asarray(factored_mode(policy_logits(jnp.asarray(z), jnp.asarray(m), "factored")))
    np.testing.assert_array_equal(mode[both] == N - 1, sig[both] > 0.5)


def factored(params: dict) -> dict:
    """Flax ``params`` of a flat actor with the output layer named as a factored actor's (``pi_factored``)."""
    layers = dict(params["params"])
    layers["pi_factored"] = layers.pop("pi_out")
    return {"params": layers}


def test_a_factored_actor_exports_with_its_head_and_plays_as_in_jax(tmp_path):
    net = ActorCritic(n_actions=N, net_arch=(32,))
    flat = net.init(jax.random.PRNGKey(3), jnp.zeros((1, 40)))
    params = factored(flat)
    x = np.random.default_rng(4).normal(size=(300, 40)).astype(np.float32) * 30  # saturated: far from 1/2
    m = _masks(300, 5)
    logits, _ = net.apply(flat, x)
    policy = NumpyPolicy.load(save_policy(tmp_path / "f.npz", params, 40, N))
    assert (policy.head, policy.n_actions, policy.obs_dim) == ("factored", N, 40)
    want = np.asarray(factored_mode(policy_logits(logits, jnp.asarray(m), "factored")))
    np.testing.assert_array_equal(policy.act(x, m), want)
    assert m[np.arange(300), want].all()
    # read as a flat head the same outputs would play differently: the head matters
    assert (np.asarray(factored_mode(masked_logits(logits, jnp.asarray(m)))) != want).any()
    sampled = np.array([policy.act(x[i], m[i], deterministic=False) for i in range(300)])
    assert m[np.arange(300), sampled].all()
    both = dict(actor_arrays(params)) | {"pi_out/kernel": np.zeros((32, N), np.float32)}
    with pytest.raises(ConfigError, match="name 2 output layers"):
        NumpyPolicy(both)


@pytest.mark.e2e
def test_jax_judge_plays_a_factored_actor_with_its_head():
    """``learned_rule`` picks the head's program: a factored actor's JAX day is its NumPy actions' day."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import _mlp_act, _mlp_act_factored, learned_rule
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from tests.cgrsp.jax.helpers import joint_heads

    env = JaxCGRSP.from_config(joint_heads("quiet", "fresh"), records=False)
    flat = ActorCritic(n_actions=env.n_actions, net_arch=(8,)).init(jax.random.PRNGKey(0), jnp.zeros((1, env.obs_dim)))
    policy = NumpyPolicy(actor_arrays(factored(flat)))
    rule = learned_rule(env, policy)
    assert rule.act is _mlp_act_factored and learned_rule(env, NumpyPolicy(actor_arrays(flat))).act is _mlp_act
    p = env.default_params

    @jax.jit
    def look(s):
        return rule.act(env, s, p, rule.weights), env._obs(s, p), env._action_mask(s, p)

    step = jax.jit(lambda s, a: env.step(jax.random.PRNGKey(8), s, a, p)[1])
    _, s = env.reset(jax.random.PRNGKey(7), p)
    for _ in range(30):  # the JAX rule's action is the NumPy actor's on the same observation and mask
        a, x, m = look(s)
        assert int(a) == int(policy.act(np.asarray(x), np.asarray(m)))
        s = step(s, a)
