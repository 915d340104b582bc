"""Drive CGRSP-v0 and the JAX env side by side on one seed."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.day import materialise
from gpu_sched_env.cgrsp.env import REWARD_PARTS, CGRSPEnv

MARKOV = {"stock_process": "markov", "stock_dwell_s": 900.0}
COMBOS = [("hectic", "fresh"), ("hectic", "markov"), ("surge", "fresh"), ("surge", "markov")]
ENVS: dict = {}


def env_for(day: str = "hectic", stock: str = "fresh", dtype=None, **kw):
    """The JAX env of ``joint_heads(day, stock)``, built once per test process and shared by every module.

    One env per design: its jitted functions compile once for all tests (same shapes, same
    programs); ``dtype`` None is float64 (the modules run under ``jax_enable_x64``).
    """
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    key = (day, stock, str(dtype), tuple(sorted(kw.items())))
    if key not in ENVS:
        ENVS[key] = JaxCGRSP.from_config(joint_heads(day, stock), dtype=dtype, **kw)
    return ENVS[key]


def joint_heads(day: str = "hectic", stock: str = "fresh", **kw) -> CGRSPEnvConfig:
    """experiment=joint_heads as Hydra resolves it (tests/cgrsp/jax/test_api.py checks that against Hydra)."""
    return CGRSPEnvConfig(
        day=day,
        window=3,
        order="spt",
        window_by="class",
        action_mode="joint",
        reward="capacity",
        reward_weights={"miss": 57600.0},
        shaping="none",
        shaping_gamma=0.9,
        slot_rows=10,
        features="model",
        params=MARKOV if stock == "markov" else {},
        **kw,
    )


PATH_WIDTHS = (16385, 65537)  # a padded Markov path's redraws: the first that fits (beyond: the next 2**k + 1)


def fixed_width(day):
    """``day`` with its Markov paths padded to the first of :data:`PATH_WIDTHS` they fit in (fresh stock: as it is).

    A materialised Markov day's paths are as long as its draws need (4 097 to 36 865 redraws here,
    by seed and horizon), and each length is a shape of its own: every program a day goes into
    compiles again. Padded as ``rules.stack_days`` pads a batch (``core.NEVER``: a redraw never due,
    read by pointer, so the padding changes no step), the tests' days share two shapes: a horizon
    of up to 20 days, and a whole default one.
    """
    from gpu_sched_env.cgrsp.jax.core import NEVER

    w = day.markov_times.shape[1]
    if w == 0:
        return day
    width = next((x for x in PATH_WIDTHS if w <= x), (1 << (w - 1).bit_length()) + 1)
    extra = width - w  # padded on the host: an eager jnp.pad compiles a program per shape
    return day.replace(
        markov_times=np.pad(np.asarray(day.markov_times), ((0, 0), (0, extra)), constant_values=NEVER),
        markov_us=np.pad(np.asarray(day.markov_us), ((0, 0), (0, extra))),
    )


def reset_to(env, day):
    """``env.reset_to_day`` of ``day`` (an int: ``env.materialise(day)``): ``(obs, state)``.

    The Markov paths at a fixed width (:func:`fixed_width`) and the params an argument, so one
    compiled reset serves every seed and every env of the same shapes, whatever its params' values
    (a reset reads no reward setting: an env with shaping and one without share it too).
    """
    day = env.materialise(day) if isinstance(day, int) else day
    return env.reset_to_day(fixed_width(day), env.default_params)


_REPLAYS: dict = {}
REPLAY_STEPS = 4096  # the replay's padded length (side_by_side)


def _replay_program(env, length: int):
    """One jitted program per env and padded length: the JAX env plays a recorded action stream.

    Scans ``env.step`` over ``length`` actions, of which the first ``n`` are played (the rest leave
    the state as it is); returns the start obs and mask, per step the obs, mask, reward, raw parts,
    done flag and clock, and the state and info after the ``n``-th step. One program replays a
    whole day in one call instead of a Python loop of jitted calls (about 2 ms a step here).
    The params are an argument, not constants of the program: two envs that differ only in their
    params' values (a reward preset or weight) compile the same program, which JAX's compile
    cache then serves to the second (any test file, any xdist worker).
    """
    import jax
    import jax.numpy as jnp

    if (env, length) in _REPLAYS:
        return _REPLAYS[env, length]
    key = jax.random.PRNGKey(0)

    def play(day, actions, n, params):
        def one(s, a):
            obs, s2, r, d, info = env.step(key, s, a, params)  # the env's jitted functions: their traces are shared
            return (s2, info), (obs, env.action_mask(s2, params), r, info["reward_raw"], d, info["t"])

        obs0, s0 = env.reset_to_day(day, params)
        (_, info_shape), out_shape = jax.eval_shape(one, s0, actions[0])
        zeros = partial(jax.tree.map, lambda x: jnp.zeros(x.shape, x.dtype))

        def body(carry, xs):
            i, a = xs
            return jax.lax.cond(i < n, lambda: one(carry[0], a), lambda: (carry, zeros(out_shape)))

        (s, info), per_step = jax.lax.scan(body, (s0, zeros(info_shape)), (jnp.arange(length), actions))
        return obs0, env.action_mask(s0, params), per_step, s, info

    _REPLAYS[env, length] = jax.jit(play)
    return _REPLAYS[env, length]


def _first_bad_row(got, want, what: str, rtol: float, atol: float, equal: bool = False, first: int = 0) -> None:
    """Assert rows of ``got`` and ``want`` agree; a failure names the first step that differs (row 0: ``first``)."""
    got, want = np.asarray(got), np.asarray(want)
    if len(want) == 0:
        return
    same = (got == want) if equal else np.isclose(got, want, rtol=rtol, atol=atol)
    bad = ~same.reshape(len(same), -1).all(axis=1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        msg = f"{what} at step {k + first}"
        if equal:
            np.testing.assert_array_equal(got[k], want[k], err_msg=msg)
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=msg)


def side_by_side(
    env,
    cfg: CGRSPEnvConfig,
    seed: int,
    max_steps: int | None = None,
    horizon_s: float | None = None,
    obs_atol: float = 2e-6,
    rew_rtol: float = 1e-6,
    rew_atol: float = 1e-9,
    raw_atol: float = 1e-6,
    until: Callable | None = None,
) -> tuple:
    """Random masked actions (seeded) on both envs; asserts equal obs, masks, rewards, done at every step.

    CGRSP-v0 plays first and records its actions and what it showed; the JAX env then replays the
    actions in one compiled scan (:func:`_replay_program`) and every step is compared: the obs and
    mask before each action (and after the last, when ``max_steps`` stopped the play), the reward,
    raw parts, done flag and clock after it. A mismatch names the first step that differs.
    ``until(ref, ref_info)``, called after each reference step, stops the play when it returns True.
    Returns ``(reference env, JAX state, JAX info of the last step, steps)``.
    """
    ref = CGRSPEnv(cfg)
    o, _ = ref.reset(seed=seed)
    rng = np.random.default_rng(1000 + seed)
    obs, masks, actions, rewards, raws, terms, clocks = [env.flatten_obs(o)], [ref.action_masks()], [], [], [], [], []
    while max_steps is None or len(actions) < max_steps:
        a = int(rng.choice(np.flatnonzero(masks[-1])))
        o, r, term, _, ref_info = ref.step(a)
        actions.append(a)
        rewards.append(r)
        raws.append([ref_info["reward_raw"][k] for k in REWARD_PARTS])
        terms.append(term)
        clocks.append(ref.sim.t)
        if term or (until is not None and until(ref, ref_info)):
            break
        obs.append(env.flatten_obs(o))
        masks.append(ref.action_masks())
    steps = len(actions)
    # one padded length for every play of an env (one program): a whole day's steps (at most 3·N in the joint
    # designs, N <= 950) fit in 4096; a longer play (holds) takes the next power of two
    length = max(REPLAY_STEPS, 1 << max(steps - 1, 1).bit_length())
    padded = np.zeros(length, np.int32)
    padded[:steps] = actions
    day = fixed_width(env.day_of(materialise(env.sim_params, seed, horizon_s)))
    obs0, mask0, (j_obs, j_mask, j_rew, j_raw, j_done, j_t), st, info = _replay_program(env, length)(
        day, padded, steps, env.default_params
    )
    k = len(obs)  # states compared: the start and the one after each step the play went on from
    j_obs = np.concatenate([np.asarray(obs0)[None], np.asarray(j_obs)[: k - 1]])
    j_mask = np.concatenate([np.asarray(mask0)[None], np.asarray(j_mask)[: k - 1]])
    _first_bad_row(j_obs, np.asarray(obs), "obs", rtol=1e-5, atol=obs_atol)
    _first_bad_row(j_mask, np.asarray(masks), "mask", 0, 0, equal=True)
    after = {"first": 1}  # the k-th action's outcome is "at step k", as the reference counts its steps
    _first_bad_row(np.asarray(j_rew)[:steps], np.asarray(rewards), "reward", rew_rtol, rew_atol, **after)
    _first_bad_row(np.asarray(j_raw)[:steps], np.asarray(raws), "raw parts", rew_rtol, raw_atol, **after)
    _first_bad_row(np.asarray(j_done)[:steps], np.asarray(terms), "done", 0, 0, equal=True, **after)
    _first_bad_row(np.asarray(j_t)[:steps], np.asarray(clocks), "clock", rew_rtol * 1e-3, 0.0, **after)
    return ref, st, info, steps


def assert_same_records(sim_or_result, st, rtol: float = 1e-9) -> None:
    """Per-job dispatch, start, completion and slot equal (inf where a job has not got there)."""
    for name in ("dispatch", "start", "completion"):
        want = (
            np.asarray(getattr(sim_or_result, name), float)
            if name != "start"
            else np.asarray(
                sim_or_result.realised_starts() if hasattr(sim_or_result, "realised_starts") else sim_or_result.start,
                float,
            )
        )
        got = np.asarray(getattr(st, name))
        assert np.array_equal(np.isfinite(want), np.isfinite(got)), name
        f = np.isfinite(want)
        np.testing.assert_allclose(got[f], want[f], rtol=rtol, err_msg=name)
    slots = np.asarray(sim_or_result.job_slot if hasattr(sim_or_result, "job_slot") else sim_or_result.slot)
    np.testing.assert_array_equal(np.asarray(st.job_slot), slots)


_DESIGN_ENVS: dict = {}


def design_env(action_mode: str, day: str, stock: str) -> tuple[CGRSPEnvConfig, object]:
    """joint_heads with ``action_mode`` on ``day`` under ``stock``, and its JAX env (built once per process)."""
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    cfg = joint_heads(day, stock).replace(action_mode=action_mode)
    if (action_mode, day, stock) not in _DESIGN_ENVS:
        _DESIGN_ENVS[action_mode, day, stock] = JaxCGRSP.from_config(cfg)
    return cfg, _DESIGN_ENVS[action_mode, day, stock]
