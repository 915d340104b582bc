"""MIG experiment: one tidy row per (seed, method), summary tables, figures and the doc's tables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.mig.cpsat import run_exact
from gpu_sched_env.core.stats import mean_ci, paired_compare
from gpu_sched_env.core.tables import markdown_table as _markdown_table
from gpu_sched_env.mig.bound import makespan_lower_bound
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES, check_schedule
from gpu_sched_env.mig.sim import RunResult, run_policy
from gpu_sched_env.mig.workload import mig_dataset

HEURISTIC = "best_fit"  # the study's heuristic: whole jobs, never paused
PAUSING = "best_fit_pausing"  # the fair baseline: re-decided every minute, may pause (as CP-SAT may)
HEURISTICS = (HEURISTIC, PAUSING)  # registered placement policies run beside CP-SAT
COLUMNS = (
    "seed",
    "method",
    "makespan",
    "lower_bound",
    "gap_to_lb",
    "total_completion",
    "mean_flow",
    "deadline_misses",
    "solve_time_s",
    "status",
    "gap",
    "bound",
    "n_polls",
    "n_jobs",
    "n_skipped",
)


def result_row(seed: int, r: RunResult, lower_bound: int) -> dict[str, Any]:
    """Flatten one run into a table row; ``gap_to_lb`` = (makespan − LB) / LB."""
    m = r.metrics
    return {
        "seed": seed,
        "method": r.method,
        "makespan": m.makespan,
        "lower_bound": lower_bound,
        "gap_to_lb": (m.makespan - lower_bound) / lower_bound if lower_bound > 0 else 0.0,
        "total_completion": m.total_completion,
        "mean_flow": m.mean_flow,
        "deadline_misses": m.deadline_misses,
        "solve_time_s": r.solve_time,
        "status": r.status,
        "gap": r.gap,
        "bound": r.bound,
        "n_polls": r.n_polls,
        "n_jobs": m.n_jobs,
        "n_skipped": m.n_skipped,
    }


def run_seed(
    seed: int,
    *,
    n_jobs: int = 50,
    time_limit: float = 10.0,
    workers: int = 1,
    poll_interval: int = 1,
    capacities: Sequence[int] = DEFAULT_CAPACITIES,
) -> list[dict[str, Any]]:
    """Both Best-Fits and CP-SAT on the data set of ``seed``; every schedule is checked."""
    jobs = mig_dataset(seed, n_jobs)
    lb = makespan_lower_bound(jobs, capacities, poll_interval)
    rows = []
    runs = [run_policy(jobs, h, capacities, poll_interval, seed) for h in HEURISTICS]
    runs.append(run_exact(jobs, capacities, poll_interval, time_limit, workers, seed))
    for r in runs:
        check_schedule(jobs, capacities, r.schedule, poll_interval, r.skipped)
        if r.metrics.makespan < lb:
            raise AssertionError(f"seed {seed}: {r.method} makespan {r.metrics.makespan} < lower bound {lb}")
        rows.append(result_row(seed, r, lb))
    return rows


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean (95 % CI) and quantiles of makespan, mean of the others, status counts."""
    out = []
    for method, g in df.groupby("method", sort=False):
        ci = mean_ci(g["makespan"])
        st = g["solve_time_s"]
        out.append(
            {
                "method": method,
                "n": len(g),
                "makespan_mean": ci.mean,
                "makespan_ci95": ci.half_width,
                "makespan_min": g["makespan"].min(),
                "makespan_median": g["makespan"].median(),
                "makespan_max": g["makespan"].max(),
                "gap_to_lb_mean": g["gap_to_lb"].mean(),
                "gap_to_lb_max": g["gap_to_lb"].max(),
                "at_lb": int((g["makespan"] == g["lower_bound"]).sum()),
                "total_completion_mean": g["total_completion"].mean(),
                "deadline_misses_mean": g["deadline_misses"].mean(),
                "solve_time_median_s": st.median(),
                "solve_time_p95_s": st.quantile(0.95),
                "solve_time_max_s": st.max(),
                "optimal": int((g["status"] == "optimal").sum()),
                "feasible": int((g["status"] == "feasible").sum()),
                "unknown": int((g["status"] == "unknown").sum()),
                "gap_max": g["gap"].max(),
            }
        )
    return pd.DataFrame(out)


def paired(df: pd.DataFrame, a: str = HEURISTIC, b: str = "cpsat") -> dict[str, Any]:
    """Paired comparison of makespan, a − b, over the common seeds."""
    w = df.pivot(index="seed", columns="method", values="makespan").dropna()
    pc = paired_compare(w[a], w[b])
    rel = (w[a] - w[b]) / w[b]
    return {
        "n": pc.n,
        "mean_diff": pc.mean_diff,
        "t_p": pc.t_p,
        "wilcoxon_p": pc.w_p,
        "cohens_d": pc.cohens_d,
        "mean_rel_diff": float(rel.mean()),
        f"share_{b}_better": float((w[a] > w[b]).mean()),
        "share_equal": float((w[a] == w[b]).mean()),
    }


def figures(df: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Makespan and solve-time distributions per method, and the per-seed improvement."""
    import matplotlib.pyplot as plt

    from gpu_sched_env.core.plotting import save

    out_dir = Path(out_dir)
    methods = list(dict.fromkeys(df["method"]))
    paths = []
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    data = [df.loc[df["method"] == m, "makespan"].to_numpy() for m in methods]
    ax[0].boxplot(data, tick_labels=methods)
    ax[0].set_ylabel("makespan [min]")
    ax[0].set_title(f"Makespan over {df['seed'].nunique()} data sets")
    bins = np.linspace(min(map(np.min, data)), max(map(np.max, data)), 25)
    for m, d in zip(methods, data, strict=True):
        ax[1].hist(d, bins=bins, alpha=0.55, label=m)
    ax[1].set_xlabel("makespan [min]")
    ax[1].set_ylabel("data sets")
    ax[1].legend()
    fig.tight_layout()
    paths.append(save(fig, out_dir / "makespan.png"))

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for m in methods:
        st = np.maximum(df.loc[df["method"] == m, "solve_time_s"].to_numpy(), 1e-6)
        ax.hist(st, bins=np.logspace(-6, 2, 40), alpha=0.6, label=m)
    ax.set_xscale("log")
    ax.set_xlabel("solve time per data set [s] (log)")
    ax.set_ylabel("data sets")
    ax.set_title("Solve time")
    ax.legend()
    fig.tight_layout()
    paths.append(save(fig, out_dir / "solve_time.png"))

    pairs = [h for h in HEURISTICS if {h, "cpsat"} <= set(methods)]
    if pairs:
        w = df.pivot(index="seed", columns="method", values="makespan").dropna()
        fig, ax = plt.subplots(figsize=(6.5, 4))
        diffs = {h: (w[h] - w["cpsat"]).to_numpy() for h in pairs}
        lo, hi = min(d.min() for d in diffs.values()), max(d.max() for d in diffs.values())
        bins = np.arange(lo - 0.5, hi + 1.5, max(1, (hi - lo) // 25))
        for h, d in diffs.items():
            ax.hist(d, bins=bins, alpha=0.6, label=h)
        ax.set_xlabel("heuristic makespan − CP-SAT makespan [min]")
        ax.set_ylabel("data sets")
        ax.set_title("Per-data-set difference to CP-SAT")
        ax.legend()
        fig.tight_layout()
        paths.append(save(fig, out_dir / "improvement.png"))
    return paths


def gantt_figure(seed: int, out_path: str | Path, time_limit: float = 10.0, n_jobs: int = 50) -> Path:
    """Unit Gantt charts of Best-Fit, the pausing Best-Fit and CP-SAT on one data set."""
    import matplotlib.pyplot as plt

    from gpu_sched_env.core.plotting import save

    jobs = mig_dataset(seed, n_jobs)
    runs = [*(run_policy(jobs, h) for h in HEURISTICS), run_exact(jobs, time_limit=time_limit)]
    fig, axes = plt.subplots(len(runs), 1, figsize=(12, 2.1 * len(runs)), sharex=True)
    cmap = plt.get_cmap("tab20")
    for ax, r in zip(axes, runs, strict=True):
        s = r.schedule
        ax.barh(
            s["instance"],
            1.0,
            left=s["start"],
            color=[cmap(j % 20) for j in s["job"]],
            edgecolor="white",
            linewidth=0.2,
            height=0.8,
        )
        ax.set_yticks(range(len(DEFAULT_CAPACITIES)))
        ax.set_yticklabels([f"inst {i} ({c} MB)" for i, c in enumerate(DEFAULT_CAPACITIES)])
        ax.invert_yaxis()
        ax.set_title(f"{r.method}: makespan {r.metrics.makespan} min (seed {seed}; colour = job)")
    axes[-1].set_xlabel("time [min]")
    fig.tight_layout()
    return save(fig, out_path)


def markdown_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """A GitHub Markdown table (:func:`gpu_sched_env.core.tables.markdown_table`)."""
    return _markdown_table(df, floatfmt, nan="nan")
