"""The persistent (Markov) stock process: stationary law per band, mean dwell, CRN, and its fresh limit."""

import numpy as np
import pytest

from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.stock import MarkovStock
from gpu_sched_env.core.errors import ConfigError

DAYS = {60.0: 60, 900.0: 400}  # enough for ≥ 19 000 runs per band


def _band_stats(dwell_s: float, seed: int = 3):
    """Per (type, band): time share of each status, time in band, and redraw-caused changes."""
    fl = Fleet.from_params(make_params("hectic"))
    ms = MarkovStock(fl, seed, dwell_s)
    t_end = DAYS[dwell_s] * 86400.0
    out = {}
    for g in range(fl.n_types):
        pts, lv = ms.path(g, t_end)
        dur = np.diff(np.append(pts, t_end))
        clock = np.mod(fl.start_offset + pts, 86400.0)
        band = np.searchsorted(fl.band_starts, clock, side="right") - 1
        boundary = np.isin(np.round(clock, 6), np.round(fl.band_starts, 6))
        changed = np.r_[False, lv[1:] != lv[:-1]] & ~boundary  # a change made by a redraw, not a band switch
        for b in range(len(fl.band_starts)):
            m = band == b
            share = np.array([dur[m & (lv == k)].sum() for k in range(3)]) / dur[m].sum()
            out[g, b] = (share, dur[m].sum(), int(changed[m].sum()))
    return fl, out


@pytest.mark.parametrize("dwell_s", [60.0, 900.0])
def test_stationary_law_per_band_is_the_specs(dwell_s):
    fl, stats = _band_stats(dwell_s)
    for (g, b), (share, t_band, _) in stats.items():
        want = np.array(fl.level_probs(b, g))
        # a time share's sd is at most sqrt(0.25·2·τ/T) (status correlation time τ ≤ D): allow 4 sd
        tol = 4 * np.sqrt(0.25 * 2 * dwell_s / t_band)
        assert share == pytest.approx(want, abs=tol), (fl.type_names[g], b, share, want, tol)


@pytest.mark.parametrize("dwell_s", [60.0, 900.0])
def test_mean_dwell_matches_stock_dwell_s(dwell_s):
    _, stats = _band_stats(dwell_s)
    for b in range(4):
        t = sum(v[1] for (g, bb), v in stats.items() if bb == b)
        n = sum(v[2] for (g, bb), v in stats.items() if bb == b)
        # time in band / runs started in it; ≥ 19 000 runs per band at D = 900 s: ~1 % sd
        assert t / n == pytest.approx(dwell_s, rel=0.05), (b, t / n)


def test_path_does_not_depend_on_when_it_is_queried():
    fl = Fleet.from_params(make_params("hectic"))
    dense, sparse = MarkovStock(fl, 7, 300.0), MarkovStock(fl, 7, 300.0)
    ts = np.sort(np.random.default_rng(0).uniform(0, 50_000, 2000))
    a = [dense.levels(t) for t in ts]
    b = {t: sparse.levels(t) for t in ts[::-97]}  # fewer queries, in reverse order
    assert all(a[i] == b[t] for i, t in enumerate(ts) if t in b)
    assert MarkovStock(fl, 8, 300.0).levels(40_000.0) is not None


def test_status_seen_is_the_status_the_delay_uses():
    r = simulate("edf", day="hectic", seed=0, stock_process="markov", stock_dwell_s=900)
    j = r.jobs
    prov = j["start"] - j["dispatch"]
    lo = {"High": (0, 10), "Medium": (30, 120), "Low": (600, 7200)}
    for lvl, (a, b) in lo.items():
        sel = j["stock_at_dispatch"] == lvl
        assert ((prov[sel] >= a) & (prov[sel] <= b)).all()


def test_markov_is_reproducible_and_fresh_is_unchanged():
    a = simulate("rh", day="surge", seed=2, stock_process="markov", stock_dwell_s=300).summary()
    b = simulate("rh", day="surge", seed=2, stock_process="markov", stock_dwell_s=300).summary()
    assert a == b
    # stock_dwell_s has no meaning for the fresh process: giving it there is refused (test_bad_inputs)
    with pytest.raises(ConfigError, match="stock_dwell_s = 60 is not allowed with stock_process = 'fresh'"):
        simulate("edf", seed=1, stock_dwell_s=60)


@pytest.mark.parametrize(
    "bad",
    [
        {"stock_process": "persistent"},
        {"stock_process": "markov", "stock_dwell_s": 0},
        {"stock_dwell_s": -5.0},
        {"stock_dwell_s": float("inf")},
    ],
)
def test_bad_stock_parameters_raise(bad):
    with pytest.raises(ConfigError, match="stock_"):
        make_params("hectic", **bad)


def _means(policy, seeds, **kw):
    rows = np.array(
        [
            [s["mean_wait_min"], s["miss_pct"]]
            for s in (simulate(policy, day="hectic", seed=k, **kw).summary() for k in seeds)
        ]
    )
    return rows.mean(0), rows.std(0, ddof=1) / np.sqrt(len(seeds))


def test_short_dwell_converges_to_the_fresh_model():
    """Tolerance: the 10-seed means differ by at most 3 standard errors of the difference
    (Welch), on mean wait and on miss rate, for FIFO, EDF and RH at D = 1 s (a redraw every
    ~0.5 s against decision points ~50 s apart). The same check fails at D = 3600 s."""
    seeds = range(10)

    def gap(policy, dwell):
        (f, fse) = _means(policy, seeds)
        (m, mse) = _means(policy, seeds, stock_process="markov", stock_dwell_s=dwell)
        return np.abs(m - f) / np.sqrt(fse**2 + mse**2)

    for pol in ("fifo", "edf", "rh"):
        z = gap(pol, 1.0)
        assert (z < 3.0).all(), (pol, z)
    assert (gap("edf", 3600.0) > 3.0).any()  # persistence does change the results: the check can fail


def test_regime_names_give_their_day_and_stock_model():
    from gpu_sched_agents.evaluate.protocol import REGIMES
    from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
    from gpu_sched_env.cgrsp.stock import parse_regime, regime_config, stock_params

    for name, (day, dwell) in REGIMES.items():  # the protocol's regimes are such names
        assert parse_regime(name) == (day, stock_params(dwell))
    assert parse_regime("normal_D3600.5") == ("normal", {"stock_process": "markov", "stock_dwell_s": 3600.5})
    base = CGRSPEnvConfig(day="surge", params={"c_max": 7, "stock_process": "markov", "stock_dwell_s": 300.0})
    assert regime_config(base, "hectic_fresh") == base.replace(day="hectic", params={"c_max": 7})  # the rest kept
    for bad in ("hectic", "hectic_D", "hectic_D0", "hectic_D-5", "hectic_Dx", "busy_fresh", "hectic_stale", "_fresh"):
        with pytest.raises(ConfigError, match=rf"regime = '{bad}' is not allowed; allowed: <day>_fresh or <day>_D"):
            parse_regime(bad)
