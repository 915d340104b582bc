"""Figures of the experiment programme, rendered from the tidy results (PNG via core.plotting)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.core.plotting import gantt, save
from studies.cgrsp.programme.tables import LABELS, cell_means, order_policies

DPI = 100
_PALETTE = plt.get_cmap("tab20").colors
POLICY_COLORS = {
    p: _PALETTE[i]
    for i, p in enumerate(
        ("rh", "cadr", "spt_rescue", "adaptive", "spt", "edf", "lcf", "balanced", "fifo", "random", "cadr_oo")
    )
} | {"edf_defer_low": (0.0, 0.0, 0.0)}
DAY_COLORS = {"quiet": "#e8f4ea", "normal": "#ffffff", "surge": "#fdebd0", "hectic": "#f5c6cb"}
MONTH_POLICIES = ("fifo", "spt", "edf", "adaptive", "cadr", "rh")


def _color(p: str) -> tuple:
    return POLICY_COLORS.get(p, (0.3, 0.3, 0.3))


def gantt_figure(res: SimResult, path: str | os.PathLike, window_h: tuple[float, float] | None = None) -> Path:
    """Gantt chart of one run: execution bars (red = missed, hatched = tight), grey provisioning.

    Top panel: the whole day; bottom panel: a zoom on ``window_h`` (hours from time 0;
    default a 1-hour window in the middle of the day).
    """
    j = res.jobs.copy()
    lanes = {int(s): f"slot {int(s)} ({t.replace('RTX ', '')})" for s, t in zip(j["slot"], j["gpu_type"]) if s >= 0}
    j["missed"] = ~j["met"]
    end_h = float(j["completion"].max()) / 3600.0
    if window_h is None:  # one hour around the longest provisioning delay
        i = int((j["start"] - j["dispatch"]).to_numpy().argmax())
        a = min(max(0.0, float(j["dispatch"].iat[i]) / 3600.0 - 0.2), max(0.0, end_h - 1.0))
        window_h = (a, a + 1.0)
    fig, axes = plt.subplots(2, 1, figsize=(11, 6.2))
    for ax, win in zip(axes, (None, window_h)):
        sub = j if win is None else j[(j["completion"] >= win[0] * 3600) & (j["dispatch"] <= win[1] * 3600)]
        y_of = {s: i for i, s in enumerate(sorted(sub["slot"].unique()))}
        ax.barh(
            [y_of[s] for s in sub["slot"]],
            (sub["start"] - sub["dispatch"]) / 3600.0,
            left=sub["dispatch"] / 3600.0,
            height=0.7,
            color="#bbbbbb",
            linewidth=0,
        )
        gantt(
            sub,
            resource="slot",
            start="start",
            end="completion",
            missed="missed",
            highlight="tight",
            resource_labels=lanes,
            time_unit=3600.0,
            time_label="hours since day start (05:00 UTC by default)",
            ax=ax,
        )
        handles = ax.get_legend().legend_handles
        ax.get_legend().remove()
        if win is not None:
            ax.set_xlim(*win)
            ax.set_title(
                f"zoom on {win[0]:.2f}–{win[1]:.2f} h (around the longest provisioning delay)", fontsize=9, loc="left"
            )
        else:
            ax.set_xlim(0, end_h * 1.01)
            ax.set_title(
                f"{res.policy}, {res.day} day, seed {res.seed}: {len(j)} jobs, {100 * j['missed'].mean():.1f} % missed",
                fontsize=10,
                loc="left",
            )
            ax.axvspan(window_h[0], window_h[1], color="#1f77b4", alpha=0.12, lw=0)
            ax.legend(
                handles=[*handles, Patch(color="#bbbbbb", label="provisioning delay")],
                loc="lower right",
                bbox_to_anchor=(1.0, 1.0),
                fontsize=7,
                ncol=4,
                frameon=False,
            )
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


def policy_bars(
    df: pd.DataFrame,
    path: str | os.PathLike,
    published: pd.DataFrame | None = None,
    metrics: Sequence[str] = ("mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd"),
    title: str = "",
) -> Path:
    """One panel per metric: per-policy mean with 95 % CI (black diamonds: published values)."""
    s = cell_means(df, ("policy",), metrics)
    pols = order_policies(list(s.index))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.0 * len(metrics), 3.6))
    x = np.arange(len(pols))
    for ax, m in zip(np.atleast_1d(axes), metrics):
        err = s.loc[pols, f"{m}_ci"].to_numpy()
        ax.bar(
            x,
            s.loc[pols, m],
            yerr=err if np.isfinite(err).any() else None,
            capsize=2,
            color=[_color(p) for p in pols],
            edgecolor="black",
            linewidth=0.4,
            label="measured (95 % CI)",
        )
        if published is not None and m in published.columns:
            pv = [published.loc[p, m] if p in published.index else np.nan for p in pols]
            ax.plot(x, pv, "D", color="black", ms=4, label="published (spec §4)")
        ax.set_xticks(x)
        ax.set_xticklabels(pols, rotation=60, ha="right", fontsize=8)
        ax.set_title(LABELS.get(m, m), fontsize=10)
        if m == "cost_usd":
            lo, hi = float(s[m].min()), float(s[m].max())
            ax.set_ylim(lo - 0.1 * max(hi - lo, 0.05) - 0.05, hi + 0.1 * max(hi - lo, 0.05) + 0.05)
    if published is not None:
        h, lab = np.atleast_1d(axes)[0].get_legend_handles_labels()
        keep = [i for i, t in enumerate(lab) if t.startswith("published")]
        fig.legend([h[i] for i in keep], [lab[i] for i in keep], loc="upper right", fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95) if published is not None or title else None)
    return save(fig, path, dpi=DPI)


def miss_tardiness_scatter(df: pd.DataFrame, path: str | os.PathLike, published: pd.DataFrame | None = None) -> Path:
    """Per-policy mean miss rate vs mean tardiness with 95 % CIs (hollow: published)."""
    s = cell_means(df, ("policy",), ("miss_pct", "mean_tardiness_min"))
    fig, ax = plt.subplots(figsize=(7.4, 4.6))
    for p in order_policies(list(s.index)):
        r = s.loc[p]
        ax.errorbar(
            r["miss_pct"],
            r["mean_tardiness_min"],
            xerr=r["miss_pct_ci"],
            yerr=r["mean_tardiness_min_ci"],
            fmt="o",
            color=_color(p),
            capsize=2,
            ms=6,
            label=p,
        )
        if published is not None and p in published.index:
            q = published.loc[p]
            ax.plot(q["miss_pct"], q["mean_tardiness_min"], "o", mfc="none", color=_color(p), ms=7)
            ax.plot(
                [r["miss_pct"], q["miss_pct"]],
                [r["mean_tardiness_min"], q["mean_tardiness_min"]],
                ":",
                color=_color(p),
                lw=0.8,
            )
    ax.set_xlabel("miss rate (%)")
    ax.set_ylabel("mean tardiness over all jobs (min)")
    ax.set_title(
        "miss vs tardiness (filled: measured, hollow: published)" if published is not None else "miss vs tardiness",
        fontsize=10,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


def sweep_lines(
    df: pd.DataFrame,
    col: str,
    path: str | os.PathLike,
    metrics: Sequence[str],
    title: str = "",
    xlabel: str | None = None,
    logx: bool = False,
    colors: dict[str, str] | None = None,
) -> Path:
    """Metric vs swept value, one line per policy with 95 % CI error bars (``colors``: per line, else the policy's)."""
    s = cell_means(df, ("policy", col), metrics).reset_index()
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.0 * len(metrics), 3.6), squeeze=False)
    pols = order_policies(list(s["policy"].unique()))
    vals = list(dict.fromkeys(s[col]))
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) for v in vals)
    vals = sorted(vals) if numeric else vals
    pos = {v: (float(v) if numeric else i) for i, v in enumerate(vals)}
    for ax, m in zip(axes[0], metrics):
        for p in pols:
            g = s[s["policy"] == p].sort_values(col, key=lambda c: c.map(pos))
            ax.errorbar(
                g[col].map(pos),
                g[m],
                yerr=g[f"{m}_ci"].fillna(0),
                color=(colors or {}).get(p, _color(p)),
                marker="o",
                ms=3,
                capsize=2,
                lw=1.2,
                label=p,
            )
        ax.set_xlabel(xlabel or col)
        ax.set_title(LABELS.get(m, m), fontsize=10)
        ax.grid(alpha=0.3)
        if logx:
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
        if m != "cost_usd":  # non-negative metrics: keep zero in view
            ax.set_ylim(0, max(ax.get_ylim()[1] * 1.08, 1e-6))
        ax.set_xticks([pos[v] for v in vals])
        ax.set_xticklabels([f"{v:g}" if numeric else str(v) for v in vals])
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


def stock_lines(
    df: pd.DataFrame,
    path: str | os.PathLike,
    col: str = "stock",
    metrics: Sequence[str] = ("miss_pct", "mean_wait_min"),
) -> Path:
    """One row per day, one panel per metric: metric vs stock setting, one line per policy (95 % CIs).

    The extension ``edf_defer_low`` is drawn dashed black, RH thick: the two re-rolling
    candidates stand out from the published pack.
    """
    s = cell_means(df, ("day", "policy", col), metrics).reset_index()
    days = list(dict.fromkeys(df["day"]))
    vals = list(dict.fromkeys(df[col]))
    fig, axes = plt.subplots(len(days), len(metrics), figsize=(5.2 * len(metrics), 3.4 * len(days)), squeeze=False)
    for r, day in enumerate(days):
        for ax, m in zip(axes[r], metrics):
            for p in order_policies(list(s["policy"].unique())):
                g = s[(s["day"] == day) & (s["policy"] == p)].set_index(col).loc[vals]
                style = {"ls": "--", "lw": 2.0} if p == "edf_defer_low" else {"lw": 2.6 if p == "rh" else 1.2}
                ax.errorbar(
                    range(len(vals)),
                    g[m],
                    yerr=g[f"{m}_ci"].fillna(0),
                    color=_color(p),
                    marker="o",
                    ms=3,
                    capsize=2,
                    label=p,
                    **style,
                )
            ax.set_xticks(range(len(vals)))
            ax.set_xticklabels(vals)
            ax.set_xlabel("stock: fresh, or markov with mean dwell D (s)")
            ax.set_title(f"{day} day: {LABELS.get(m, m)}", fontsize=10)
            ax.set_ylim(0, max(ax.get_ylim()[1], 1e-6))
            ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


def daytype_bars(
    df: pd.DataFrame, path: str | os.PathLike, metrics: Sequence[str] = ("mean_wait_min", "miss_pct")
) -> Path:
    """Grouped bars: per day type, one bar per policy (mean with 95 % CI)."""
    s = cell_means(df, ("day", "policy"), metrics)
    days = [d for d in ("quiet", "normal", "surge", "hectic") if d in s.index.get_level_values(0)]
    pols = order_policies(list(s.index.get_level_values(1).unique()))
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.0 * len(metrics), 3.8), squeeze=False)
    w = 0.8 / len(pols)
    for ax, m in zip(axes[0], metrics):
        for k, p in enumerate(pols):
            v = [s.loc[(d, p), m] if (d, p) in s.index else np.nan for d in days]
            e = [s.loc[(d, p), f"{m}_ci"] if (d, p) in s.index else 0 for d in days]
            ax.bar(
                np.arange(len(days)) + (k - len(pols) / 2 + 0.5) * w,
                v,
                w,
                yerr=np.nan_to_num(e),
                capsize=1,
                color=_color(p),
                label=p,
                error_kw={"lw": 0.6},
            )
        ax.set_xticks(np.arange(len(days)))
        ax.set_xticklabels(days)
        ax.set_title(LABELS.get(m, m), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][-1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


def month_daily(
    df: pd.DataFrame, path: str | os.PathLike, rep: int | None = None, policies: Sequence[str] = MONTH_POLICIES
) -> Path:
    """Daily miss rate over one replicated month, background shaded by day type."""
    rep = int(df["rep"].min()) if rep is None else rep
    d = df[df["rep"] == rep]
    pols = [p for p in order_policies(list(d["policy"].unique())) if p in policies] or order_policies(
        list(d["policy"].unique())
    )
    plan = d.groupby("day_index")["day"].first().sort_index()
    fig, ax = plt.subplots(figsize=(11, 3.8))
    for i, day in plan.items():
        ax.axvspan(i - 0.5, i + 0.5, color=DAY_COLORS.get(day, "#ffffff"), lw=0)
    for p in pols:
        g = d[d["policy"] == p].sort_values("day_index")
        ax.plot(g["day_index"], g["miss_pct"], marker="o", ms=3, lw=1.2, color=_color(p), label=p)
    ax.set_xlim(-0.5, len(plan) - 0.5)
    ax.set_xlabel("day of month")
    ax.set_ylabel("miss rate (%)")
    ax.set_title(f"daily miss rate, month replication {rep} (shading: day type)", fontsize=10)
    day_handles = [Patch(facecolor=DAY_COLORS[k], edgecolor="#999999", label=k) for k in DAY_COLORS if k in set(plan)]
    leg1 = ax.legend(loc="upper left", fontsize=7, ncol=len(pols), bbox_to_anchor=(0.0, 1.0))
    ax.add_artist(leg1)
    ax.legend(handles=day_handles, loc="upper right", fontsize=7, ncol=len(day_handles))
    ax.grid(axis="y", alpha=0.3)
    ax.set_ylim(bottom=0, top=max(1.0, float(d[d["policy"].isin(pols)]["miss_pct"].max())) * 1.4)
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


def objective_heatmap(best: pd.DataFrame, scores: pd.DataFrame, path: str | os.PathLike, title: str) -> Path:
    """w_cost × α2/α1 grid coloured by the winning policy, labelled with its name."""
    pols = sorted(set("/".join(best.to_numpy().ravel()).split("/")))
    idx = {p: i for i, p in enumerate(pols)}
    grid = np.array([[idx[v.split("/")[0]] for v in row] for row in best.to_numpy()])
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    from matplotlib.colors import ListedColormap

    ax.imshow(grid, cmap=ListedColormap([_color(p) for p in pols]), vmin=-0.5, vmax=len(pols) - 0.5, aspect="auto")
    for (i, k), _ in np.ndenumerate(grid):
        ax.text(k, i, best.iat[i, k], ha="center", va="center", fontsize=7)
    ax.set_xticks(range(best.shape[1]))
    ax.set_xticklabels([c.split("=")[1] for c in best.columns])
    ax.set_yticks(range(best.shape[0]))
    ax.set_yticklabels(best.index)
    ax.set_xlabel("α2/α1")
    ax.set_ylabel("w_cost")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path, dpi=DPI)


__all__ = [
    "DPI",
    "POLICY_COLORS",
    "daytype_bars",
    "gantt_figure",
    "miss_tardiness_scatter",
    "month_daily",
    "objective_heatmap",
    "policy_bars",
    "stock_lines",
    "sweep_lines",
]
