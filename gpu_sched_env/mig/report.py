"""MIG experiment: one tidy row per (seed, method), summary tables and figures from them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.core.stats import mean_ci, paired_compare
from gpu_sched_env.mig.cpsat import run_exact
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES, check_schedule
from gpu_sched_env.mig.sim import RunResult, run_policy
from gpu_sched_env.mig.workload import mig_dataset

HEURISTIC = "best_fit"  # the registered placement policy compared with CP-SAT
COLUMNS = ("seed", "method", "makespan", "total_completion", "mean_flow", "deadline_misses",
           "solve_time_s", "status", "gap", "bound", "n_polls", "n_jobs", "n_skipped")


def result_row(seed: int, r: RunResult) -> dict[str, Any]:
    """Flatten one run into a table row."""
    m = r.metrics
    return {
        "seed": seed, "method": r.method, "makespan": m.makespan,
        "total_completion": m.total_completion, "mean_flow": m.mean_flow,
        "deadline_misses": m.deadline_misses, "solve_time_s": r.solve_time,
        "status": r.status, "gap": r.gap, "bound": r.bound, "n_polls": r.n_polls,
        "n_jobs": m.n_jobs, "n_skipped": m.n_skipped,
    }


def run_seed(
    seed: int, *, n_jobs: int = 50, time_limit: float = 10.0, workers: int = 1,
    poll_interval: int = 1, capacities: Sequence[int] = DEFAULT_CAPACITIES,
) -> list[dict[str, Any]]:
    """Best-Fit and CP-SAT on the data set of ``seed``; every schedule is checked."""
    jobs = mig_dataset(seed, n_jobs)
    rows = []
    for r in (
        run_policy(jobs, HEURISTIC, capacities, poll_interval, seed),
        run_exact(jobs, capacities, poll_interval, time_limit, workers, seed),
    ):
        check_schedule(jobs, capacities, r.schedule, poll_interval, r.skipped)
        rows.append(result_row(seed, r))
    return rows


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean (95 % CI) and quantiles of makespan, mean of the others, status counts."""
    out = []
    for method, g in df.groupby("method", sort=False):
        ci = mean_ci(g["makespan"])
        st = g["solve_time_s"]
        out.append({
            "method": method, "n": len(g),
            "makespan_mean": ci.mean, "makespan_ci95": ci.half_width,
            "makespan_min": g["makespan"].min(), "makespan_median": g["makespan"].median(),
            "makespan_max": g["makespan"].max(),
            "total_completion_mean": g["total_completion"].mean(),
            "deadline_misses_mean": g["deadline_misses"].mean(),
            "solve_time_median_s": st.median(), "solve_time_p95_s": st.quantile(0.95),
            "solve_time_max_s": st.max(),
            "optimal": int((g["status"] == "optimal").sum()),
            "feasible": int((g["status"] == "feasible").sum()),
            "unknown": int((g["status"] == "unknown").sum()),
            "gap_max": g["gap"].max(),
        })
    return pd.DataFrame(out)


def paired(df: pd.DataFrame, a: str = "best_fit", b: str = "cpsat") -> dict[str, Any]:
    """Paired comparison of makespan, a − b, over the common seeds."""
    w = df.pivot(index="seed", columns="method", values="makespan").dropna()
    pc = paired_compare(w[a], w[b])
    rel = (w[a] - w[b]) / w[b]
    return {"n": pc.n, "mean_diff": pc.mean_diff, "t_p": pc.t_p, "wilcoxon_p": pc.w_p,
            "cohens_d": pc.cohens_d, "mean_rel_diff": float(rel.mean()),
            "share_cpsat_better": float((w[a] > w[b]).mean()),
            "share_equal": float((w[a] == w[b]).mean())}


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

    if {"best_fit", "cpsat"} <= set(methods):
        w = df.pivot(index="seed", columns="method", values="makespan").dropna()
        fig, ax = plt.subplots(figsize=(6.5, 4))
        d = (w["best_fit"] - w["cpsat"]).to_numpy()
        ax.hist(d, bins=np.arange(d.min() - 0.5, d.max() + 1.5, max(1, (d.max() - d.min()) // 25 or 1)))
        ax.set_xlabel("Best-Fit makespan − CP-SAT makespan [min]")
        ax.set_ylabel("data sets")
        ax.set_title("Per-data-set improvement of CP-SAT over Best-Fit")
        fig.tight_layout()
        paths.append(save(fig, out_dir / "improvement.png"))
    return paths


def gantt_figure(seed: int, out_path: str | Path, time_limit: float = 10.0, n_jobs: int = 50) -> Path:
    """Side-by-side unit Gantt charts of Best-Fit and CP-SAT on one data set."""
    import matplotlib.pyplot as plt

    from gpu_sched_env.core.plotting import save

    jobs = mig_dataset(seed, n_jobs)
    runs = [run_policy(jobs, HEURISTIC), run_exact(jobs, time_limit=time_limit)]
    fig, axes = plt.subplots(2, 1, figsize=(12, 4.2), sharex=True)
    cmap = plt.get_cmap("tab20")
    for ax, r in zip(axes, runs, strict=True):
        s = r.schedule
        ax.barh(s["instance"], 1.0, left=s["start"], color=[cmap(j % 20) for j in s["job"]],
                edgecolor="white", linewidth=0.2, height=0.8)
        ax.set_yticks(range(len(DEFAULT_CAPACITIES)))
        ax.set_yticklabels([f"inst {i} ({c} MB)" for i, c in enumerate(DEFAULT_CAPACITIES)])
        ax.invert_yaxis()
        ax.set_title(f"{r.method}: makespan {r.metrics.makespan} min (seed {seed}; colour = job)")
    axes[-1].set_xlabel("time [min]")
    fig.tight_layout()
    return save(fig, out_path)


def markdown_table(df: pd.DataFrame, floatfmt: str = ".4g") -> str:
    """A GitHub Markdown table (no optional ``tabulate`` dependency)."""

    def cell(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return format(float(v), floatfmt)
        return str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body])
