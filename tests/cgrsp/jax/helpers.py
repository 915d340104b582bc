"""Drive CGRSP-v0 and the JAX env side by side on one seed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.day import materialise
from gpu_sched_env.cgrsp.env import CGRSPEnv

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

    ``until(ref, state, info)``, called after each step, stops the replay when it returns True.
    Returns ``(reference env, JAX state, JAX info of the last step, steps)``.
    """
    import jax

    ref = CGRSPEnv(cfg)
    o, _ = ref.reset(seed=seed)
    obs, st = env.reset_to_day(env.day_of(materialise(env.sim_params, seed, horizon_s)))
    rng = np.random.default_rng(1000 + seed)
    key = jax.random.PRNGKey(0)
    info = None
    steps = 0
    while True:
        np.testing.assert_allclose(
            np.asarray(obs), env.flatten_obs(o), rtol=1e-5, atol=obs_atol, err_msg=f"obs at step {steps}"
        )
        m = ref.action_masks()
        np.testing.assert_array_equal(
            np.asarray(env.action_mask(st, env.default_params)), m, err_msg=f"mask at step {steps}"
        )
        if max_steps is not None and steps >= max_steps:
            break
        a = int(rng.choice(np.flatnonzero(m)))
        o, r, term, _, ref_info = ref.step(a)
        obs, st, jr, jd, info = env.step(key, st, a, env.default_params)
        steps += 1
        np.testing.assert_allclose(float(jr), r, rtol=rew_rtol, atol=rew_atol, err_msg=f"reward at step {steps}")
        raw = np.array([ref_info["reward_raw"][k] for k in ("wait", "miss", "cost", "waste", "run", "delay")])
        np.testing.assert_allclose(
            np.asarray(info["reward_raw"]), raw, rtol=rew_rtol, atol=raw_atol, err_msg=f"raw parts at step {steps}"
        )
        assert bool(jd) == term
        np.testing.assert_allclose(float(info["t"]), ref.sim.t, rtol=rew_rtol * 1e-3, err_msg=f"clock at step {steps}")
        if term or (until is not None and until(ref, st, info)):
            break
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
