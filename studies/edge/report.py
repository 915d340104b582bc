"""Tables and figures for the edge experiments, rendered from tidy tables (never from live objects)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from gpu_sched_env.core.plotting import gantt, plt, save
from gpu_sched_env.core.tables import markdown_table
from gpu_sched_env.edge.sim import step_function

COLORS = {
    "membatch": "#2ca02c",
    "baseline_ilp": "#d62728",
    "fcfs_llf": "#1f77b4",
    "baseline_ilp-nosplit": "#ff9896",
    "fcfs_llf-nosplit": "#aec7e8",
}
LABELS = {
    "membatch": "MemBatch ILP",
    "baseline_ilp": "Baseline ILP",
    "fcfs_llf": "FCFS-LLF",
    "baseline_ilp-nosplit": "Baseline ILP, no splitting",
    "fcfs_llf-nosplit": "FCFS-LLF, no splitting",
}


def md_table(df: pd.DataFrame, floatfmt: str = ".2f") -> str:
    """A DataFrame as a GitHub Markdown table (:func:`gpu_sched_env.core.tables.markdown_table`)."""
    return markdown_table(df, floatfmt, nan="")


def utilisation_steps(schedule: pd.DataFrame, device: int, gpu_cap: float = 100.0) -> tuple[np.ndarray, np.ndarray]:
    """Step function of GPU share in use on ``device`` from a schedule table: (times [s], fraction)."""
    sub = schedule[schedule.device == device]
    return step_function(sub.start_s.tolist(), sub.end_s.tolist(), sub.gpu_pct.tolist(), gpu_cap)


def plot_scaling(
    df: pd.DataFrame, y: str, ylabel: str, title: str, logy: bool = False, schedulers: Sequence[str] | None = None
):
    """Mean of ``y`` over seeds vs number of tasks, one line per scheduler, min–max band."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    names = schedulers or sorted(df.scheduler.unique())
    for name in names:
        sub = df[df.scheduler == name].groupby("n_tasks")[y]
        mean, lo, hi = sub.mean(), sub.min(), sub.max()
        c = COLORS.get(name)
        ax.plot(mean.index, mean.values, marker="o", ms=3, color=c, label=LABELS.get(name, name))
        ax.fill_between(mean.index, lo.values, hi.values, color=c, alpha=0.15, linewidth=0)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("number of tasks")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def plot_utilisation(
    schedules: Mapping[str, pd.DataFrame],
    device_labels: Mapping[int, str],
    title: str,
    time_unit: float = 3600.0,
    time_label: str = "time [h]",
):
    """GPU share in use over time, one lane per device, one panel per scheduler."""
    n = len(schedules)
    lanes = sorted(device_labels)
    fig, axes = plt.subplots(n, 1, figsize=(10, 0.45 * len(lanes) * n + 1.2), sharex=True, squeeze=False)
    for ax, (name, sch) in zip(axes[:, 0], schedules.items(), strict=True):
        for lane, j in enumerate(lanes):
            t, u = utilisation_steps(sch, j)
            base = -lane
            ax.fill_between(
                t / time_unit, base, base + 0.85 * u, step="post", color=COLORS.get(name, "#555"), alpha=0.8
            )
            ax.axhline(base, color="#999", lw=0.4)
            ax.axhline(base + 0.85, color="#ddd", lw=0.4, ls=":")
        mk = sch.end_s.max() / time_unit if len(sch) else 0.0
        ax.axvline(mk, color="black", lw=0.8, ls="--")
        ax.set_yticks([-k + 0.42 for k in range(len(lanes))])
        ax.set_yticklabels([device_labels[j] for j in lanes], fontsize=8)
        unit = time_label.split("[")[-1].rstrip("]") if "[" in time_label else ""
        ax.set_title(f"{LABELS.get(name, name)} — makespan {mk:.1f} {unit}", fontsize=9)
    axes[-1, 0].set_xlabel(time_label + "  (lane height = GPU share in use, dotted = 100 %)")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_gantt(
    schedule: pd.DataFrame,
    device_labels: Mapping[int, str],
    title: str,
    time_unit: float = 3600.0,
    time_label: str = "time [h]",
):
    """Gantt chart (core.plotting.gantt) of a schedule table; split shards hatched."""
    df = schedule.copy()
    df["split shard"] = df["task"] != df["parent"]
    return gantt(
        df,
        resource="device",
        start="start_s",
        end="end_s",
        highlight="split shard",
        resource_labels=dict(device_labels),
        title=title,
        time_unit=time_unit,
        time_label=time_label,
    )


def save_fig(fig, path: str | os.PathLike):
    """Save a figure atomically (core.plotting.save)."""
    return save(fig, path)
