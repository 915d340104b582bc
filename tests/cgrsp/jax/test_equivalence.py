"""The JAX env equals CGRSP-v0 on the reference's draws: observations, masks, rewards, records.

Random masked action sequences (seeded), 52 seeds over the four combinations of day
(hectic, surge) and stock (fresh, Markov D = 900 s): truncated days of 60 steps here, whole
days for a few seeds (Markov ones, and 12 seeds per combination, under ``slow``; the rules'
tests play whole Markov days job for job).
"""

import jax.numpy as jnp
import numpy as np
import pytest

from gpu_sched_env.cgrsp.jax import JaxCGRSP
from tests.cgrsp.jax.helpers import assert_same_records, joint_heads, side_by_side

COMBOS = [("hectic", "fresh"), ("hectic", "markov"), ("surge", "fresh"), ("surge", "markov")]
ENVS: dict = {}


def env_for(day, stock, dtype=jnp.float64):
    key = (day, stock, str(dtype))
    if key not in ENVS:
        ENVS[key] = JaxCGRSP.from_config(joint_heads(day, stock), dtype=dtype)
    return ENVS[key]


@pytest.mark.parametrize(("day", "stock"), COMBOS)
def test_truncated_days_step_for_step(day, stock):
    env = env_for(day, stock)
    for seed in range(13):  # 13 seeds × 4 combinations = 52 seeds
        ref, st, _, steps = side_by_side(env, joint_heads(day, stock), 100 + seed, max_steps=60, horizon_s=4 * 86400.0)
        assert steps == 60 and ref.sim.t < 4 * 86400.0
        assert_same_records(ref.sim, st)


@pytest.mark.parametrize(
    ("day", "stock"),
    [
        ("hectic", "fresh"),
        ("surge", "fresh"),
        pytest.param("hectic", "markov", marks=pytest.mark.slow),
        pytest.param("surge", "markov", marks=pytest.mark.slow),
    ],
)
def test_whole_day_and_summary(day, stock):
    env = env_for(day, stock)
    ref, st, info, _ = side_by_side(env, joint_heads(day, stock), 7, horizon_s=20 * 86400.0)
    assert bool(st.done) and ref.sim.t < 20 * 86400.0
    assert_same_records(ref.sim, st)
    summ = ref.result().summary()
    np.testing.assert_allclose(float(info["mean_wait_min"]), summ["mean_wait_min"], rtol=1e-9)
    np.testing.assert_allclose(float(info["miss_pct"]), summ["miss_pct"], rtol=1e-12)
    np.testing.assert_allclose(float(info["cost_usd"]), summ["cost_usd"], rtol=1e-9)
    np.testing.assert_allclose(float(info["provisioning_delay_h"]), summ["provisioning_delay_h"], rtol=1e-9)
    assert int(info["completed"]) == summ["completed"] == summ["n_jobs"]
    assert int(info["tight_miss"]) == round(summ["tight_miss_pct"] / 100 * ref.sim.workload.tight.sum())
    np.testing.assert_allclose(
        np.asarray(st.ep_raw),
        [ref.ledger.episode_raw[k] for k in ("wait", "miss", "cost", "waste", "run", "delay")],
        rtol=1e-6,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("day", "stock"), COMBOS)
def test_whole_days_many_seeds(day, stock):
    env = env_for(day, stock)
    for seed in range(200, 212):
        ref, st, _, _ = side_by_side(env, joint_heads(day, stock), seed)
        assert_same_records(ref.sim, st)


def test_float32_tracks_the_reference():
    """Training runs in float32 (JAX's default): times of ~1e4-1e5 s then carry ~1e-3 s of rounding.

    The named difference: an interval between two events is exact only to ~1e-3 s, so a step's
    raw parts (job-seconds over intervals of milliseconds to seconds) differ by up to ~1 job-s
    and the reward by ~1e-4 (job-hours); records agree to ~1e-5 relative (500 steps here; the
    whole day passed when this was written, docs/cgrsp_env.md). An event order can
    flip where two events fall within the rounding; on this seed it does not.
    """
    env = env_for("hectic", "fresh", jnp.float32)
    ref, st, _, _ = side_by_side(
        env, joint_heads("hectic", "fresh"), 3, max_steps=500, obs_atol=1e-4, rew_rtol=2e-3, rew_atol=1e-3, raw_atol=2.0
    )
    assert_same_records(ref.sim, st, rtol=1e-5)
