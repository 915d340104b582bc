"""Learned policy vs the heuristics on matched seeds: table with CIs, paired tests, figure."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.batch import run_grid, summarise
from gpu_sched_env.core.stats import compare_pairs

TABLE_METRICS = ("mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd")
TEST_METRICS = ("miss_pct", "mean_wait_min")


def heuristic_runs(names: Sequence[str], seeds: Sequence[int], day: str, params: dict[str, Any], progress: bool = False) -> pd.DataFrame:
    """Per-seed summaries of the heuristics (``simulate`` = the env driven by the heuristic agents)."""
    return run_grid(list(names), list(seeds), day=day, params=params, executor="serial", progress=progress)


def comparison(learned: pd.DataFrame, heuristics: pd.DataFrame, label: str = "learned") -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, tests)``.

    ``table``: mean and 95 % CI half-width per policy (learned first). ``tests``: per
    heuristic and metric, the paired difference learned − heuristic on matched seeds, the
    paired t-test and Wilcoxon p-values, Cohen's d_z, and Holm-adjusted p-values over the
    whole family (all heuristics × metrics, t-tests and Wilcoxon separately).
    """
    learned = learned.assign(policy=label)
    both = pd.concat([learned, heuristics], ignore_index=True)
    table = summarise(both, TABLE_METRICS)
    ref = learned.set_index("seed").sort_index()
    values: dict[str, Any] = {}
    pairs: list[tuple[str, str]] = []
    keys: list[tuple[str, str]] = []
    for name, g in heuristics.groupby("policy", sort=False):
        g = g.set_index("seed").sort_index()
        common = ref.index.intersection(g.index)
        for m in TEST_METRICS:  # one family: every heuristic x metric, on its matched seeds
            a, b = f"{label}|{name}|{m}", f"{name}|{m}"
            values[a], values[b] = ref.loc[common, m].to_numpy(), g.loc[common, m].to_numpy()
            pairs.append((a, b))
            keys.append((name, m))
    if not pairs:
        return table, pd.DataFrame()
    rows = compare_pairs(values, pairs)
    tests = pd.DataFrame({
        "vs": [k[0] for k in keys], "metric": [k[1] for k in keys],
        **{out: [r[col] for r in rows] for out, col in (
            ("n", "n"), ("mean_diff", "mean_diff"), ("t_p", "t_p"), ("wilcoxon_p", "w_p"), ("cohens_d", "cohens_d"),
            ("t_p_holm", "t_p_holm"), ("wilcoxon_p_holm", "w_p_holm"))},
    })
    tests["better"] = (tests.mean_diff < 0) & (tests.t_p < 0.05)
    return table, tests


def format_table(table: pd.DataFrame) -> str:
    """Plain-text table: mean ± CI half-width."""
    out = pd.DataFrame(index=table.index)
    for m in TABLE_METRICS:
        out[m] = [f"{a:8.2f} ± {b:5.2f}" for a, b in zip(table[m], table[f"{m}_ci"])]
    return out.to_string()


def figure(table: pd.DataFrame, path: str | Path, title: str) -> Path:
    """Bars with 95 % CIs of miss % and mean wait per policy (PNG)."""
    from gpu_sched_env.core.plotting import plt, save

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    order = table.sort_values("miss_pct").index
    for ax, m, lab in zip(axes, ("miss_pct", "mean_wait_min"), ("deadline miss [%]", "mean wait [min]")):
        t = table.loc[order]
        colors = ["#1f77b4" if p in POLICY_NAMES else ("#9467bd" if p in EXTENSIONS else "#ff7f0e") for p in t.index]  # learned: orange
        ax.bar(range(len(t)), t[m], yerr=t[f"{m}_ci"], color=colors, capsize=3)
        ax.set_xticks(range(len(t)))
        ax.set_xticklabels(t.index, rotation=45, ha="right")
        ax.set_ylabel(lab)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save(fig, path)
