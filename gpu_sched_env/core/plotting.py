"""Figure helpers shared by the scenarios (matplotlib, headless)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

ON_TIME = "#2ca02c"
MISSED = "#d62728"


def gantt(
    df: pd.DataFrame,
    *,
    resource: str,
    start: str,
    end: str,
    missed: str | None = None,
    highlight: str | None = None,
    resource_labels: dict | None = None,
    title: str = "",
    time_unit: float = 1.0,
    time_label: str = "time",
    ax: plt.Axes | None = None,
) -> plt.Figure:
    """Draw one bar per row on its resource's lane.

    Args:
        df: one row per task/job.
        resource: column naming the lane (slot, GPU, device).
        start: column with bar start (simulation units).
        end: column with bar end (simulation units).
        missed: optional boolean column; True bars are red, False green.
        highlight: optional boolean column; True bars get a black hatched edge (e.g. tight jobs).
        resource_labels: optional lane → label mapping for the y axis.
        title: figure title.
        time_unit: divide times by this for the x axis (e.g. 60 for minutes).
        time_label: x-axis label.
        ax: draw into this axes instead of a new figure.
    """
    if ax is None:
        n_lanes = max(1, df[resource].nunique()) if len(df) else 1
        fig, ax = plt.subplots(figsize=(12, 1.2 + 0.45 * n_lanes))
    else:
        fig = ax.figure
    lanes = sorted(df[resource].unique()) if len(df) else []
    y_of = {r: i for i, r in enumerate(lanes)}
    s = df[start].to_numpy(float) / time_unit
    e = df[end].to_numpy(float) / time_unit
    y = np.array([y_of[r] for r in df[resource]])
    colors = np.where(df[missed].to_numpy(bool), MISSED, ON_TIME) if missed else np.full(len(df), "#1f77b4")
    ax.barh(y, e - s, left=s, height=0.7, color=colors, edgecolor="white", linewidth=0.3)
    if highlight is not None and len(df):
        h = df[highlight].to_numpy(bool)
        ax.barh(y[h], (e - s)[h], left=s[h], height=0.7, fill=False, edgecolor="black", hatch="///", linewidth=0.5)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([str(resource_labels.get(r, r)) if resource_labels else str(r) for r in lanes])
    ax.invert_yaxis()
    ax.set_xlabel(time_label)
    ax.set_title(title)
    handles = []
    if missed:
        handles += [Patch(color=ON_TIME, label="on time"), Patch(color=MISSED, label="missed deadline")]
    if highlight:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///", label=highlight))
    if handles:
        ax.legend(handles=handles, loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def metric_bars(
    df: pd.DataFrame,
    panels: list[tuple[str, str]],
    title: str,
    *,
    label: str = "policy",
    colors: dict | None = None,
    fmt: str = ".3g",
    panel_width: float = 3.3,
) -> plt.Figure:
    """Bar panels of metrics per row (e.g. per policy), each bar annotated with its value.

    ``panels`` lists ``(column, panel title)``; bars are labelled by column ``label`` and
    coloured by ``colors[label value]``.
    """
    fig, axes = plt.subplots(1, len(panels), figsize=(panel_width * len(panels), 3.4))
    axes = np.atleast_1d(axes)
    bar_colors = [(colors or {}).get(p, "#2ca02c") for p in df[label]]
    for ax, (col, lab) in zip(axes, panels):
        vals = df[col].to_numpy(float)
        ax.bar(df[label], vals, color=bar_colors)
        for x, v in enumerate(vals):
            ax.text(x, v, format(v, fmt), ha="center", va="bottom", fontsize=8)
        ax.set_title(lab, fontsize=10)
        ax.margins(y=0.15)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def save(fig: plt.Figure, path: str | os.PathLike, dpi: int = 120) -> Path:
    """Save atomically (temp file + rename) and close the figure."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    fig.savefig(tmp, dpi=dpi)
    plt.close(fig)
    os.replace(tmp, path)
    return path
