"""Native JAX days follow the reference's laws (by distribution, not draw for draw)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP, core, evaluate
from gpu_sched_env.cgrsp.jax.core import band_of
from tests.cgrsp.jax.helpers import MARKOV, joint_heads

P_MIN = 1e-3  # a correct law fails one such test with probability 1e-3
B = 64


@pytest.fixture(scope="module")
def hectic():
    env = JaxCGRSP.from_config(joint_heads("hectic"))
    _, st = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(
        jax.random.split(jax.random.PRNGKey(7), B), env.default_params
    )
    return env, st


def test_arrivals_classes_tightness(hectic):
    env, st = hectic
    p, day = env.sim_params, st.day
    sub = np.asarray(day.submit)
    gaps = np.diff(np.concatenate([np.zeros((B, 1)), sub], axis=1), axis=1).ravel()
    assert stats.kstest(gaps, "expon", args=(0, 1 / p.arrival_rate)).pvalue > P_MIN
    counts = np.bincount(np.asarray(day.cx).ravel(), minlength=3)
    assert stats.chisquare(counts, np.asarray(p.complexity_probs) * counts.sum()).pvalue > P_MIN
    tight = np.asarray(day.tight)
    assert stats.binomtest(int(tight.sum()), tight.size, p.tight_fraction).pvalue > P_MIN
    dl = np.asarray(day.deadline) - sub
    np.testing.assert_allclose(dl, np.where(tight, p.tight_window, p.loose_window), rtol=1e-12)


def test_runtimes_and_provisioning_quantiles(hectic):
    env, st = hectic
    p, day = env.sim_params, st.day
    wbar = np.asarray(env.default_params.wbar)[np.asarray(day.cx)]  # (B, N, T)
    z = (np.log(np.asarray(day.runtime)) - np.log(wbar) + p.runtime_sigma**2 / 2) / p.runtime_sigma
    assert stats.kstest(z.ravel()[:50000], "norm").pvalue > P_MIN
    assert stats.kstest(np.asarray(day.prov_q).ravel(), "uniform").pvalue > P_MIN
    ref = simulate("fifo", "hectic", seed=0).jobs  # the realised means agree with the reference's
    assert abs(np.asarray(day.runtime).mean() / ref.runtime.mean() - 1) < 0.02


def _stock_samples(env, st, steps=400):
    """Stock status and band at each new decision point of a FIFO run (fresh: independent draws)."""
    p = env.default_params
    rule = RULES["fifo"]

    def one(s, _):
        rec = (s.stock, band_of(p, s.t), (s.dp_count == 0) & ~s.done)
        s = env._step_subqueue(jax.random.PRNGKey(0), s, rule.act(env, s, p), p)[1]
        return s, rec

    _, (stock, band, new) = jax.jit(jax.vmap(lambda s: jax.lax.scan(one, s, None, length=steps)))(st)
    return np.asarray(stock), np.asarray(band), np.asarray(new)


def test_fresh_stock_frequencies_per_band(hectic):
    env, st = hectic
    stock, band, new = _stock_samples(env, st)
    probs = np.asarray(env.default_params.level_probs)
    tested = 0
    for b in np.unique(band[new]):
        sel = new & (band == b)
        for g in range(stock.shape[-1]):
            counts = np.bincount(stock[..., g][sel], minlength=3)
            exp = probs[b, g] * counts.sum()
            keep = exp > 0
            assert counts[~keep].sum() == 0
            if keep.sum() > 1 and counts.sum() > 200:
                assert stats.chisquare(counts[keep], exp[keep]).pvalue > P_MIN / 16, (b, g)
                tested += 1
    assert tested >= 8


def test_markov_stationary_law_and_redraw_rate():
    env = JaxCGRSP.from_config(joint_heads("hectic", "markov"))
    p, sp = env.default_params, env.spec
    _, st = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(3), 400), p)
    t_star = 4 * 3600.0  # 09:00 UTC + 0: the Low-stock band
    sync = jax.jit(jax.vmap(lambda s: core.markov_sync(sp, p, s.day, s, jnp.asarray(t_star))))
    s2 = sync(st)
    lv = np.asarray(jax.vmap(lambda u: core.levels_of(p, jnp.asarray(t_star), u))(s2.mk_u))
    b = int(band_of(p, jnp.asarray(t_star)))
    probs = np.asarray(p.level_probs)[b]
    for g in range(sp.t):
        counts = np.bincount(lv[:, g], minlength=3)
        assert stats.chisquare(counts, probs[g] * counts.sum()).pvalue > P_MIN / 4
    # redraws on [0, t*] are a Poisson process with the reference's hazard (mean dwell D per band)
    lam = np.asarray(p.lam_knots)
    clock = np.asarray(p.clock_knots)
    off = float(p.start_offset)
    expect = np.array([np.interp(off + t_star, clock, lam[g]) - np.interp(off, clock, lam[g]) for g in range(sp.t)])
    k = np.asarray(s2.mk_k)
    for g in range(sp.t):
        assert abs(k[:, g].mean() - expect[g]) < 4 * np.sqrt(expect[g] / k.shape[0])
    assert MARKOV["stock_dwell_s"] == env.sim_params.stock_dwell_s


@pytest.mark.slow
@pytest.mark.parametrize("stock", ["fresh", "markov"])
def test_rule_on_native_days_matches_the_reference_days(stock):
    """spt_rescue_defer_exp: mean wait and misses over 128 native days vs 30 reference days (Welch t)."""
    env = JaxCGRSP.from_config(joint_heads("surge", stock))
    out = evaluate(env, RULES["spt_rescue_defer_exp"], jax.random.split(jax.random.PRNGKey(11), 128))
    ref = [
        simulate("spt_rescue_defer_exp", "surge", seed=s, **(MARKOV if stock == "markov" else {})).summary()
        for s in range(30)
    ]
    for key in ("mean_wait_min", "cost_usd"):
        assert stats.ttest_ind(np.asarray(out[key]), [r[key] for r in ref], equal_var=False).pvalue > P_MIN, key
