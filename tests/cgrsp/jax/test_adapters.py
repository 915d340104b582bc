"""gymnax and Jumanji adapters: the libraries' own checks, equality with JaxCGRSP, a masked PureJaxRL-style PPO.

The gymnax adapter observes the masked :class:`Observation` here (``obs="masked"``); its default flat
observation, ``make`` and the libraries' wrappers and learners are ``test_ecosystem.py``'s.

Compiles few programs (module fixtures): ``play`` (the gymnax adapter's auto-resetting step,
vmapped, over a pool of native days: an auto-reset then gathers a row instead of drawing a day,
30× cheaper per step on CPU), ``side`` (JaxCGRSP's step, the gymnax adapter's step and the Jumanji
adapter's step on one day, in one scan) and the PPO ``train``.
"""

import importlib.util
import subprocess
import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

# Found, not imported: importing gymnax (seaborn, boto3 with it) and jumanji takes ~3 s here, which every
# xdist worker would pay at collection (every worker collects every file); the adapter modules subclass
# the libraries' classes, so the fixtures and tests import them where they use them.
for _extra in ("gymnax", "jumanji"):
    if importlib.util.find_spec(_extra) is None:
        pytest.skip(f"{_extra} is not installed (the jax extra)", allow_module_level=True)

from gpu_sched_env.cgrsp.jax import JaxCGRSP  # noqa: E402
from gpu_sched_env.core.errors import ConfigError  # noqa: E402
from tests.cgrsp.jax.helpers import joint_heads  # noqa: E402
from tests.cgrsp.jax.purejaxrl_ppo import gymnax_step, make_train  # noqa: E402

N_ENVS, PLAY_STEPS = 16, 2500  # a hectic day: ~1 200 steps of random legal play, ~1 700 with 30 % illegal (wait)
P_ILLEGAL = 0.3
POOL = 48  # native days the auto-resets draw from (JaxCGRSP.with_pool); `side` auto-resets to a freshly drawn day


@pytest.fixture(scope="module")
def env():
    return JaxCGRSP.from_config(joint_heads("hectic"))


@pytest.fixture(scope="module")
def genv(env):
    from gpu_sched_env.cgrsp.jax.gymnax import CGRSPGymnax

    return CGRSPGymnax(env, obs="masked")


@pytest.fixture(scope="module")
def pool(env):
    """The default params with a pool of :data:`POOL` native days (keys from PRNGKey(9))."""
    return env.with_pool(jax.random.PRNGKey(9), env.default_params, POOL)


@pytest.fixture(scope="module")
def jenv(env):
    from gpu_sched_env.cgrsp.jax.jumanji import CGRSPJumanji

    return CGRSPJumanji(env)


def choose(key, mask, p_illegal):
    """A uniformly random legal action; with probability ``p_illegal`` a random illegal one (where one exists)."""
    k_l, k_i, k_u = jax.random.split(key, 3)
    legal = jax.random.categorical(k_l, jnp.where(mask, 0.0, -jnp.inf))
    illegal = jax.random.categorical(k_i, jnp.where(mask, -jnp.inf, 0.0))
    use = (jax.random.uniform(k_u) < p_illegal) & jnp.any(~mask)
    return jnp.where(use, illegal, legal).astype(jnp.int32), use


def play(genv, key, p_illegal, params):
    """:func:`_play` as NumPy arrays."""
    return jax.tree_util.tree_map(np.asarray, _play(genv, key, p_illegal, params))


@partial(jax.jit, static_argnums=0)
def _play(genv, key, p_illegal, params):
    """``PLAY_STEPS`` auto-resetting steps of ``N_ENVS`` days of ``params``' pool, actions from the last obs' mask."""
    space = genv.observation_space(params)
    k0, key = jax.random.split(key)
    obs, st = jax.vmap(genv.reset, (0, None))(jax.random.split(k0, N_ENVS), params)

    def body(carry, key):
        obs, st = carry
        k_a, k_s = jax.random.split(key)
        a, illegal = jax.vmap(choose, (0, 0, None))(jax.random.split(k_a, N_ENVS), obs.action_mask, p_illegal)
        obs, st, r, done, info = jax.vmap(gymnax_step, (None, 0, 0, 0, None))(
            genv, jax.random.split(k_s, N_ENVS), st, a, params
        )
        out = {"reward": r, "done": done, "completed": info["completed"], "illegal": illegal}
        out["contains"] = jax.vmap(space.contains)(obs)
        out["action_ok"] = jax.vmap(genv.action_space(params).contains)(a)
        out["invalid"] = info.get("invalid_action", jnp.zeros_like(done))
        again = jax.vmap(genv.get_obs, (0, None))(st, params)  # get_obs of the returned state is the returned obs
        out["get_obs"] = jnp.all(again.vector == obs.vector, 1) & jnp.all(again.action_mask == obs.action_mask, 1)
        return (obs, st), out

    _, out = jax.lax.scan(body, (obs, st), jax.random.split(key, PLAY_STEPS))
    return obs, out


def side(genv, jenv, key, p_illegal):
    """:func:`_side` as NumPy arrays."""
    return jax.tree_util.tree_map(np.asarray, _side(genv, jenv, key, p_illegal))


@partial(jax.jit, static_argnums=(0, 1))
def _side(genv, jenv, key, p_illegal):
    """JaxCGRSP's step, the gymnax adapter's step and the Jumanji adapter's step: one native day, the same actions.

    (A native day: gymnax's auto-reset selects between the day's state and a new native day's, so
    both must have the same shapes; a materialised day carries the reference's stock draws.)
    """
    from gpu_sched_env.cgrsp.jax.jumanji import State

    env, params = genv.env, genv.default_params
    k0, key = jax.random.split(key)
    s0 = env._reset_state(k0, params)

    def body(carry, key):
        s, sg, sj = carry
        k_a, k_s = jax.random.split(key)
        a, illegal = choose(k_a, env._action_mask(s, params), p_illegal)
        o, s, r, d, info = env._step(k_s, s, a, params)
        og, sg, rg, dg, _ = gymnax_step(genv, k_s, sg, a, params)
        sj, ts = jenv.step(sj, a)
        ref = {"obs": o, "reward": r, "done": d, "completed": info["completed"], "illegal": illegal}
        ref["mask"] = env._action_mask(s, params)
        gym = {"obs": og.vector, "mask": og.action_mask, "reward": rg, "done": dg, "fresh": sg.n_steps == 0}
        gym["terminal"] = genv.is_terminal(s, params)
        jum = {"obs": ts.observation, "reward": ts.reward, "done": ts.last(), "discount": ts.discount}
        return (s, sg, sj), (ref, gym, jum)

    _, out = jax.lax.scan(body, (s0, s0, State(env=s0, key=key)), jax.random.split(key, PLAY_STEPS))
    return out


def has_safe_step(env) -> bool:
    """Whether the JAX env flags illegal actions (``info["invalid_action"]``, branch ``jaxsafe``)."""
    _, s = jax.eval_shape(env._reset, jax.random.PRNGKey(0), env.default_params)
    info = jax.eval_shape(lambda s: env._step(jax.random.PRNGKey(0), s, 0, env.default_params)[4], s)
    return "invalid_action" in info


# ---------------------------------------------------------------------------- gymnax
def test_gymnax_spaces_and_api(genv, env, pool):
    params = genv.default_params
    assert genv.num_actions == env.n_actions == genv.action_space(params).n
    assert genv.name == "CGRSP-jax-hectic"
    space = genv.observation_space(params)
    assert space.spaces["vector"].shape == (env.obs_dim,) and space.spaces["action_mask"].shape == (env.n_actions,)
    a = genv.action_space(params).sample(jax.random.PRNGKey(1))
    assert bool(genv.action_space(params).contains(a)) and not bool(genv.action_space(params).contains(env.n_actions))
    obs, out = play(genv, jax.random.PRNGKey(0), 0.0, pool)
    assert obs.vector.shape == (N_ENVS, env.obs_dim) and obs.action_mask.dtype == bool
    assert out["contains"].all() and out["action_ok"].all() and out["get_obs"].all()
    assert np.isfinite(out["reward"]).all() and (out["reward"] <= 0).all()
    done = out["done"]
    assert done.any(axis=0).all(), "every env finishes a day within PLAY_STEPS"
    # auto-reset: the step that ends a day reports it whole; the next obs is the new day's
    assert (out["completed"][done] == env.spec.n).all()
    outside = type(obs)(jnp.full(env.obs_dim, 1e9, jnp.float32), jnp.ones(env.n_actions, bool))
    assert not bool(space.contains(outside))


def test_adapters_step_equals_jax_env(genv, jenv, env):
    ref, gym, jum = side(genv, jenv, jax.random.PRNGKey(11), 0.0)
    end = int(np.argmax(ref["done"]))
    assert ref["done"][end] and not ref["illegal"].any()
    live = slice(0, end)  # before the day ends: the gymnax obs is this day's
    np.testing.assert_array_equal(gym["obs"][live], ref["obs"][live])
    np.testing.assert_array_equal(gym["mask"][live], ref["mask"][live])
    np.testing.assert_array_equal(jum["obs"].vector[: end + 1], ref["obs"][: end + 1])
    np.testing.assert_array_equal(jum["obs"].action_mask[: end + 1], ref["mask"][: end + 1])
    for other in (gym, jum):
        np.testing.assert_array_equal(other["reward"][: end + 1], ref["reward"][: end + 1])
        np.testing.assert_array_equal(other["done"][: end + 1], ref["done"][: end + 1])
    assert gym["fresh"][end] and not gym["fresh"][:end].any(), "gymnax auto-resets exactly where the day ends"
    np.testing.assert_array_equal(jum["discount"][: end + 1], np.where(ref["done"][: end + 1], 0.0, 1.0))
    assert ref["completed"][end] == env.spec.n
    np.testing.assert_array_equal(gym["terminal"][: end + 1], ref["done"][: end + 1])


# ---------------------------------------------------------------------------- Jumanji
def test_jumanji_spec_checks(jenv, env):
    from jumanji.testing.env_not_smoke import check_env_does_not_smoke, check_env_specs_does_not_smoke

    check_env_specs_does_not_smoke(jenv)
    state, ts = jenv.reset(jax.random.PRNGKey(2))  # the adapter jits reset and step itself
    jenv.observation_spec.validate(ts.observation)
    jenv.reward_spec.validate(ts.reward)
    jenv.discount_spec.validate(ts.discount)
    assert ts.first() and ts.observation.action_mask.any()
    assert jenv.action_spec.num_values == env.n_actions
    # a whole day, jitted step, every observation validated, the action drawn from the observation's mask
    # (this env keeps the per-job records, inf for 'not yet' as CGRSP-v0's, so Jumanji's finiteness check runs on
    # the TimeStep below; an env the adapter builds keeps none, and passes the check's defaults: test_ecosystem.py)
    # (the action choice jitted: Jumanji's loop is Python, an eager choice costs ~10 ms a step)
    select = jax.jit(lambda key, obs: choose(key, obs.action_mask, 0.0)[0])
    check_env_does_not_smoke(jenv, select, assert_finite_check=False)
    state, ts = jax.jit(jenv.step)(state, jnp.argmax(ts.observation.action_mask))
    jenv.observation_spec.validate(ts.observation)
    jenv.reward_spec.validate(ts.reward)
    jax.tree_util.tree_map(lambda x: np.testing.assert_array_equal(np.isfinite(x), True), (ts.reward, ts.observation))


def test_jumanji_wrappers_auto_reset(jenv):
    from jumanji.wrappers import AutoResetWrapper

    wrapped = AutoResetWrapper(jenv)
    # not jitted again: the wrapper's reset is the adapter's jitted reset (compiled for the spec checks above)
    state, ts = wrapped.reset(jax.random.PRNGKey(4))
    assert set(ts.extras) >= {"completed", "miss"}  # reset's extras have the step's structure


# ---------------------------------------------------------------------------- illegal actions
def test_illegal_actions_complete_every_job(genv, jenv, env, pool):
    if not has_safe_step(env):
        pytest.skip(
            "needs the JAX env's safe step (info['invalid_action'], branch jaxsafe): an illegal action is "
            "not defined before it"
        )
    obs, out = play(genv, jax.random.PRNGKey(5), P_ILLEGAL, pool)
    done = out["done"]
    assert done.any(axis=0).all() and out["illegal"].mean() > 0.1
    assert (out["completed"][done] == env.spec.n).all(), "a day with illegal actions lost jobs (gymnax)"
    np.testing.assert_array_equal(out["invalid"], out["illegal"])
    ref, gym, jum = side(genv, jenv, jax.random.PRNGKey(12), P_ILLEGAL)
    end = int(np.argmax(ref["done"]))
    assert ref["done"][end] and ref["completed"][end] == env.spec.n and ref["illegal"][:end].any()
    np.testing.assert_array_equal(jum["reward"][: end + 1], ref["reward"][: end + 1])
    np.testing.assert_array_equal(gym["reward"][: end + 1], ref["reward"][: end + 1])


# ---------------------------------------------------------------------------- PureJaxRL-style PPO
@pytest.mark.e2e
def test_purejaxrl_masked_ppo_trains_through_gymnax():
    from gpu_sched_env.cgrsp.jax.gymnax import CGRSPGymnax

    genv32 = CGRSPGymnax(JaxCGRSP.from_config(joint_heads("hectic"), dtype=jnp.float32, records=False), obs="masked")
    config = {
        "ENV": genv32, "ENV_PARAMS": genv32.default_params, "NUM_ENVS": 4, "NUM_STEPS": 32,
        "TOTAL_TIMESTEPS": 4 * 32 * 3, "UPDATE_EPOCHS": 2, "NUM_MINIBATCHES": 2, "LR": 3e-4, "GAMMA": 0.99,
        "GAE_LAMBDA": 0.95, "CLIP_EPS": 0.2, "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 0.5,
    }  # fmt: skip
    out = jax.jit(make_train(config))(jax.random.PRNGKey(0))
    m = jax.tree_util.tree_map(np.asarray, out["metrics"])
    assert m["loss"].shape == (3, 2, 2) and np.isfinite(m["loss"]).all() and np.isfinite(m["entropy"]).all()
    assert np.isfinite(m["reward"]).all() and (m["reward"] < 0).all()
    assert (m["illegal"] == 0).all(), "the masked policy sampled an action outside obs.action_mask"
    before, after = out["init_params"], out["runner_state"][0].params
    moved = jax.tree_util.tree_map(lambda a, b: float(jnp.abs(a - b).max()), before, after)
    assert max(jax.tree_util.tree_leaves(moved)) > 0.0


# ---------------------------------------------------------------------------- building, extras
def test_unsupported_design_lists_what_jax_implements():
    from gpu_sched_env.cgrsp.jax.gymnax import CGRSPGymnax
    from gpu_sched_env.cgrsp.jax.jumanji import CGRSPJumanji

    for cls in (CGRSPGymnax, CGRSPJumanji):
        with pytest.raises(ConfigError, match=r"window_by = 'order'.*supported: action_mode in"):
            cls.from_config(joint_heads("hectic").replace(window_by="order"))


def test_env_and_config_together_is_an_error(env):
    from gpu_sched_env.cgrsp.jax.gymnax import CGRSPGymnax

    with pytest.raises(ConfigError, match="either a built JaxCGRSP or an env config"):
        CGRSPGymnax(env, joint_heads("hectic"))


# One fresh process answers the three import questions below (each process pays JAX's import, ~2.5 s here):
# what importing the JAX package pulls in, then each adapter with its library blocked.
_IMPORTS = """
import importlib, json, sys
import gpu_sched_env.cgrsp.jax
out = {"imported": sorted({"gymnax", "jumanji"} & set(sys.modules))}
for lib in ("gymnax", "jumanji"):
    sys.modules[lib] = None  # as if not installed
    try:
        importlib.import_module(f"gpu_sched_env.cgrsp.jax.{lib}")
        out[lib] = None
    except ImportError as e:
        out[lib] = str(e)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def imports() -> dict:
    out = subprocess.run([sys.executable, "-c", _IMPORTS], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-1500:]
    import json

    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("lib", ["gymnax", "jumanji"])
def test_missing_library_names_the_extra(imports, lib):
    assert imports[lib] is not None and f"gpu_sched_env[{lib}]" in imports[lib], imports[lib]


def test_jax_package_does_not_import_the_adapters_libraries(imports):
    assert imports["imported"] == []


def test_mixed_env_bounds_cover_every_regime(env):
    from gpu_sched_env.cgrsp.jax.adapt import vector_bounds
    from gpu_sched_env.cgrsp.jax.gymnax import CGRSPGymnax

    mixed = CGRSPGymnax(JaxCGRSP.mixed(joint_heads("hectic"), stocks=("fresh", "900"), days={"hectic": 1, "quiet": 1}))
    assert mixed.name == "CGRSP-jax-mixed" and mixed.num_actions == env.n_actions
    lo, hi = vector_bounds(mixed.env)
    for r in mixed.env.regimes:  # each regime's own env: its bounds inside the mixed env's
        r_lo, r_hi = vector_bounds(JaxCGRSP.from_config(r.config(joint_heads("hectic"))))
        assert (lo <= r_lo).all() and (hi >= r_hi).all()
    assert (lo <= hi).all() and lo.shape == (env.obs_dim,)
