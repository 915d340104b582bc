"""One policy for the month: a learned policy against the heuristics on the month protocol.

The deployment question an operator asks: over a month of 30 days whose types follow the
month mix (4 hectic, 3 surge, 18 normal, 5 quiet, order shuffled per replication), which
policy gives the lowest monthly wait without more misses? Every policy plays the same days
(day ``d`` of replication ``r`` is simulated with run seed
:func:`~gpu_sched_env.cgrsp.workload.month_day_seed`, the experiment programme's month
seeds), so replications are matched samples: the table gives the job-weighted monthly mean
wait and miss rate with 95 % CIs over replications, and paired tests (learned − policy,
Holm over the family) on those monthly figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from gpu_sched_env.cgrsp.batch import run_grid
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.workload import month_day_seed, month_plan
from gpu_sched_env.core.stats import compare_pairs, mean_ci

MONTH_METRICS = ("mean_wait_min", "miss_pct")


def month_days(reps: Sequence[int], n_days: int = 30) -> pd.DataFrame:
    """One row per (replication, day index): the day type and its run seed."""
    return pd.DataFrame(
        [
            {"rep": int(r), "day_index": d, "day": day, "seed": month_day_seed(int(r), d)}
            for r in reps
            for d, day in enumerate(month_plan(int(r), n_days=n_days))
        ]
    )


def month_runs(
    learned: Any,
    label: str,
    config: CGRSPEnvConfig,
    policies: Sequence[str],
    reps: Sequence[int],
    evaluate_fn: Any,
    progress: bool = False,
) -> pd.DataFrame:
    """Per-day summaries of ``learned`` (through ``evaluate_fn(model, config, seeds)``) and of ``policies``.

    ``config`` is the learned policy's env config; its simulator parameters (the stock
    model) hold for every policy; each day type is played with ``config.replace(day=...)``.
    """
    plan = month_days(reps)
    rows = []
    for day, g in plan.groupby("day", sort=False):
        seeds = g.seed.tolist()
        meta = g.set_index("seed")[["rep", "day_index"]]
        own = evaluate_fn(learned, config.replace(day=day), seeds).assign(seed=seeds, policy=label)
        heur = run_grid(
            list(policies), seeds, day=day, params=dict(config.params), executor="serial", progress=progress
        )
        both = pd.concat([own, heur], ignore_index=True)
        rows.append(both.join(meta, on="seed"))
    return pd.concat(rows, ignore_index=True)


def month_totals(runs: pd.DataFrame) -> pd.DataFrame:
    """Per policy × replication: jobs, job-weighted mean wait [min] and miss rate [%]."""
    r = runs.assign(wait_sum=runs.mean_wait_min * runs.completed, misses=runs.miss_pct / 100.0 * runs.n_jobs)
    g = r.groupby(["policy", "rep"], sort=False)[["n_jobs", "completed", "wait_sum", "misses"]].sum()
    return pd.DataFrame(
        {
            "jobs": g.n_jobs,
            "mean_wait_min": g.wait_sum / g.completed,
            "miss_pct": 100.0 * g.misses / g.n_jobs,
        }
    ).reset_index()


def month_comparison(runs: pd.DataFrame, label: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, tests)``: monthly means ± CI per policy, and paired tests of ``label`` against every other."""
    tot = month_totals(runs)
    table = pd.DataFrame(
        [
            {
                "policy": p,
                "reps": len(g),
                **{m: mean_ci(g[m]).mean for m in MONTH_METRICS},
                **{f"{m}_ci": mean_ci(g[m]).half_width for m in MONTH_METRICS},
            }
            for p, g in tot.groupby("policy", sort=False)
        ]
    ).set_index("policy")
    wide = {m: tot.pivot(index="rep", columns="policy", values=m).sort_index() for m in MONTH_METRICS}
    values, pairs, keys = {}, [], []
    for p in table.index.drop(label):
        for m in MONTH_METRICS:
            a, b = f"{label}|{p}|{m}", f"{p}|{m}"
            values[a], values[b] = wide[m][label].to_numpy(), wide[m][p].to_numpy()
            pairs.append((a, b))
            keys.append((p, m))
    rows = compare_pairs(values, pairs)
    tests = pd.DataFrame(
        {
            "vs": [k[0] for k in keys],
            "metric": [k[1] for k in keys],
            "mean_diff": [r["mean_diff"] for r in rows],
            "t_p": [r["t_p"] for r in rows],
            "t_p_holm": [r["t_p_holm"] for r in rows],
            "wilcoxon_p_holm": [r["w_p_holm"] for r in rows],
        }
    )
    return table, tests


def month_markdown(table: pd.DataFrame, tests: pd.DataFrame, label: str, stock: str, reps: int) -> str:
    """The month table and tests as Markdown."""
    rows = [
        "| policy | monthly mean wait (min) | monthly miss % | Δ wait vs learned (Holm p) "
        "| Δ miss vs learned (Holm p) |",
        "|---|---|---|---|---|",
    ]
    t = tests.set_index(["vs", "metric"])
    for p, r in table.sort_values("mean_wait_min").iterrows():
        cells = []
        for m in MONTH_METRICS:
            if p == label:
                cells.append("–")
            else:
                x = t.loc[(p, m)]
                cells.append(f"{-x.mean_diff:+.2f} ({x.t_p_holm:.2g})")
        rows.append(
            f"| {p} | {r.mean_wait_min:.2f} ± {r.mean_wait_min_ci:.2f} | {r.miss_pct:.3f} ± {r.miss_pct_ci:.3f} | "
            f"{cells[0]} | {cells[1]} |"
        )
    head = (
        f"Month protocol, {stock} stock: {reps} replications × 30 days (mix 4 hectic, 3 surge, 18 normal, 5 quiet); "
        f"Δ = policy − {label} (positive: the policy waits / misses more than the learned one).\n\n"
    )
    return head + "\n".join(rows) + "\n"


__all__ = ["MONTH_METRICS", "month_comparison", "month_days", "month_markdown", "month_runs", "month_totals"]
