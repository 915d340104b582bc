"""HGSP results tables and figures (data first; figures and Markdown drawn from the tables)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from gpu_sched_env.core import plotting
from gpu_sched_env.core.io import atomic_write_table
from gpu_sched_env.core.tables import markdown_table as _markdown_table
from gpu_sched_env.hgsp.api import RunResult, run
from gpu_sched_env.hgsp.metrics import METRICS, per_gpu_utilisation
from gpu_sched_env.hgsp.model import make_cluster
from gpu_sched_env.hgsp.workload import generate_tasks

POLICY_ORDER = ("fifo", "greedy", "sagreedy")
POLICY_COLORS = {"fifo": "#7f7f7f", "greedy": "#1f77b4", "sagreedy": "#ff7f0e"}
PUBLISHED_TASKS1_SMALL_FIFO = {"act": 9.2, "dmr_pct": 5.7, "makespan": 2500.0, "gpu_util_pct": 86.0}


def run_grid(
    task_sets: Sequence[str],
    clusters: Sequence[str],
    policies: Sequence[str] = POLICY_ORDER,
    seed: int = 0,
    sa_iters: int = 100,
) -> tuple[pd.DataFrame, dict[tuple[str, str], dict[str, RunResult]]]:
    """Every policy x task set x cluster; returns the tidy table and the runs by (tasks, cluster)."""
    rows, runs = [], {}
    for ts_name in task_sets:
        ts = generate_tasks(ts_name, seed)
        for cl in clusters:
            runs[ts_name, cl] = {}
            for pol in policies:
                kw = {"iters": sa_iters} if pol == "sagreedy" else {}
                r = run(pol, ts, cl, seed, **kw)
                runs[ts_name, cl][pol] = r
                rows.append(
                    {
                        "tasks": ts_name,
                        "cluster": cl,
                        "policy": pol,
                        "seed": seed,
                        "n": ts.n,
                        **r.summary(),
                        "wall_s": r.wall_s,
                    }
                )
    df = pd.DataFrame(rows)
    fifo_wt = df[df.policy == "fifo"].set_index(["tasks", "cluster"])["wt"]
    key = list(zip(df.tasks, df.cluster))
    base = np.array([fifo_wt.get(k, np.nan) for k in key])
    with np.errstate(divide="ignore", invalid="ignore"):
        df["wt_vs_fifo_pct"] = np.where(base > 0, 100.0 * (df.wt - base) / base, np.nan)
    return df, runs


def calibration_table(seeds: Sequence[int] = range(8), sa_iters: int = 100) -> pd.DataFrame:
    """FIFO (and SAGreedy's WT change) on tasks1 / small for several generator seeds."""
    rows = []
    for s in seeds:
        ts = generate_tasks("tasks1", s)
        f = run("fifo", ts, "small", s).summary()
        sa = run("sagreedy", ts, "small", s, iters=sa_iters).summary()
        rows.append(
            {
                "seed": s,
                **{k: f[k] for k in PUBLISHED_TASKS1_SMALL_FIFO},
                "sagreedy_wt_vs_fifo_pct": 100.0 * (sa["wt"] - f["wt"]) / f["wt"] if f["wt"] > 0 else np.nan,
            }
        )
    return pd.DataFrame(rows)


def exact_table(
    seeds: Sequence[int] = range(5),
    n: int = 10,
    cluster: str = "small",
    time_limit_s: float = 10.0,
    sa_iters: int = 100,
) -> pd.DataFrame:
    """CP-SAT bounds and the heuristics' optimality gaps on small ``tiny`` instances."""
    from gpu_sched_agents.heuristics.hgsp.exact import solve_exact

    rows = []
    for s in seeds:
        ts = generate_tasks("tiny", s, n=n)
        ex = solve_exact(ts, make_cluster(cluster), time_limit_s=time_limit_s, seed=s)
        row = {
            "seed": s,
            "n": n,
            "cluster": cluster,
            "status": ex.status,
            "lower_bound": ex.lower_bound,
            "upper_bound": ex.upper_bound,
            "proven_optimal": ex.proven_optimal,
            "bound_gap_pct": ex.gap_pct,
            "solve_s": ex.wall_s,
        }
        for pol in POLICY_ORDER:
            wt = run(pol, ts, cluster, s, **({"iters": sa_iters} if pol == "sagreedy" else {})).summary()["wt"]
            row[f"{pol}_wt"] = wt
            # gap to the best schedule CP-SAT found (negative: the heuristic beat it) and an upper
            # bound on the gap to the true optimum (via CP-SAT's lower bound)
            row[f"{pol}_gap_pct_vs_ub"] = (
                100.0 * (wt - ex.upper_bound) / ex.upper_bound
                if ex.upper_bound > 0
                else (0.0 if wt <= 1e-9 else np.inf)
            )
            row[f"{pol}_gap_pct_vs_lb"] = 100.0 * (wt - ex.lower_bound) / wt if wt > 0 else 0.0
        rows.append(row)
    return pd.DataFrame(rows)


def _gantt(r: RunResult, first: int | None, path: Path) -> None:
    df = r.to_frame()
    df = df[~df.skipped]
    if first is not None:
        df = df.sort_values(["arrival", "task_id"]).head(first)
    miss = int(df.missed.sum())
    label = f"first {first} tasks" if first else f"all {len(df)} tasks"
    fig = plotting.gantt(
        df,
        resource="gpu_name",
        start="start",
        end="end",
        missed="missed",
        title=f"{r.policy}: {r.tasks_name}, {r.cluster_name} cluster, {label} ({miss} missed)",
        time_label="time",
    )
    plotting.save(fig, path)


def comparison_figure(df: pd.DataFrame, path: str | os.PathLike, title: str) -> Path:
    """Bars per policy for WT, ACT, DMR and makespan (one task set x cluster)."""
    panels = [
        ("wt", "weighted tardiness WT"),
        ("act", "ACT (mean c - a)"),
        ("dmr_pct", "deadline miss rate [%]"),
        ("makespan", "makespan"),
    ]
    return plotting.save(
        plotting.metric_bars(df, panels, title, colors=POLICY_COLORS, fmt=".3g", panel_width=3.25), path
    )


def utilisation_figure(runs: dict[str, RunResult], path: str | os.PathLike, title: str) -> Path:
    """Per-GPU busy share and memory-time share for each policy."""
    import matplotlib.pyplot as plt

    pols = list(runs)
    gpus = list(next(iter(runs.values())).schedule.problem.cluster.names)
    fig, axes = plt.subplots(1, 2, figsize=(13, 3.6), sharey=True)
    width = 0.8 / len(pols)
    x = np.arange(len(gpus))
    for k, pol in enumerate(pols):
        u = per_gpu_utilisation(runs[pol].schedule)
        for ax, idx in zip(axes, (0, 1)):
            ax.bar(
                x + (k - (len(pols) - 1) / 2) * width,
                [u[g][idx] for g in gpus],
                width,
                label=pol,
                color=POLICY_COLORS.get(pol, "#2ca02c"),
            )
    for ax, lab in zip(axes, ("GPU busy [% of span]", "memory-time used [% of GPU memory x span]")):
        ax.set_xticks(x)
        ax.set_xticklabels(gpus, rotation=45 if len(gpus) > 6 else 0)
        ax.set_title(lab, fontsize=10)
        ax.set_ylim(0, 118)
    axes[0].legend(fontsize=8, ncol=len(pols), loc="upper center")
    fig.suptitle(title)
    fig.tight_layout()
    return plotting.save(fig, path)


def write_folder(runs: dict[str, RunResult], table: pd.DataFrame, folder: str | os.PathLike) -> list[Path]:
    """Results table, schedules, Gantt charts, comparison and utilisation plots for one folder."""
    folder = Path(folder)
    out = [atomic_write_table(folder / "results.csv", table)]
    any_run = next(iter(runs.values()))
    title = f"{any_run.tasks_name}, {any_run.cluster_name} cluster"
    for pol, r in runs.items():
        out.append(atomic_write_table(folder / f"schedule_{pol}.csv", r.to_frame()))
        for first, tag in ((50, "first50"), (None, "all")):
            p = folder / f"gantt_{tag}_{pol}.png"
            _gantt(r, first, p)
            out.append(p)
    out.append(comparison_figure(table, folder / "comparison.png", title))
    out.append(utilisation_figure(runs, folder / "utilisation.png", title))
    return out


def markdown_table(df: pd.DataFrame, cols: Sequence[str] | None = None, digits: int = 2) -> str:
    """A GitHub Markdown table of ``cols`` (:func:`gpu_sched_env.core.tables.markdown_table`)."""
    return _markdown_table(df[list(cols or df.columns)], f",.{digits}f", nan="nan")


RESULT_COLUMNS = ("tasks", "cluster", "policy", *METRICS, "wt_vs_fifo_pct", "wall_s")
