"""FIFO / Greedy / SAGreedy side by side per preset and cluster, with CIs over seeds.

The study published orderings, not tables of numbers; :data:`PUBLISHED` states them per
(task set, cluster) and :func:`ordering_checks` says whether the measured means honour them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from gpu_sched_env.core.stats import mean_ci
from gpu_sched_env.hgsp.api import run
from gpu_sched_env.hgsp.workload import PRESETS, generate_tasks

# policy label -> (policy name, extra parameters); "sagreedy_serial" is the spec's literal decoder
VARIANTS: dict[str, tuple[str, dict]] = {
    "fifo": ("fifo", {}),
    "greedy": ("greedy", {}),
    "sagreedy": ("sagreedy", {}),
    "sagreedy_serial": ("sagreedy", {"serial": True}),
}
PUBLISHED: dict[tuple[str, str], str] = {
    ("tasks1", "small"): "SAGreedy < Greedy < FIFO in WT and DMR; SAGreedy about -25 % WT vs FIFO",
    ("tasks2", "medium"): "Greedy = SAGreedy << FIFO; FIFO DMR ~2 %, Greedy almost none",
    ("tasks3", "small"): "FIFO DMR ~99 %; SAGreedy clearly fewer misses",
    ("tasks4", "large"): "FIFO DMR ~99 %",
}
METRICS = ("wt", "dmr_pct", "act", "makespan", "gpu_util_pct")


def run_seeds(task_sets: Sequence[str], clusters: Sequence[str] | None, seeds: Sequence[int],
              sa_iters: int = 100, variants: Sequence[str] = tuple(VARIANTS)) -> pd.DataFrame:
    """One row per (tasks, cluster, seed, policy) with :data:`METRICS`.

    ``clusters=None`` runs every task set on its preset's cluster only.
    """
    rows = []
    for ts_name in task_sets:
        for s in seeds:
            ts = generate_tasks(ts_name, s)
            for cl in clusters or [PRESETS[ts_name].cluster]:
                for label in variants:
                    pol, kw = VARIANTS[label]
                    if pol == "sagreedy":
                        kw = {**kw, "iters": sa_iters}
                    m = run(pol, ts, cl, s, **kw).summary()
                    rows.append({"tasks": ts_name, "cluster": cl, "seed": s, "policy": label,
                                 **{k: m[k] for k in METRICS}})
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Mean and ``level`` t-interval of each metric per (tasks, cluster, policy)."""
    rows = []
    for (ts, cl, pol), g in df.groupby(["tasks", "cluster", "policy"], sort=False):
        row = {"tasks": ts, "cluster": cl, "policy": pol, "n_seeds": len(g)}
        for k in METRICS:
            ci = mean_ci(g[k].to_numpy(), level)
            row.update({k: ci.mean, f"{k}_lo": ci.lo, f"{k}_hi": ci.hi})
        rows.append(row)
    return pd.DataFrame(rows)


def wins(df: pd.DataFrame, a: str, b: str, metric: str = "wt") -> pd.Series:
    """Per (tasks, cluster): number of seeds on which policy ``a`` has a lower ``metric`` than ``b``."""
    w = df.pivot_table(index=["tasks", "cluster", "seed"], columns="policy", values=metric)
    return (w[a] < w[b]).groupby(level=["tasks", "cluster"]).sum()


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def _fmt(v: float, lo: float, hi: float) -> str:
    if np.isnan(lo):
        return _num(v)
    return f"{_num(v)} [{_num(lo)}, {_num(hi)}]"


def side_by_side(df: pd.DataFrame, metric: str = "wt", level: float = 0.95) -> pd.DataFrame:
    """Wide table: one row per (tasks, cluster), one ``mean [CI]`` column per policy, plus wins."""
    sm = summary(df, level)
    out = []
    greedy_wins = wins(df, "greedy", "fifo", metric)
    sa_wins = wins(df, "sagreedy", "greedy", metric) if "sagreedy" in set(df.policy) else None
    for (ts, cl), g in sm.groupby(["tasks", "cluster"], sort=False):
        row = {"tasks": ts, "cluster": cl + (" (published)" if (ts, cl) in PUBLISHED else "")}
        for _, r in g.iterrows():
            row[r.policy] = _fmt(r[metric], r[f"{metric}_lo"], r[f"{metric}_hi"])
        row["Greedy < FIFO"] = f"{int(greedy_wins[ts, cl])}/{int(g.n_seeds.iloc[0])}"
        if sa_wins is not None:
            row["SAGreedy < Greedy"] = f"{int(sa_wins[ts, cl])}/{int(g.n_seeds.iloc[0])}"
        out.append(row)
    return pd.DataFrame(out)


def ordering_checks(df: pd.DataFrame) -> pd.DataFrame:
    """Whether the measured means honour each :data:`PUBLISHED` ordering (one row per claim)."""
    m = df.groupby(["tasks", "cluster", "policy"])[["wt", "dmr_pct"]].mean()
    rows = []

    def add(ts: str, cl: str, claim: str, ok: bool, measured: str) -> None:
        rows.append({"tasks": ts, "cluster": cl, "claim": claim, "measured": measured, "holds": bool(ok)})

    def get(ts: str, cl: str, pol: str, k: str) -> float:
        return float(m.loc[(ts, cl, pol), k])

    for (ts, cl) in PUBLISHED:
        if (ts, cl, "fifo") not in m.index:
            continue
        f, g, s = (get(ts, cl, p, "wt") for p in ("fifo", "greedy", "sagreedy"))
        fd, gd, sd = (get(ts, cl, p, "dmr_pct") for p in ("fifo", "greedy", "sagreedy"))
        if ts == "tasks1":
            add(ts, cl, "WT: SAGreedy < Greedy < FIFO", s < g < f, f"{s:.1f} < {g:.1f} < {f:.1f}")
            add(ts, cl, "DMR: Greedy < FIFO", gd < fd, f"{gd:.2f} % < {fd:.2f} %")
        elif ts == "tasks2":
            add(ts, cl, "WT: Greedy and SAGreedy < FIFO / 2", max(g, s) < f / 2, f"{g:.1f}, {s:.1f} vs {f:.1f}")
            add(ts, cl, "WT: SAGreedy <= Greedy", s <= g, f"{s:.1f} <= {g:.1f}")
            add(ts, cl, "WT: SAGreedy = Greedy (study: equal; here within 25 %)", abs(s - g) <= 0.25 * max(g, 1e-9),
                f"{s:.1f} vs {g:.1f}")
            add(ts, cl, "DMR: FIFO 1-4 %, Greedy < FIFO / 2", 1 <= fd <= 4 and gd < fd / 2, f"{fd:.2f} %, {gd:.2f} %")
        else:
            add(ts, cl, "DMR: FIFO > 95 %", fd > 95, f"{fd:.1f} %")
            if ts == "tasks3":
                add(ts, cl, "DMR: SAGreedy < FIFO - 10 points", sd < fd - 10, f"{sd:.1f} % vs {fd:.1f} %")
    return pd.DataFrame(rows)
