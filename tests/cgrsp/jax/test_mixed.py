"""Mixed batches: a day inside a mixed pool plays as on its own single-regime env; the mix's proportions."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from gpu_sched_env.cgrsp.jax import JaxCGRSP
from gpu_sched_env.cgrsp.jax.generator import build_day
from gpu_sched_env.cgrsp.jax.mix import Regime, parse_stock, regimes_of
from gpu_sched_env.cgrsp.params import DAY_TYPES
from gpu_sched_env.cgrsp.workload import DEFAULT_MONTH_MIX
from gpu_sched_env.core.errors import ConfigError
from tests.cgrsp.jax.helpers import joint_heads

P_MIN = 1e-3


@pytest.fixture(scope="module")
def mixed():
    env = JaxCGRSP.mixed(joint_heads("hectic"))  # the generalist's mix: month days × fresh, D = 300, 900, 3600 s
    return env, env.with_pool(jax.random.PRNGKey(5), env.default_params, 96)


def _unpadded(pool, i, n, params):
    """Row ``i`` of the pool as the single-regime env's own day (its first ``n`` jobs, the same key)."""
    row = jax.tree_util.tree_map(lambda a: a[i], pool)
    assert np.isinf(np.asarray(row.submit[n:])).all() and np.isfinite(np.asarray(row.submit[:n])).all()
    empty = jnp.zeros((0, row.runtime.shape[1]), row.submit.dtype)
    # jitted whole: run eagerly, each of its ops compiled a program of its own (cold cache)
    return jax.jit(build_day)(
        row.key,
        row.submit[:n],
        row.cx[:n],
        row.tight[:n],
        row.runtime[:n],
        row.prov_q[:n],
        params,
        empty,
        empty.T,
        empty.T,
    )


WHOLE = None  # play the whole day


def _lockstep(env, single, params, length: int):
    """One jitted scan: the mixed env and the single-regime env play the same random legal actions.

    Per step (``length`` of them; a step after the single env's day ended, or past ``max_steps``,
    leaves both states as they are): both obs and masks before the action, the action (uniform
    over the single env's legal ones), both rewards, done flags and infos after it. One program
    instead of a Python loop of jitted calls (about 5 ms a step here).
    """
    from gpu_sched_env.cgrsp.jax.bench import random_legal

    key = jax.random.PRNGKey(0)

    def one(c, u):
        s_m, s_s = c
        m_m, m_s = env.action_mask(s_m, params), single.action_mask(s_s, single.default_params)
        a = random_legal(m_s, u)
        o_m, s_m2, r_m, d_m, i_m = env.step(key, s_m, a, params)
        o_s, s_s2, r_s, d_s, i_s = single.step(key, s_s, a, single.default_params)
        return (s_m2, s_s2), (m_m, m_s, o_m, o_s, r_m, r_s, d_m, d_s, i_m, i_s)

    def play(s_m, s_s, stop):
        def body(c, xs):
            i, u = xs
            live = ~c[1].done & (i < stop)
            skip = jax.eval_shape(lambda: one(c, u)[1])
            return jax.lax.cond(live, lambda: one(c, u), lambda: (c, jax.tree.map(jnp.zeros_like, skip)))

        us = jax.random.uniform(jax.random.PRNGKey(7), (length,))
        (s_m, s_s), per_step = jax.lax.scan(body, (s_m, s_s), (jnp.arange(length), us))
        return s_m, s_s, per_step

    return jax.jit(play)


@pytest.mark.parametrize(
    "regime, max_steps",
    [
        ("hectic_fresh", WHOLE),
        ("surge_D900", WHOLE),
        # e2e: each compiles a lockstep program of its own (its single env's); the fast tier pins their parts: an
        # unpadded day (hectic_fresh) and Markov stock (surge_D900), a padded day (surge_D900) and fresh stock
        # (hectic_fresh); a padded Markov day of another type and dwell plays surge_D900's code on other data
        # (the day type and the dwell are the mixed env's data); alone they name what differs (docs/tests.md)
        pytest.param("hectic_D900", 300, marks=pytest.mark.e2e),
        pytest.param("surge_fresh", 300, marks=pytest.mark.e2e),
        pytest.param("normal_D300", WHOLE, marks=pytest.mark.e2e),
        pytest.param("hectic_D900", WHOLE, marks=pytest.mark.slow),
        pytest.param("surge_fresh", WHOLE, marks=pytest.mark.slow),
        pytest.param("quiet_D3600", WHOLE, marks=pytest.mark.slow),
    ],
)
def test_day_in_a_mixed_pool_plays_bit_for_bit_as_its_own_env(mixed, regime, max_steps):
    """Same obs, masks, rewards, raw parts, info and per-job records, bit for bit (whole days or a prefix)."""
    from gpu_sched_env.cgrsp.jax.rules import cap_of

    env, params = mixed
    names = [r.name for r in env.regimes]
    regs = np.asarray(params.pool.regime)
    i = int(np.flatnonzero(regs == names.index(regime))[0])
    reg = env.regimes[names.index(regime)]
    single = JaxCGRSP.from_config(reg.config(env.cfg))
    n = single.spec.n
    assert (reg.day == "hectic") == (n == env.spec.n)  # hectic is the largest day: every other one is padded
    s_m = jax.tree_util.tree_map(lambda a: a[i], params.pool_start)
    o_m0 = jax.jit(env._obs)(s_m, params)
    o_s0, s_s = single.reset_to_day(_unpadded(params.pool, i, n, single.default_params))
    assert np.array_equal(np.asarray(o_m0), np.asarray(o_s0)), "obs at the start"
    length = cap_of(single) if max_steps is None else max_steps
    s_m, s_s, (m_m, m_s, o_m, o_s, r_m, r_s, d_m, d_s, i_m, i_s) = _lockstep(env, single, params, length)(
        s_m, s_s, length
    )
    steps = int(s_s.n_steps)
    assert bool(s_s.done) if max_steps is None else steps == max_steps  # a whole day ended within the cap
    for what, got, want in [("mask", m_m, m_s), ("obs", o_m, o_s), ("reward", r_m, r_s), ("done", d_m, d_s)] + [
        (f"info[{k}]", i_m[k], i_s[k])
        for k in i_s  # mean_wait_min and miss_pct too: per_job's reciprocal is x / n
    ]:
        got, want = np.asarray(got)[:steps], np.asarray(want)[:steps]
        bad = ~(got == want).reshape(steps, -1).all(axis=1)
        assert not bad.any(), f"{what} at step {int(np.flatnonzero(bad)[0])}"
    final = (env.action_mask(s_m, params), single.action_mask(s_s, single.default_params))
    assert np.array_equal(*map(np.asarray, final)), "mask after the last step"
    assert max_steps is not None or (bool(s_m.done) and int(s_s.n_completed) == n)
    for f in ("dispatch", "start", "completion", "job_slot"):
        a_m, a_s = np.asarray(getattr(s_m, f)), np.asarray(getattr(s_s, f))
        assert np.array_equal(a_m[:n], a_s), f
        assert (a_m[n:] == (-1 if f == "job_slot" else np.inf)).all(), f  # padding never dispatched
    for f in ("t", "sum_wait", "cost", "n_miss", "ep_raw", "mk_k", "mk_u", "stock", "n_steps"):
        assert np.array_equal(np.asarray(getattr(s_m, f)), np.asarray(getattr(s_s, f))), f
    assert steps > n if max_steps is None else steps == max_steps  # a whole day: one decision per job at least


SAMPLE = 1500  # native days per call of the sampler


@pytest.fixture(scope="module")
def sampler():
    """The generalist's mix (records off) and its vmapped native sampler: one program for both sampler tests."""
    env = JaxCGRSP.mixed(joint_heads("hectic"), records=False)
    return env, jax.jit(jax.vmap(env._sample, in_axes=(0, None)))


def test_native_sampler_draws_the_mix(sampler):
    """Regimes drawn in the product of the month's day mix and a uniform stock mix (chi-square); padding is exact."""
    env, sample = sampler
    p = env.default_params
    probs = np.asarray(p.mix.probs)
    regs, real = [], []
    for c in range(4):
        day = sample(jax.random.split(jax.random.PRNGKey(100 + c), SAMPLE), p)
        regs.append(np.asarray(day.regime))
        real.append(np.isfinite(np.asarray(day.submit)).sum(axis=1))
    regs, real = np.concatenate(regs), np.concatenate(real)
    counts = np.bincount(regs, minlength=len(env.regimes))
    assert stats.chisquare(counts, probs * counts.sum()).pvalue > P_MIN
    days = np.array([r.day for r in env.regimes])[regs]
    for d, k in DEFAULT_MONTH_MIX.items():  # the marginals: the month's 4/3/18/5 of 30, each stock 1/4
        assert stats.binomtest(int((days == d).sum()), len(days), k / 30).pvalue > P_MIN, d
    assert np.array_equal(real, [DAY_TYPES[r.day]["n_jobs"] for r in np.asarray(env.regimes)[regs]])


def test_native_days_follow_their_regimes_arrival_rate(sampler):
    """Every regime of the mix (each day type, each stock model): its days' arrival gaps are its day type's law."""
    env, sample = sampler  # the sampler test's program (a mix of its own compiled another, ~13 s on a cold cache)
    p = env.default_params
    day = sample(jax.random.split(jax.random.PRNGKey(9), SAMPLE), p)
    for r, reg in enumerate(env.regimes):
        sub = np.asarray(day.submit)[np.asarray(day.regime) == r][:, : DAY_TYPES[reg.day]["n_jobs"]]
        gaps = np.diff(np.concatenate([np.zeros((len(sub), 1)), sub], axis=1), axis=1).ravel()
        assert stats.kstest(gaps, "expon", args=(0, 1 / DAY_TYPES[reg.day]["arrival_rate"])).pvalue > P_MIN, reg


def test_bad_mixes_are_refused_naming_the_value():
    with pytest.raises(ConfigError, match=r"stock_mix entry 'stale'.*allowed: 'fresh'"):
        parse_stock("stale")
    with pytest.raises(ConfigError, match=r"stock_mix entry -5"):
        regimes_of([-5])
    with pytest.raises(ConfigError, match="repeats"):
        regimes_of(["fresh", "FRESH"])
    with pytest.raises(ConfigError, match="non-empty"):
        regimes_of([])
    with pytest.raises(ConfigError, match="'busy' is not a day type"):
        regimes_of(["fresh"], {"busy": 1})
    with pytest.raises(ConfigError, match=r"day.day_mix = \{'surge': 0\}: the weights sum to 0"):
        regimes_of(["fresh"], {"surge": 0}, days_field="day.day_mix")
    regs, probs = regimes_of(["fresh", "900"], {"hectic": 3, "quiet": 1, "normal": 0})  # weight 0: never drawn
    assert [r.name for r in regs] == ["hectic_fresh", "hectic_D900", "quiet_fresh", "quiet_D900"]
    assert np.allclose(probs, [0.375, 0.375, 0.125, 0.125])
    assert regimes_of(["fresh", "900"], {"surge": 1})[0] == [Regime("surge", None), Regime("surge", 900.0)]
    env = JaxCGRSP.mixed(joint_heads("hectic"), stocks=["fresh"], days={"surge": 1})
    with pytest.raises(ConfigError, match="native days only"):
        env.materialise(0)
