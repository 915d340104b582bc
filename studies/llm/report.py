"""LLM-serving results tables and figures."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from gpu_sched_env.core import plotting
from gpu_sched_env.core.io import atomic_write_table
from gpu_sched_env.llm.api import LLMResult, simulate

POLICY_ORDER = ("fifo", "wsrpt")
POLICY_COLORS = {"fifo": "#7f7f7f", "wsrpt": "#1f77b4"}


def run_grid(
    workloads: Sequence[str], engines: Sequence[str] = ("discrete", "event"), seed: int = 0, dt: float = 0.01
) -> tuple[pd.DataFrame, dict[tuple[str, str, str], LLMResult]]:
    """Every policy x workload x engine; the tidy table and the results by key."""
    rows, res = [], {}
    for wl in workloads:
        for eng in engines:
            for pol in POLICY_ORDER:
                r = simulate(pol, wl, dt=dt, engine=eng, seed=seed)
                res[wl, eng, pol] = r
                rows.append(
                    {"workload": wl, "engine": eng, "policy": pol, "seed": seed, **r.summary(), "wall_s": r.wall_s}
                )
    df = pd.DataFrame(rows)
    base = df[df.policy == "fifo"].set_index(["workload", "engine"])
    for col in ("weighted_wait", "avg_wait"):
        ref = np.array([base.loc[(w, e), col] for w, e in zip(df.workload, df.engine)])
        df[f"{col}_vs_fifo_pct"] = 100.0 * (df[col] - ref) / ref
    return df, res


def gantt_figure(r: LLMResult, path: str | os.PathLike) -> Path:
    """One lane per GPU; a request with tau GPUs appears on each (red = weight > 1)."""
    df = r.to_frame()
    df = df[~df.skipped]
    rows = []
    for _, q in df.iterrows():
        for g in q.gpus.split(","):
            rows.append({"gpu": f"GPU{int(g):02d}", "start": q.start, "end": q.end, "weight > 1": q.weight > 1})
    lanes = pd.DataFrame(rows)
    fig = plotting.gantt(
        lanes,
        resource="gpu",
        start="start",
        end="end",
        highlight="weight > 1",
        title=f"{r.policy} on {r.workload} ({r.engine}); hatched = weight > 1",
        time_label="time [s]",
    )
    return plotting.save(fig, path)


def comparison_figure(df: pd.DataFrame, path: str | os.PathLike, title: str) -> Path:
    """Bars per policy: weighted waiting, average waiting, makespan."""
    panels = [
        ("weighted_wait", "weighted waiting sum w(c-a) [s]"),
        ("avg_wait", "average waiting (c-a) [s]"),
        ("makespan", "makespan [s]"),
    ]
    return plotting.save(
        plotting.metric_bars(df, panels, title, colors=POLICY_COLORS, fmt=".4g", panel_width=3.67), path
    )


def utilisation_figure(results: dict[str, LLMResult], path: str | os.PathLike, title: str) -> Path:
    """Busy GPUs over time per policy (step plot)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 3.4))
    for pol, r in results.items():
        df = r.to_frame()
        df = df[~df.skipped]
        ev = (
            pd.concat(
                [
                    pd.Series(df.tp.to_numpy(), index=df.start.round(9)),
                    pd.Series(-df.tp.to_numpy(), index=df.end.round(9)),
                ]
            )
            .groupby(level=0)
            .sum()
        )
        t = np.concatenate([[0.0], ev.index.to_numpy(float)])
        busy = np.concatenate([[0], np.cumsum(ev.to_numpy())])
        ax.step(
            t,
            busy,
            where="post",
            label=f"{pol} ({r.summary()['gpu_util_pct']:.0f} % busy)",
            color=POLICY_COLORS.get(pol),
        )
    ax.set_xlabel("time [s]")
    ax.set_ylabel("busy GPUs")
    ax.set_ylim(0, r.sim.m * 1.1)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return plotting.save(fig, path)


def write_folder(results: dict[str, LLMResult], table: pd.DataFrame, folder: str | os.PathLike) -> list[Path]:
    """Table, schedules, Gantt charts, comparison and utilisation plots for one workload."""
    folder = Path(folder)
    out = [atomic_write_table(folder / "results.csv", table)]
    for pol, r in results.items():
        out.append(atomic_write_table(folder / f"schedule_{pol}.csv", r.to_frame()))
        out.append(gantt_figure(r, folder / f"gantt_{pol}.png"))
    name = next(iter(results.values())).workload
    out.append(comparison_figure(table, folder / "comparison.png", name))
    out.append(utilisation_figure(results, folder / "utilisation.png", name))
    return out
