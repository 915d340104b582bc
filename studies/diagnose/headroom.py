"""How much room is there above the strongest rule? The rollout planner at larger budgets, paired.

A learner is asked to beat the strongest rule. Whether that is possible depends on how much
better a policy can do than the rule at all. This runs the rule (``best_rule`` per stock
model) and the rollout planner over that rule at one or more budgets on the same test days,
and prints the paired difference planner − rule (mean, 95 % CI, t and Wilcoxon p) and the
planner's seconds per day. The planner's candidates change *when* the rule dispatches
(which non-High slots it leaves idle), by default not which job goes where: this bounds the
room in deferral timing (and, with the ``portfolio`` knob, in the choice of job and slot
among the plans of other rules).

Rows are appended to ``--out`` as each day finishes (one line each, flushed), and a rerun with
the same ``--out`` skips the days already there: an interrupted run resumes.

    gpu-sched diagnose headroom --seeds 4 --budget n_rollouts=16,max_candidates=6 --out /tmp/h.csv
    gpu-sched diagnose headroom --seeds 32 --workers 16 --budget n_rollouts=64,max_candidates=8 --out h.csv
    gpu-sched diagnose headroom --budget 'n_rollouts=16,max_candidates=8,portfolio=[cadr_defer_exp,spt_defer_exp]'

``portfolio`` adds other rules' plans to the candidates (other job orders and slot choices),
so the planner also tries *which* job goes where.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.heuristics.cgrsp.config import RolloutKnobs
from gpu_sched_agents.heuristics.cgrsp.extensions import best_rule
from gpu_sched_env.cgrsp.batch import run_cell
from gpu_sched_env.cgrsp.policies import per_policy_kwargs
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.cliargs import parse_params, split_top
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.fanout import iter_cells
from studies.cgrsp.persistence import paired

SEED0 = 20000
COLUMNS = ["label", "policy", "day", "stock", "seed", "miss_pct", "mean_wait_min", "wall_s"]
RULE = "rule"
ROLLOUT_KNOBS = "one of " + ", ".join(RolloutKnobs.names())


def parse_budget(text: str) -> dict[str, Any]:
    """``n_rollouts=16,max_candidates=6,portfolio=[cadr_defer_exp,spt_defer_exp]`` -> knobs.

    Pairs are split at commas outside brackets; values are read as by ``--param`` (numbers, lists).
    """
    knobs = parse_params([p for p in split_top(text) if p], ROLLOUT_KNOBS, flag="--budget")
    if not knobs:
        raise ConfigError(f"--budget {text!r}: names no knob; expected NAME=VALUE[,NAME=VALUE...] with NAME {ROLLOUT_KNOBS}")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in knobs.items()}


def budget_label(knobs: dict[str, Any]) -> str:
    """The row label of a planner budget: ``rollout n_rollouts=16,max_candidates=6`` (knobs sorted)."""
    show = {k: "[" + ",".join(v) + "]" if isinstance(v, tuple) else v for k, v in knobs.items()}
    return "rollout " + ",".join(f"{k}={show[k]}" for k in sorted(show))


def timed_cell(label: str, stock: str, **cell: Any) -> dict[str, Any]:
    """One simulated day's row (:func:`~gpu_sched_env.cgrsp.batch.run_cell`, timed; top-level: picklable)."""
    t0 = time.perf_counter()
    s = run_cell(**cell)
    return {"label": label, "policy": cell["policy"], "day": cell["day"], "stock": stock, "seed": cell["seed"],
            "miss_pct": s["miss_pct"], "mean_wait_min": s["mean_wait_min"], "wall_s": time.perf_counter() - t0}


def cells(day: str, stocks: list[str], seeds: range, budgets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every (label, stock, seed) to run, knobs validated before anything runs."""
    out = []
    for stock in stocks:
        sp = stock_params(stock)
        rule = best_rule(stock_process=sp.get("stock_process", "fresh"))
        runs = [(RULE, rule, {})] + [(budget_label(b), "rollout", {**b, "base_rule": b.get("base_rule", rule)}) for b in budgets]
        for label, policy, knobs in runs:
            kw = per_policy_kwargs(day, {**sp, **knobs}, [policy])[policy]
            out += [dict(label=label, policy=policy, day=day, stock=stock, seed=int(s), **kw) for s in seeds]
    # the rule's (cheap) days first, then seed by seed: a run cut short leaves paired days
    return sorted(out, key=lambda c: (c["label"] != RULE, c["seed"]))


def done_keys(path: Path) -> set[tuple[str, str, int]]:
    """(label, stock, seed) already in ``path`` (an interrupted run resumes after them)."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    df = pd.read_csv(path, dtype={"stock": str})
    missing = set(COLUMNS) - set(df.columns)
    if missing:
        raise ConfigError(f"--out {path}: not a headroom CSV (lacks columns {sorted(missing)})")
    return {(r.label, r.stock, int(r.seed)) for r in df.itertuples()}


def run(day: str, stocks: list[str], seeds: range, budgets: list[dict[str, Any]], out: Path,
        workers: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Run the cells not yet in ``out``, appending a line per finished day; returns the whole table."""
    todo = cells(day, stocks, seeds, budgets)
    done = done_keys(out)
    todo = [c for c in todo if (c["label"], c["stock"], c["seed"]) not in done]
    out.parent.mkdir(parents=True, exist_ok=True)
    new = not out.exists() or out.stat().st_size == 0
    with out.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        if new:
            w.writeheader()
        for _, row in iter_cells(timed_cell, todo, executor="serial" if workers == 1 else "process",
                                 workers=workers, desc="days", progress=progress):
            w.writerow(row)
            fh.flush()
            os.fsync(fh.fileno())
    return pd.read_csv(out, dtype={"stock": str})


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per stock and label: days, mean miss and wait, seconds per day, and the paired difference to the rule.

    The planner rows carry :func:`studies.cgrsp.persistence.paired` against the rule, on the
    days both ran (mean, 95 % CI, t and Wilcoxon p per metric).
    """
    means = (df.groupby(["day", "stock", "label"], sort=False)
             .agg(n=("seed", "size"), miss_pct=("miss_pct", "mean"), mean_wait_min=("mean_wait_min", "mean"), s_per_day=("wall_s", "mean"))
             .reset_index())
    diffs = paired(df, RULE).drop(columns="vs").rename(columns={"n": "paired_n"})
    return means.merge(diffs, on=["day", "stock", "label"], how="left")


def figure(summ: pd.DataFrame, path: Path) -> Path:
    """Paired wait difference planner − rule (95 % CI) per budget, one panel per stock model."""
    from gpu_sched_env.core.plotting import plt, save

    rows = summ[summ.label != RULE]
    stocks = sorted(dict.fromkeys(rows.stock), key=lambda x: (x != "fresh", float(x) if x != "fresh" else 0.0))
    labels = list(dict.fromkeys(rows.label))
    fig, axes = plt.subplots(1, len(stocks), figsize=(5.5 * len(stocks), 1.2 + 0.55 * len(labels)), squeeze=False, sharey=True)
    for ax, stock in zip(axes[0], stocks):
        g = rows[rows.stock == stock].set_index("label")
        ys = [i for i, lab in enumerate(labels) if lab in g.index]
        sub = g.loc[[labels[i] for i in ys]]
        ax.errorbar(sub.mean_wait_min_diff, ys, xerr=sub.mean_wait_min_ci, fmt="o", capsize=4)
        for y, r in zip(ys, sub.itertuples()):
            ax.annotate(f"{r.mean_wait_min_diff:+.2f} ± {r.mean_wait_min_ci:.2f}, n = {r.paired_n:.0f}, t p = {r.mean_wait_min_t_p:.2g}",
                        (r.mean_wait_min_diff, y),
                        textcoords="offset points", xytext=(0, 7), ha="center", fontsize=7)
        ax.axvline(0.0, color="k", lw=0.8)
        lo, hi = min(0.0, (sub.mean_wait_min_diff - sub.mean_wait_min_ci).min()), max(0.0, (sub.mean_wait_min_diff + sub.mean_wait_min_ci).max())
        ax.set_xlim(lo - 0.12 * (hi - lo), hi + 0.12 * (hi - lo))
        rule = summ[(summ.label == RULE) & (summ.stock == stock)].mean_wait_min.item()
        ax.set_title(f"{summ.day.iloc[0]} day, stock {'fresh' if stock == 'fresh' else f'D = {stock} s'} (rule {rule:.1f} min)", fontsize=9)
        ax.set_xlabel("planner − rule, mean wait [min] (paired, 95 % CI)\n← planner better        rule better →", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0][0].set_yticks(range(len(labels)))
    axes[0][0].set_yticklabels([lab.removeprefix("rollout ").replace(",", ", ").replace(", portfolio", ",\nportfolio")
                                for lab in labels], fontsize=7)
    axes[0][0].set_ylim(len(labels) - 0.5, -0.7)
    fig.tight_layout()
    return save(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--day", default="hectic")
    ap.add_argument("--stock", nargs="+", default=["fresh", "900"], help="'fresh' and/or mean dwell times [s]")
    ap.add_argument("--seeds", type=int, default=10, help=f"test days (seeds from {SEED0})")
    ap.add_argument("--seed0", type=int, default=SEED0)
    ap.add_argument("--budget", action="append", type=parse_budget, default=None, metavar="K=V[,K=V...]",
                    help="rollout knobs of one planner budget (repeatable; default n_rollouts=16,max_candidates=6)")
    ap.add_argument("--workers", type=int, default=None, help="processes (default: usable cores)")
    ap.add_argument("--out", type=Path, default=Path("runs/headroom.csv"), help="CSV, appended and resumed")
    ap.add_argument("--png", type=Path, default=None, help="also draw the paired differences here")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--no-run", action="store_true", help="run nothing: summarise (and draw) the rows already in --out")
    a = ap.parse_args(argv)
    if a.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {a.seeds}")
    if a.workers is not None and a.workers < 1:
        ap.error(f"--workers must be at least 1, got {a.workers}")
    try:
        if a.no_run:
            done_keys(a.out)  # a foreign CSV is refused here too
            if not a.out.exists():
                raise ConfigError(f"--no-run: {a.out} does not exist")
            df = pd.read_csv(a.out, dtype={"stock": str})
        else:
            df = run(a.day, a.stock, range(a.seed0, a.seed0 + a.seeds), a.budget or [{"n_rollouts": 16, "max_candidates": 6}],
                     a.out, a.workers, progress=not a.no_progress)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    summ = summary(df)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(summ.round(4).to_string(index=False))
    if a.png is not None:
        print(f"figure: {figure(summ, a.png)}")
    print(f"rows: {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
