"""The planner's screen horizon against full-day rollouts: how well a short look-ahead predicts the day.

``python -m studies headroom --part planner-calibration``. The planner screens its candidates with rollouts
of ``horizon_s`` seconds plus a terminal term (:func:`~gpu_sched_agents.heuristics.cgrsp.planner.cost`)
and confirms on rollouts to the end of the day. This measures how well the screen's
estimate of a candidate's advantage over the base plan predicts the full-day advantage, at
decision points of real days where the planner has a choice: for each candidate, the mean
paired difference candidate − base over the same ``--futures`` public forks at each horizon
and to the end of the day (the futures of one seed agree up to the shorter horizon). Per
stock and horizon: Pearson r, the slope of full-day on screen difference (1: calibrated;
above 1: the screen understates), and the share of candidates whose sign the screen gets
right among those the full day separates from the base (|mean| > 2 SE).

    python -m studies headroom --part planner-calibration --seeds 2 --points 8 --futures 8 \
        --out docs/figures/planner_calibration
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError

HORIZONS = (300.0, 900.0, 1800.0, 3600.0)
SEED0 = 20000


def points(day: str, stock: str, seed: int, n_points: int, futures: int, horizons: tuple[float, ...]) -> list[dict]:
    """Screen and full-day differences at ``n_points`` decision points of one day (spread over the day)."""
    from gpu_sched_agents.heuristics.cgrsp import make_policy
    from gpu_sched_env.cgrsp.fork import snapshot
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.sim import Simulator
    from gpu_sched_env.cgrsp.stock import stock_params
    from gpu_sched_env.core.rng import stream

    p = make_params(day, **stock_params(stock))
    sim = Simulator(p, seed)
    pol = make_policy("rollout", p)
    pol.reset(sim.view, stream(seed, "cgrsp/policy"))
    rule = pol._base  # the base rule drives the day: the points are the rule's own states
    # decision points with a choice come every few seconds on a busy day: take one every
    # `every` seconds of simulated time after the first half hour
    every = 0.9 * p.n_jobs / p.arrival_rate / n_points
    rows, next_t = [], 1800.0
    while sim.advance() and len({r["t"] for r in rows}) < n_points:
        view = sim.view
        if sim.t >= next_t:
            cands = pol.candidates(view)
            if len(cands) > 1:
                next_t = sim.t + every
                snap = snapshot(view)
                full = pol.costs(view, snap, cands, range(futures), 0.0)
                d_full = full[:, 1:] - full[:, :1]
                for h in horizons:
                    c = pol.costs(view, snap, cands, range(futures), h)
                    d = c[:, 1:] - c[:, :1]
                    for k in range(d.shape[1]):
                        rows.append(
                            {
                                "day": day,
                                "stock": stock,
                                "seed": seed,
                                "t": sim.t,
                                "cand": k + 1,
                                "horizon_s": h,
                                "d_screen": d[:, k].mean(),
                                "d_full": d_full[:, k].mean(),
                                "se_full": d_full[:, k].std(ddof=1) / np.sqrt(futures),
                            }
                        )
        for j, s in rule.decide(view):
            sim.assign(j, s)
    return rows


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per stock × horizon: pairs, Pearson r, slope, sign agreement.

    The slope is of the full day on the screen, through 0; the sign agreement counts where the full day separates.
    """
    out = []
    for (stock, h), g in df.groupby(["stock", "horizon_s"], sort=False):
        x, y = g.d_screen.to_numpy(), g.d_full.to_numpy()
        sep = np.abs(y) > 2 * g.se_full.to_numpy()
        out.append(
            {
                "stock": stock,
                "horizon_s": h,
                "pairs": len(g),
                "r": float(np.corrcoef(x, y)[0, 1]) if len(g) > 2 else np.nan,
                "slope": float(x @ y / (x @ x)) if x @ x > 0 else np.nan,
                "separated": int(sep.sum()),
                "sign_agree_pct": 100.0 * float(np.mean(np.sign(x[sep]) == np.sign(y[sep]))) if sep.any() else np.nan,
            }
        )
    return pd.DataFrame(out)


def figure(df: pd.DataFrame, path: Path) -> Path:
    from gpu_sched_env.core.plotting import plt, save

    hs = sorted(df.horizon_s.unique())
    fig, axes = plt.subplots(1, len(hs), figsize=(3.6 * len(hs), 3.6), sharey=True)
    for ax, h in zip(np.atleast_1d(axes), hs):
        for stock, g in df[df.horizon_s == h].groupby("stock"):
            ax.scatter(g.d_screen / 60, g.d_full / 60, s=10, alpha=0.6, label=f"stock {stock}")
        lim = np.nanmax(np.abs(df[["d_screen", "d_full"]].to_numpy())) / 60
        ax.plot([-lim, lim], [-lim, lim], color="grey", lw=1)
        ax.set(title=f"screen horizon {h:.0f} s", xlabel="screen: candidate − base [job-min]")
    np.atleast_1d(axes)[0].set_ylabel("full day: candidate − base [job-min]")
    np.atleast_1d(axes)[0].legend()
    fig.tight_layout()
    return save(fig, path)


def main(argv: list[str] | None = None) -> int:
    """``python -m studies headroom --part planner-calibration`` (see the module doc)."""
    from gpu_sched_env.core.io import atomic_write_table, atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--day", default="hectic")
    ap.add_argument("--stock", nargs="+", default=["fresh", "900"])
    ap.add_argument("--seeds", type=int, default=2, help=f"days per stock (seeds {SEED0}..)")
    ap.add_argument("--points", type=int, default=8, help="decision points per day")
    ap.add_argument("--futures", type=int, default=8, help="public forks per point (shared by every horizon)")
    ap.add_argument("--horizons", type=float, nargs="+", default=list(HORIZONS))
    ap.add_argument("--out", default="docs/figures/planner_calibration", help="stem of the .csv and .png")
    args = ap.parse_args(argv)
    try:
        if min(args.seeds, args.points) < 1 or args.futures < 2 or min(args.horizons) <= 0:
            raise ConfigError("--seeds, --points >= 1, --futures >= 2 and every --horizons > 0 are required")
        rows = []
        for stock in args.stock:
            for seed in range(SEED0, SEED0 + args.seeds):
                rows += points(args.day, stock, seed, args.points, args.futures, tuple(args.horizons))
        if not rows:  # a light day (quiet) may offer no choice after the first half hour
            raise ConfigError(f"no decision point with two or more candidates on {args.day!r}: give a busier --day")
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    df = pd.DataFrame(rows)
    stem = Path(args.out)
    atomic_write_table(stem.with_suffix(".csv"), df)
    figure(df, stem.with_suffix(".png"))
    s = summary(df)
    lines = [
        "| stock | screen horizon s | pairs | r | slope full/screen | separated | sign right % |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.stock} | {r.horizon_s:.0f} | {r.pairs} | {r.r:.2f} | {r.slope:.2f} | {r.separated} | "
        f"{r.sign_agree_pct:.0f} |"
        for r in s.itertuples()
    ]
    atomic_write_text(stem.with_suffix(".md"), "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


__all__ = ["HORIZONS", "main", "points", "summary"]
