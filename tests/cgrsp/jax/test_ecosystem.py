"""The adapters drop into the JAX ecosystem unmodified: gymnax's make and wrappers, Jumanji's checks, rejax's PPO.

Each test runs the outside library's own code as it ships (``gymnax.wrappers.purerl``, which
PureJaxRL's wrappers are; ``jumanji.testing.env_not_smoke`` with its defaults; ``rejax.PPO``), on
envs built as an outside user builds them: ``make(env_id)`` with no other argument, JAX's default
float32 (this module turns off the package's x64 switch). The tests play the quiet day (6 jobs:
whole days in a few dozen steps). The rollout through gymnax's wrappers and Jumanji's smoke check
are ``e2e`` (each compiles a whole env to run an outside library's code; ``test_adapters.py`` pins
the adapters' steps and runs Jumanji's checks in the fast tier); the fast tests here compile only
the spaces' small samplers.
"""

import importlib.util
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest

for _lib in ("gymnax", "jumanji"):
    if importlib.util.find_spec(_lib) is None:
        pytest.skip(f"{_lib} is not installed (the jax extra)", allow_module_level=True)

from gpu_sched_env.cgrsp.jax.adapt import DEFAULT_DESIGN, default_config, env_ids  # noqa: E402
from gpu_sched_env.cgrsp.jax.bench import random_legal  # noqa: E402
from gpu_sched_env.cgrsp.jax.core import NEVER  # noqa: E402
from gpu_sched_env.core.errors import ConfigError  # noqa: E402
from tests.cgrsp.jax.helpers import joint_heads  # noqa: E402

N_ENVS, STEPS = 4, 96  # quiet days end within ~20 steps: every env finishes and auto-resets several days
WIDTH, ACTIONS = 233, 16  # the default design's observation and actions on the 5-slot fleet (docs/cgrsp_env.md)


@pytest.fixture(autouse=True, scope="module")
def x64():
    """JAX's defaults, as an outside user has them (the package's conftest turns x64 on per module)."""
    with jax.enable_x64(False):
        yield


@pytest.fixture(scope="module")
def quiet():
    from gpu_sched_env.cgrsp.jax.gymnax import make

    return make("CGRSP-quiet-v0")


# ---------------------------------------------------------------------------- default construction, make
def test_default_design_builds_with_no_argument():
    from gpu_sched_env.cgrsp.jax.gymnax import CGRSPGymnax, make
    from gpu_sched_env.cgrsp.jax.jumanji import CGRSPJumanji
    from gpu_sched_env.cgrsp.jax.jumanji import make as jumanji_make

    assert DEFAULT_DESIGN == "joint_heads" and default_config() == joint_heads("hectic")  # Hydra's joint_heads
    for env in (CGRSPGymnax(), CGRSPGymnax.from_config(day="hectic"), make("CGRSP-v0")[0], make("CGRSP-hectic-v0")[0]):
        assert env == CGRSPGymnax() and env.env.cfg == default_config() and not env.env.records
        assert env.observation_space(env.default_params).shape == (WIDTH,) and env.num_actions == ACTIONS
    for day in ("quiet", "normal", "surge"):
        genv, params = make(f"CGRSP-{day}-v0")
        assert genv.env.cfg == default_config().replace(day=day) == CGRSPGymnax.from_config(day=day).env.cfg
        assert genv.observation_space(params).shape == (WIDTH,) and genv.num_actions == ACTIONS
        assert params.max_steps_in_episode == 3 * genv.env.spec.n  # a day's step bound (rules.cap_of)
        assert jumanji_make(f"CGRSP-{day}-v0").env is CGRSPJumanji.from_config(day=day).env is genv.env
    jenv = CGRSPJumanji()
    assert jenv.env is CGRSPGymnax().env and jenv.observation_spec.vector.shape == (WIDTH,)
    assert jenv == CGRSPJumanji() and jenv.action_spec.num_values == ACTIONS
    # settings as keywords over the id's, as gym.make; another design the JAX env implements
    hold, _ = make("CGRSP-quiet-v0", action_mode="joint_hold", obs="masked")
    assert hold.env.cfg == default_config().replace(day="quiet", action_mode="joint_hold") and hold.obs == "masked"
    assert make("gpu_sched_env:CGRSP-surge-v0")[0] == make("CGRSP-surge-v0")[0]
    assert set(env_ids()) == {"CGRSP-v0", "CGRSP-quiet-v0", "CGRSP-normal-v0", "CGRSP-hectic-v0", "CGRSP-surge-v0"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g, j: g("CGRSP-v1"), r"env_id = 'CGRSP-v1' is not known to the JAX env; allowed: CGRSP-v0, CGRSP-q"),
        (lambda g, j: j("HGSP-v0"), r"env_id = 'HGSP-v0' is not known to the JAX env; allowed: CGRSP-v0, "),
        (lambda g, j: g("CGRSP-v0", obs="dict"), r"obs = 'dict' is not known; allowed: flat, masked"),
        (lambda g, j: g("CGRSP-v0", window=16), r"window = 16 is not supported by the JAX env.*supported: .*window in"),
        (lambda g, j: j("CGRSP-v0", action_mode="slot"), r"action_mode = 'slot' is not supported by the JAX env"),
        (lambda g, j: g("CGRSP-v0", window_by="order"), r"window_by = 'order' is not supported.*window_by in"),
        (lambda g, j: g("CGRSP-v0", order="fifo"), r"order = 'fifo' is not known; allowed: deadline, submit, spt"),
        (lambda g, j: g("CGRSP-v0", cfg={}), r"make\('CGRSP-v0', cfg=\.\.\.\) is not allowed; allowed: env settings"),
        (lambda g, j: g("CGRSP-v0", colour=1), r"unknown CGRSP-v0 keyword\(s\): colour; allowed: the env settings"),
        (lambda g, j: g("CGRSP-v0", illegal_action="raise"), r"illegal_action = 'raise' is not a setting of the JAX"),
        (lambda g, j: j("CGRSP-v0", illegal_action="x"), r"illegal_action = 'x' is not known; allowed: substitute"),
    ],
)
def test_bad_input_names_the_value_and_what_is_allowed(call, message):
    from gpu_sched_env.cgrsp.jax.gymnax import make
    from gpu_sched_env.cgrsp.jax.jumanji import make as jumanji_make

    with pytest.raises(ConfigError, match=message) as err:
        call(make, jumanji_make)
    assert "\n" not in str(err.value)


def test_sampled_observations_are_in_the_space():
    """``observation_space(params).sample(key)`` is contained (gymnax's Box and Dict), for either observation."""
    from gymnax.environments import spaces

    from gpu_sched_env.cgrsp.jax.gymnax import ObservationSpace, make

    keys = jax.random.split(jax.random.PRNGKey(3), 512)
    for obs in ("flat", "masked"):
        env, params = make("CGRSP-quiet-v0", obs=obs)
        space = env.observation_space(params)
        assert isinstance(space, spaces.Box if obs == "flat" else ObservationSpace)
        inside = jax.jit(jax.vmap(lambda k, sp=space: sp.contains(sp.sample(k))))(keys)
        assert bool(inside.all()), obs
        sample = space.sample(keys[0])
        vector = sample if obs == "flat" else sample.vector
        assert vector.shape == (WIDTH,) and vector.dtype == jnp.float32
    assert isinstance(env.observation_space(params).spaces["vector"], spaces.Box)


# ---------------------------------------------------------------------------- gymnax's own wrappers
@partial(jax.jit, static_argnums=0)
def _wrapped_rollout(env, key, params):
    """``LogWrapper(FlattenObservationWrapper(env))`` (gymnax.wrappers.purerl, as PureJaxRL's), vmapped and scanned.

    Actions: uniform over the mask ``info["action_mask"]`` of the last step (the reset's state at the start).
    """
    from gymnax.wrappers.purerl import FlattenObservationWrapper, LogWrapper

    wrapped = LogWrapper(FlattenObservationWrapper(env))
    space = wrapped.observation_space(params)  # the wrapper asserts a gymnax Box
    k0, key = jax.random.split(key)
    obs, st = jax.vmap(wrapped.reset, (0, None))(jax.random.split(k0, N_ENVS), params)
    mask = jax.vmap(env.action_mask, (0, None))(st.env_state, params)

    def body(carry, key):
        obs, st, mask = carry
        k_a, k_s = jax.random.split(key)
        a = random_legal(mask, jax.random.uniform(k_a, (N_ENVS,)))
        obs, st, r, done, info = jax.vmap(wrapped.step, (0, 0, 0, None))(jax.random.split(k_s, N_ENVS), st, a, params)
        floats = [x for x in jax.tree_util.tree_leaves(st.env_state) if jnp.issubdtype(x.dtype, jnp.floating)]
        out = {
            "contains": jax.vmap(space.contains)(obs),
            "obs_dtype_f32": jnp.full(N_ENVS, obs.dtype == jnp.float32),
            "get_obs": jnp.all(jax.vmap(env.get_obs, (0, None))(st.env_state, params) == obs, axis=1),
            "info_mask": jnp.all(info["action_mask"] == jax.vmap(env.action_mask, (0, None))(st.env_state, params), 1),
            "invalid": info["invalid_action"],
            "finite": jnp.stack([jnp.isfinite(x).reshape(N_ENVS, -1).all(axis=1) for x in floats]).all(axis=0),
            "done": done,
            "fresh": st.env_state.n_steps == 0,
            "returned": info["returned_episode"],
            "ret": info["returned_episode_returns"],
            "reward": r,
            "completed": info["completed"],
        }
        return (obs, st, info["action_mask"]), out

    _, out = jax.lax.scan(body, (obs, st, mask), jax.random.split(key, STEPS))
    return obs.shape, space.shape, out


@pytest.mark.e2e  # compiles a whole float32 env only to drive gymnax's wrappers (docs/tests.md)
def test_gymnax_wrappers_take_the_flat_observation(quiet):
    """gymnax's own ``FlattenObservationWrapper`` and ``LogWrapper`` over ``make(...)``: masked legal play, auto-resets.

    The mask of ``info`` is the returned state's (the new day's after an auto-reset): actions drawn from it are
    never illegal. Every float of every state is finite (no inf sentinel).
    """
    env, params = quiet
    obs_shape, space_shape, out = _wrapped_rollout(env, jax.random.PRNGKey(0), params)
    out = jax.tree_util.tree_map(np.asarray, out)
    assert obs_shape == (N_ENVS, WIDTH) and space_shape == (WIDTH,)
    for check in ("contains", "obs_dtype_f32", "get_obs", "info_mask", "finite"):
        assert out[check].all(), check
    assert not out["invalid"].any(), "an action drawn from info['action_mask'] was illegal"
    done = out["done"]
    assert (done.sum(axis=0) >= 2).all(), "every env finished at least two days"
    assert (out["fresh"] == done).all() and (out["returned"] == done).all()  # auto-reset exactly where a day ends
    assert (out["completed"][done] == env.env.spec.n).all()
    returns = out["ret"][done]  # LogWrapper's: each finished day's summed reward, at the step that ends it
    np.testing.assert_allclose(returns, _day_returns(out["reward"], done), rtol=1e-5)
    assert (returns < 0).all()


def _day_returns(reward: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Each finished day's summed reward (steps × envs arrays), in the row-major order of ``done``'s True entries."""
    since = np.zeros(reward.shape[1])
    out = np.zeros(reward.shape)
    for i in range(len(reward)):
        since = since + reward[i]
        out[i] = since
        since = np.where(done[i], 0.0, since)
    return out[done]


# ---------------------------------------------------------------------------- Jumanji's own checks
@pytest.mark.e2e  # compiles a whole float32 env only to drive Jumanji's check (docs/tests.md)
def test_jumanji_checks_pass_with_their_defaults():
    """``check_env_does_not_smoke(env)`` as it ships: random actions for a whole day, every (state, timestep) finite."""
    from jumanji.testing.env_not_smoke import check_env_does_not_smoke, check_env_specs_does_not_smoke

    from gpu_sched_env.cgrsp.jax.jumanji import make

    env = make("CGRSP-quiet-v0")
    check_env_specs_does_not_smoke(env)
    check_env_does_not_smoke(env)
    state, ts = env.reset(jax.random.PRNGKey(1))
    leaves = jax.tree_util.tree_leaves(state.env)
    assert all(np.isfinite(np.asarray(x)).all() for x in leaves if jnp.issubdtype(x.dtype, jnp.floating))
    assert (np.asarray(state.env.slot_end) == NEVER).all() and (np.asarray(state.env.mk_next) == NEVER).all()
    env.observation_spec.validate(env.observation_spec.generate_value())


def test_markov_paths_are_padded_with_never_not_inf():
    """The reference pads shorter Markov paths with inf; a JAX day, and a stack of days, hold NEVER there."""
    import dataclasses

    from gpu_sched_env.cgrsp.day import materialise
    from gpu_sched_env.cgrsp.jax import JaxCGRSP, stack_days

    env = JaxCGRSP.from_config(joint_heads("quiet", "markov"), records=False)
    ref = materialise(env.sim_params, 3)
    times = ref.markov_times.copy()
    times[1, -5:] = np.inf  # type 1's path ends five redraws early, as the reference pads one
    day = env.day_of(dataclasses.replace(ref, markov_times=times))
    got = np.asarray(day.markov_times)
    np.testing.assert_array_equal(got, np.where(np.isinf(times), NEVER, times).astype(got.dtype))
    short = day.replace(markov_times=day.markov_times[:, :-3], markov_us=day.markov_us[:, :-3])
    stacked = np.asarray(stack_days([day, short]).markov_times)
    assert np.isfinite(stacked).all() and (stacked[1, :, -3:] == NEVER).all()


# ---------------------------------------------------------------------------- rejax
@pytest.mark.e2e
def test_rejax_ppo_trains_on_make():
    """``rejax.PPO.create(env=env, env_params=params)`` on ``make("CGRSP-hectic-v0")``: a few updates, rejax's own eval.

    rejax's evaluation plays 128 whole days with the policy (its loop bound is ``params.max_steps_in_episode``);
    a pool of native days makes its auto-resets a gather (``env.env.with_pool``, docs/cgrsp_env.md).
    """
    import rejax  # the dev extra's (requirements.lock): the outside learner's own code, unmodified

    from gpu_sched_env.cgrsp.jax.gymnax import make

    env, params = make("CGRSP-hectic-v0")
    params = env.env.with_pool(jax.random.PRNGKey(1), params, 16)
    n_envs, n_steps = 2, 16
    algo = rejax.PPO.create(
        env=env,
        env_params=params,
        num_envs=n_envs,
        num_steps=n_steps,
        num_epochs=1,
        num_minibatches=2,
        total_timesteps=3 * n_envs * n_steps,
        eval_freq=3 * n_envs * n_steps,
        skip_initial_evaluation=True,
        agent_kwargs={"hidden_layer_sizes": (32, 32)},
    )
    ts0 = algo.init_state(jax.random.PRNGKey(0))
    ts, (lengths, returns) = jax.jit(algo.train)(train_state=ts0)
    lengths, returns = np.asarray(lengths), np.asarray(returns)
    assert lengths.shape == returns.shape == (1, 128)
    assert (lengths > env.env.spec.n).all() and (lengths <= params.max_steps_in_episode).all()
    assert np.isfinite(returns).all() and (returns < 0).all()
    assert int(ts.global_step) == 3 * n_envs * n_steps
    moved = jax.tree_util.tree_map(lambda a, b: float(jnp.abs(a - b).max()), ts0.actor_ts.params, ts.actor_ts.params)
    assert max(jax.tree_util.tree_leaves(moved)) > 0.0
