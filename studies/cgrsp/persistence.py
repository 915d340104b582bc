"""Persistence sweep: the best rule and the rollout planner against the mean stock dwell D.

    python -m studies persistence                                   # docs/figures/persistence.{png,csv}
    python -m studies persistence --rule-seeds 3 --planner-seeds 1 --out /tmp/p   # a quick look

Stock models: ``fresh`` (redrawn at every decision point) and the Markov process with mean
dwell D ∈ {60, 300, 900, 3600} s; days hectic and surge; test seeds from 20000. Writes a
tidy CSV (one row per policy × day × stock model × seed: ``label, policy, day, stock,
dwell_s, seed, miss_pct, mean_wait_min``) and a figure (mean wait and miss % against D,
95 % CIs). Learned policies plug in through :func:`policy_points` (a factory that builds
a policy object for a parameter set, run by ``simulate``), or as rows of the same CSV
layout given with ``--extra CSV`` (e.g. written by the learner's evaluation).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.heuristics.cgrsp import best_rule
from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.batch import run_grid
from gpu_sched_env.cgrsp.params import CGRSPParams, make_params
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.cliargs import parse_params
from gpu_sched_env.core.errors import ConfigError

DWELLS: tuple[str, ...] = ("fresh", "60", "300", "900", "3600")
DAYS = ("hectic", "surge")
SEED0 = 20000
COLUMNS = ["label", "policy", "day", "stock", "dwell_s", "seed", "miss_pct", "mean_wait_min"]


def _tidy(df: pd.DataFrame, label: str, day: str, dwell: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "label": label,
            "policy": df.policy,
            "day": day,
            "stock": dwell,
            "dwell_s": float("nan") if dwell == "fresh" else float(dwell),
            "seed": df.seed,
            "miss_pct": df.miss_pct,
            "mean_wait_min": df.mean_wait_min,
        }
    )[COLUMNS]


def named_points(
    label: str,
    policy: str | Callable[[str], str],
    seeds: Sequence[int],
    dwells: Iterable[str] = DWELLS,
    days: Iterable[str] = DAYS,
    knobs: dict[str, Any] | None = None,
    workers: int = 1,
) -> pd.DataFrame:
    """Rows for a registered policy (or ``policy(stock process) -> name``, e.g. :func:`best_rule`)."""
    out = []
    for dwell in dwells:
        sp = stock_params(dwell)
        name = policy if isinstance(policy, str) else policy(stock_process=sp.get("stock_process", "fresh"))
        for day in days:
            df = run_grid(
                [name],
                seeds,
                day=day,
                params={**sp, **(knobs or {})},
                executor="process" if workers > 1 else "serial",
                workers=workers,
                progress=False,
            )
            out.append(_tidy(df, label, day, dwell))
    return pd.concat(out, ignore_index=True)


def policy_points(
    label: str,
    factory: Callable[[CGRSPParams], Any],
    seeds: Sequence[int],
    dwells: Iterable[str] = DWELLS,
    days: Iterable[str] = DAYS,
) -> pd.DataFrame:
    """Rows for any policy object (``reset(sim, rng)``, ``decide(sim)``): ``factory(params)`` builds one per day.

    This is how a learned policy joins the sweep: wrap the model in an object with the
    simulator-policy protocol (or evaluate it elsewhere and pass its rows with ``--extra``).
    """
    out = []
    for dwell in dwells:
        sp = stock_params(dwell)
        for day in days:
            p = make_params(day, **sp)
            rows = []
            for seed in seeds:
                s = simulate(factory(p), day=day, seed=seed, **sp).summary()
                rows.append(
                    {"policy": label, "seed": seed, "miss_pct": s["miss_pct"], "mean_wait_min": s["mean_wait_min"]}
                )
            out.append(_tidy(pd.DataFrame(rows), label, day, dwell))
    return pd.concat(out, ignore_index=True)


def paired(df: pd.DataFrame, ref: str) -> pd.DataFrame:
    """Every other label minus ``ref`` on the seeds both ran, per day × stock.

    Per metric: mean difference ``<m>_diff``, 95 % CI half-width ``<m>_ci`` and the paired t
    and Wilcoxon p values ``<m>_t_p``, ``<m>_w_p`` (NaN with fewer than two common seeds).
    """
    from gpu_sched_env.core.stats import mean_ci, paired_compare

    rows = []
    base = df[df.label == ref].set_index(["day", "stock", "seed"])
    for label, g in df[df.label != ref].groupby("label", sort=False):
        for (day, stock), h in g.groupby(["day", "stock"], sort=False):
            h = h.set_index(["day", "stock", "seed"])
            common = h.index.intersection(base.index).sort_values()
            row = {"label": label, "vs": ref, "day": day, "stock": stock, "n": len(common)}
            for m in ("miss_pct", "mean_wait_min"):
                a, b = h.loc[common, m].to_numpy(), base.loc[common, m].to_numpy()
                ci = mean_ci(a - b) if len(common) else None
                pc = paired_compare(a, b) if len(common) > 1 else None
                row[f"{m}_diff"], row[f"{m}_ci"] = (ci.mean, ci.half_width) if ci else (float("nan"),) * 2
                row[f"{m}_t_p"], row[f"{m}_w_p"] = (pc.t_p, pc.w_p) if pc else (float("nan"),) * 2
            rows.append(row)
    return pd.DataFrame(rows)


def figure(df: pd.DataFrame, path: Path) -> Path:
    """Mean wait and miss % (95 % CI) against the stock model, one panel per day × metric."""
    from gpu_sched_env.core.plotting import plt, save
    from gpu_sched_env.core.stats import mean_ci

    stocks = [s for s in DWELLS if s in set(df.stock)] + sorted(set(df.stock) - set(DWELLS))
    days = [d for d in DAYS if d in set(df.day)]
    fig, axes = plt.subplots(2, len(days), figsize=(5.2 * len(days), 7.0), squeeze=False)
    for col, day in enumerate(days):
        for row, (m, lab) in enumerate((("mean_wait_min", "mean wait [min]"), ("miss_pct", "deadline miss [%]"))):
            ax = axes[row][col]
            for label, g in df[df.day == day].groupby("label", sort=False):
                xs, ys, es = [], [], []
                for i, st in enumerate(stocks):
                    v = g[g.stock == st][m].to_numpy()
                    if len(v):
                        ci = mean_ci(v)
                        xs.append(i)
                        ys.append(ci.mean)
                        es.append(0.0 if ci.half_width != ci.half_width else ci.half_width)
                n = g.seed.nunique()
                ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=f"{label} ({n} seeds)")
            ax.set_xticks(range(len(stocks)))
            ax.set_xticklabels(["fresh" if s == "fresh" else f"D={s}s" for s in stocks])
            ax.set_title(f"{day} day")
            ax.set_ylabel(lab)
            ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8, frameon=False)
    fig.suptitle("Stock persistence: fresh draw vs Markov mean dwell D (test seeds from 20000)")
    fig.subplots_adjust(bottom=0.12, hspace=0.35)
    return save(fig, path)


def main(argv: list[str] | None = None) -> int:
    """Run the sweep and write the CSV and figure; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rule-seeds", type=int, default=30, help="seeds for the best rule (from 20000)")
    ap.add_argument("--planner-seeds", type=int, default=10, help="seeds for the rollout planner (0: leave it out)")
    ap.add_argument("--dwells", nargs="+", default=list(DWELLS), help="'fresh' and/or mean dwell times [s]")
    ap.add_argument("--days", nargs="+", default=list(DAYS), choices=list(DAYS))
    ap.add_argument(
        "--planner-knob",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="rollout knob (n_rollouts, horizon_s, max_candidates, confidence_z, base_rule)",
    )
    ap.add_argument("--extra", type=Path, action="append", default=[], help="tidy CSV of further points (same columns)")
    ap.add_argument(
        "--planner-from",
        type=Path,
        default=None,
        help="take the planner's rows from an earlier CSV of this script instead of re-running it",
    )
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("docs/figures/persistence"), help="path stem of the .csv and .png")
    a = ap.parse_args(argv)
    for d in a.dwells:
        stock_params(d)
    knobs = parse_params(a.planner_knob, "a rollout knob", flag="--planner-knob")
    rule_names = {best_rule(stock_process=stock_params(d).get("stock_process", "fresh")) for d in a.dwells}
    parts = [
        named_points(
            f"best rule ({', '.join(sorted(rule_names))})",
            best_rule,
            range(SEED0, SEED0 + a.rule_seeds),
            a.dwells,
            a.days,
            workers=a.workers,
        )
    ]
    if a.planner_from is not None:
        earlier = pd.read_csv(a.planner_from, dtype={"stock": str})
        parts.append(earlier[earlier.label == "rollout planner"][COLUMNS])
    elif a.planner_seeds:
        parts.append(
            named_points(
                "rollout planner",
                "rollout",
                range(SEED0, SEED0 + a.planner_seeds),
                a.dwells,
                a.days,
                knobs=knobs,
                workers=a.workers,
            )
        )
    for path in a.extra:
        extra = pd.read_csv(path)
        missing = sorted(set(COLUMNS) - set(extra.columns))
        if missing:
            raise ConfigError(f"--extra {path}: missing columns {missing}; need {COLUMNS}")
        parts.append(extra[COLUMNS])
    df = pd.concat(parts, ignore_index=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out.with_suffix(".csv"), index=False)
    figure(df, a.out.with_suffix(".png"))
    summary = df.groupby(["label", "policy", "day", "stock"], sort=False)[["miss_pct", "mean_wait_min"]].mean().round(2)
    print(summary.to_string())
    if df.label.nunique() > 1:
        print("\nPaired differences (label − best rule) on the seeds both ran:")
        print(paired(df, parts[0].label.iloc[0]).round(2).to_string(index=False))
    print(f"written {a.out.with_suffix('.csv')} and {a.out.with_suffix('.png')}")
    return 0
