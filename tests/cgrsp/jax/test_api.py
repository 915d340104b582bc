"""The JAX env's API: optional import, what it supports, shapes, jit/vmap, auto-reset, flat observation."""

import subprocess
import sys

import gymnasium.spaces as spaces
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.jax import JaxCGRSP
from gpu_sched_env.core.errors import ConfigError
from tests.cgrsp.jax.helpers import joint_heads, reset_to


def test_import_without_jax_names_the_extra():
    code = "import sys; sys.modules['jax'] = None\nimport gpu_sched_env.cgrsp.jax"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0 and "ImportError" in out.stderr and "gpu_sched_env[jax]" in out.stderr


def test_nothing_else_imports_jax():
    code = (
        "import importlib, pathlib, sys, gpu_sched_env\n"
        "root = pathlib.Path(gpu_sched_env.__file__).parent\n"
        "for f in sorted(root.rglob('*.py')):\n"
        "    parts = ('gpu_sched_env',) + f.relative_to(root).with_suffix('').parts\n"
        "    if parts[1:3] != ('cgrsp', 'jax'):\n"
        "        importlib.import_module('.'.join(p for p in parts if p != '__init__'))\n"
        "assert 'jax' not in sys.modules, 'jax imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


def test_joint_heads_helper_is_hydras_config():
    from gpu_sched_agents.rl.compose import composed_env

    assert composed_env("hectic", "experiment=joint_heads") == joint_heads("hectic")


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"action_mode": "slot"}, "action_mode"),
        ({"window": 16}, "window"),
        ({"order": "deadline"}, "order"),
        ({"window_by": "order"}, "window_by"),
        ({"shaping": "queue"}, "shaping"),
    ],
)
def test_unsupported_designs_raise(change, name):
    with pytest.raises(
        ConfigError, match=rf"{name} = .* is not supported by the JAX env.*supported: action_mode in \('joint',\)"
    ):
        JaxCGRSP.from_config(joint_heads().replace(**change))


def test_supported_variants_build_and_bad_dtype():
    env = JaxCGRSP.from_config(joint_heads("quiet"), reward="study", features="basic", slot_rows=5)
    assert env.obs_dim == spaces.flatdim(CGRSPEnv(env.cfg).observation_space) - env.n_actions
    with pytest.raises(ConfigError, match="dtype"):
        JaxCGRSP.from_config(joint_heads("quiet"), dtype=jnp.int32)
    with jax.enable_x64(False), pytest.raises(ConfigError, match="jax_enable_x64"):
        JaxCGRSP.from_config(joint_heads("quiet"), dtype=jnp.float64)


def test_from_config_serves_one_env_per_config_and_builds_anew_for_any_difference():
    """An env is immutable: equal requests share it (and its compiled programs); any difference builds another."""
    env = JaxCGRSP.from_config(joint_heads("quiet"), records=False)
    assert JaxCGRSP.from_config(joint_heads("quiet"), records=False) is env
    assert JaxCGRSP.from_config(dict(vars(joint_heads("quiet"))), records=False) is env  # the same config as keywords
    for other in (
        JaxCGRSP.from_config(joint_heads("quiet"), records=True),
        JaxCGRSP.from_config(joint_heads("quiet"), records=False, checked=True),
        JaxCGRSP.from_config(joint_heads("quiet"), records=False, dtype=jnp.float32),
        JaxCGRSP.from_config(joint_heads("quiet"), records=False, reward_weights={"miss": 1.0}),
        JaxCGRSP.from_config(joint_heads("hectic"), records=False),
    ):
        assert other is not env and (other.records, other.checked, other.dtype, other.cfg) != (
            env.records,
            env.checked,
            env.dtype,
            env.cfg,
        )
    mixed = JaxCGRSP.mixed(joint_heads("quiet"), stocks=("fresh", 900))
    assert JaxCGRSP.mixed(joint_heads("quiet"), stocks=("fresh", 900)) is mixed
    assert JaxCGRSP.mixed(joint_heads("quiet"), stocks=("fresh",)) is not mixed
    assert JaxCGRSP.mixed(joint_heads("quiet"), stocks=("fresh", 900), days={"quiet": 1.0}) is not mixed


def test_flat_obs_is_gymnasium_flatten_without_the_mask():
    cfg = joint_heads("surge")
    env, ref = JaxCGRSP.from_config(cfg), CGRSPEnv(cfg)
    o, _ = ref.reset(seed=4)
    flat = spaces.flatten(ref.observation_space, o)
    assert list(ref.observation_space.spaces)[0] == "action_mask"
    np.testing.assert_array_equal(env.flatten_obs(o), flat[env.n_actions :])
    assert env.obs_dim == flat.size - env.n_actions == 233
    obs, _ = reset_to(env, 4)
    assert obs.shape == (env.obs_dim,) and obs.dtype == jnp.float32
    with pytest.raises(ConfigError, match="model"):
        env.flatten_obs({k: v for k, v in o.items() if k != "model"})


def test_vmapped_autoreset_keeps_shapes_and_starts_new_days():
    env = JaxCGRSP.from_config(joint_heads("quiet"))  # 6 jobs: days end within the run
    p = env.default_params
    keys = jax.random.split(jax.random.PRNGKey(1), 8)
    obs, st = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, p)  # jitted: eagerly, each op a program

    def one(carry, k):
        obs, st = carry
        m = env.action_mask(st, p)
        a = jax.random.categorical(k, jnp.where(m, 0.0, -jnp.inf))
        obs, st, r, d, info = env.step_autoreset(k, st, a, p)
        return (obs, st), (d, r, info["job"])

    @jax.jit
    def run(obs, st, key):
        ks = jax.random.split(key, 8 * 60).reshape(60, 8, 2)
        return jax.lax.scan(
            lambda c, k: jax.vmap(lambda o, s, kk: one((o, s), kk), in_axes=(0, 0, 0))(c[0], c[1], k), (obs, st), ks
        )

    (obs, st), (done, rew, job) = run(obs, st, jax.random.PRNGKey(2))
    assert obs.shape == (8, env.obs_dim) and done.shape == (60, 8)
    assert int(done.sum()) >= 8  # every env finished at least one 6-job day
    assert np.all(np.isfinite(np.asarray(rew)))
    assert not bool(st.done.any())  # finished days were replaced
    assert np.all(np.asarray(st.n_steps) < 60)


def test_pool_reset_is_the_rows_start_state():
    lean = JaxCGRSP.from_config(joint_heads("quiet"), records=False)
    pooled = lean.with_pool(jax.random.PRNGKey(0), lean.default_params, 3)
    obs, st = lean.reset(jax.random.PRNGKey(1), pooled)
    assert obs.shape == (lean.obs_dim,) and 0 <= int(st.day_idx) < 3 and st.dispatch.shape == (0,)
    # jitted whole: run eagerly, its few hundred ops each compiled a program of their own (~25 s cold here)
    start = jax.jit(lambda p, i: lean._start_state(lean._empty_day(p), i, p.replace(pool_start=None)))
    fresh = start(pooled, st.day_idx)
    for a, b in zip(jax.tree_util.tree_leaves(st), jax.tree_util.tree_leaves(fresh)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.slow
def test_pool_rows_play_like_their_days():
    """A pool of materialised days: a reset to row i (records off) plays day i as reset_to_day does."""
    from gpu_sched_env.cgrsp.jax import RULES, rollout, stack_days

    cfg = joint_heads("surge", "markov")
    env, lean = JaxCGRSP.from_config(cfg), JaxCGRSP.from_config(cfg, records=False)
    days = [env.materialise(s) for s in (5, 6)]
    params = lean.default_params.replace(pool=stack_days(days))
    rule = RULES["spt_rescue_defer_exp"]
    for i, day in enumerate(days):
        _, want = env.reset_to_day(day)
        want = rollout(env, rule, want, env.default_params)
        st = lean._start_state(lean._empty_day(params), jnp.asarray(i, jnp.int32), params)
        got = jax.jit(lambda s: rollout(lean, rule, s, params))(st)
        assert got.dispatch.shape == (0,) and got.day.submit.shape == (0,)
        for k in ("sum_wait", "cost", "n_miss", "n_completed", "t"):
            np.testing.assert_allclose(np.asarray(getattr(got, k)), np.asarray(getattr(want, k)), rtol=1e-12)


def test_raw_parts_are_booked_by_name_in_reward_parts_order():
    from gpu_sched_env.cgrsp.jax.core import book
    from gpu_sched_env.cgrsp.rewards import REWARD_PARTS

    t = jnp.float32(3.0)
    raw = book(t, miss=jnp.float32(2.0), excess_run=jnp.float32(-1.5))
    assert raw.shape == (len(REWARD_PARTS),) and raw.dtype == t.dtype
    want = {"miss": 2.0, "excess_run": -1.5}
    assert raw.tolist() == [want.get(k, 0.0) for k in REWARD_PARTS]
    with pytest.raises(KeyError, match="runtime"):
        book(t, runtime=t)
