"""FIFO / Greedy / SAGreedy side by side per preset and cluster, with CIs over seeds.

The study published a few figures and orderings, not tables; :data:`PUBLISHED` lists them per
(task set, cluster) and :func:`published_vs_ours` marks each faithful / deviates / missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpu_sched_env.core.stats import mean_ci
from gpu_sched_env.hgsp.api import run
from gpu_sched_env.hgsp.workload import PRESETS, generate_tasks

# policy label -> (policy name, extra parameters); "sagreedy" decodes in list order (the
# study's decoder, the default), "sagreedy_release" with our release-aware decoder
VARIANTS: dict[str, tuple[str, dict]] = {
    "fifo": ("fifo", {}),
    "greedy": ("greedy", {}),
    "sagreedy": ("sagreedy", {"decoder": "list"}),
    "sagreedy_release": ("sagreedy", {"decoder": "release"}),
}
PUBLISHED: dict[tuple[str, str], str] = {
    (
        "tasks1",
        "small",
    ): "FIFO 86 % busy, ACT 9.2, DMR 5.7 %, makespan 2500; SAGreedy < Greedy < FIFO; SAGreedy -25 % WT",
    ("tasks2", "medium"): "FIFO 43 % busy, DMR ~2 %; Greedy = SAGreedy, almost no misses",
    ("tasks3", "small"): "FIFO DMR ~99 %; SAGreedy clearly fewer misses, -10 % WT",
    ("tasks4", "large"): "FIFO DMR ~99 %; SAGreedy -1.3 % WT",
}
METRICS = ("wt", "dmr_pct", "act", "makespan", "gpu_util_pct")


def run_seeds(
    task_sets: Sequence[str],
    clusters: Sequence[str] | None,
    seeds: Sequence[int],
    sa_iters: int = 100,
    variants: Sequence[str] = tuple(VARIANTS),
) -> pd.DataFrame:
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
                    rows.append(
                        {"tasks": ts_name, "cluster": cl, "seed": s, "policy": label, **{k: m[k] for k in METRICS}}
                    )
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
    sa_wins = {p: wins(df, p, "greedy", metric) for p in ("sagreedy", "sagreedy_release") if p in set(df.policy)}
    for (ts, cl), g in sm.groupby(["tasks", "cluster"], sort=False):
        row = {"tasks": ts, "cluster": cl + (" (published)" if (ts, cl) in PUBLISHED else "")}
        for _, r in g.iterrows():
            row[r.policy] = _fmt(r[metric], r[f"{metric}_lo"], r[f"{metric}_hi"])
        row["Greedy < FIFO"] = f"{int(greedy_wins[ts, cl])}/{int(g.n_seeds.iloc[0])}"
        for p, w in sa_wins.items():
            label = "SAGreedy < Greedy" if p == "sagreedy" else "SAGreedy [release] < Greedy"
            row[label] = f"{int(w[ts, cl])}/{int(g.n_seeds.iloc[0])}"
        out.append(row)
    return pd.DataFrame(out)


# Causes of the deviations, as measured by python -m studies hgsp-report --part tasks1 (tasks1) and the
# decoder comparison of the orderings table (docs/hgsp.md, "Published vs ours").
CAUSES = {
    "greedy_vs_fifo": "load, not deadlines: at 86 % busy EFT leaves the A30 idle while tasks queue "
    "for the A100/L40, so Greedy's mean flow time exceeds FIFO's; 9 of 10 deadline x "
    "memory models re-fitted to DMR 5.7 % keep Greedy worse (diagnosis, tables 2-4)",
    "sa_list": "list-order decoder: a tardy task moved to the front reserves its GPU from its "
    "arrival on, so SAGreedy's neighbours are worse and it returns (nearly) Greedy's "
    "ordering",
    "sa_list_equal": "list-order decoder: with a handful of tardy tasks, placing a moved task first "
    "(its GPU idles until it arrives) sometimes pays, as in the hand-computed example "
    "(tests/hgsp/test_hgsp_decoders.py)",
    "sa_release": "release-aware decoder (ours): moved tasks cannot block waiting ones, so the "
    "annealing reaches far better orderings than the study's",
}


def _rel(a: float, b: float) -> float:
    """100 (a - b) / b (nan if b == 0)."""
    return 100.0 * (a - b) / b if b else float("nan")


@dataclass
class _Published:
    """The published-vs-ours table under construction: ``df`` is :func:`run_seeds`'s frame."""

    df: pd.DataFrame
    rows: list[dict[str, str]] = field(default_factory=list)

    def add(
        self,
        ts: str,
        figure: str,
        published: str,
        ours: str,
        ok: bool | None,
        size: str = "",
        cause: str = "",
        fitted: bool = False,
    ) -> None:
        """One row; ``ok`` None: missing, True: faithful, False: deviates by ``size`` for ``cause``."""
        if ok is None:
            status, why = "missing", cause
        elif ok:
            status, why = ("faithful (fitted)" if fitted else "faithful"), ""
        else:
            status, why = f"deviates ({size})", cause
        self.rows.append(
            {"tasks": ts, "figure": figure, "published": published, "ours": ours, "status": status, "cause": why}
        )

    def per_seed(self, ts: str, cl: str, pol: str, k: str) -> np.ndarray:
        df = self.df
        g = df[(df.tasks == ts) & (df.cluster == cl) & (df.policy == pol)].sort_values("seed")
        return g[k].to_numpy(float)

    def stat(self, ts: str, cl: str, pol: str, k: str) -> tuple[float, str]:
        ci = mean_ci(self.per_seed(ts, cl, pol, k))
        return ci.mean, _fmt(ci.mean, ci.lo, ci.hi)

    def close(
        self, ts: str, figure: str, published: float, v: tuple[float, str], tol: float, unit: str, fitted: bool = False
    ) -> None:
        """A published number against ours (mean, formatted), faithful within ``tol``."""
        d = v[0] - published
        self.add(
            ts,
            figure,
            f"{published:g}{unit}",
            v[1] + unit,
            abs(d) <= tol,
            f"{d:+.3g}{unit.strip() or ''} vs tolerance ±{tol:g}",
            fitted=fitted,
        )

    def sa_rows(self, ts: str, cl: str, published_pct: float | None, claim: str) -> None:
        """SAGreedy's WT (both decoders) against FIFO's published gain, or ``claim`` (= Greedy) when None."""
        f = self.per_seed(ts, cl, "fifo", "wt").sum()
        g = self.per_seed(ts, cl, "greedy", "wt")
        for pol, dec in (("sagreedy", "list"), ("sagreedy_release", "release")):
            s = self.per_seed(ts, cl, pol, "wt")
            ch = _rel(s.sum(), f)
            same = int(np.sum(np.isclose(s, g, rtol=1e-9, atol=1e-9)))
            ours = f"{ch:+.1f} % (SAGreedy = Greedy on {same}/{len(s)} seeds)"
            if published_pct is None:  # "SAGreedy = Greedy"
                vs_g = _rel(s.sum(), g.sum())
                self.add(
                    ts,
                    f"SAGreedy [{dec}] WT vs Greedy",
                    claim,
                    f"{vs_g:+.1f} % (equal on {same}/{len(s)} seeds)",
                    same == len(s),
                    f"{vs_g:+.1f} %, equal on {same}/{len(s)} seeds",
                    CAUSES["sa_list_equal" if dec == "list" else "sa_release"],
                )
            else:
                ok = abs(ch - published_pct) <= max(5.0, 0.25 * abs(published_pct))
                ratio = f"{ch / published_pct:.1f}x the published gain" if ch * published_pct > 0 else "no gain"
                self.add(
                    ts,
                    f"SAGreedy [{dec}] WT vs FIFO",
                    f"{published_pct:+g} %",
                    ours,
                    ok,
                    f"{ch - published_pct:+.1f} points, {ratio}",
                    CAUSES[f"sa_{dec}"],
                )


def _tasks1_small(t: _Published) -> None:
    """tasks1 on the small cluster: FIFO's figures, Greedy against FIFO, SAGreedy's gain."""
    ts, cl = "tasks1", "small"
    t.close(ts, "FIFO GPU utilisation", 86.0, t.stat(ts, cl, "fifo", "gpu_util_pct"), 3.0, " %", fitted=True)
    t.close(ts, "FIFO ACT", 9.2, t.stat(ts, cl, "fifo", "act"), 0.1 * 9.2, "")
    t.close(ts, "FIFO makespan", 2500.0, t.stat(ts, cl, "fifo", "makespan"), 0.05 * 2500, "")
    t.close(ts, "FIFO DMR", 5.7, t.stat(ts, cl, "fifo", "dmr_pct"), 1.0, " %", fitted=True)
    f, g = t.per_seed(ts, cl, "fifo", "wt"), t.per_seed(ts, cl, "greedy", "wt")
    ga, fa = t.per_seed(ts, cl, "greedy", "act").mean(), t.per_seed(ts, cl, "fifo", "act").mean()
    t.add(
        ts,
        "Greedy WT vs FIFO",
        "slightly better (< 0)",
        f"{_rel(g.sum(), f.sum()):+.1f} % (better on {int((g < f).sum())}/{len(f)} seeds)",
        g.sum() < f.sum(),
        f"{_rel(g.sum(), f.sum()):+.1f} % instead of < 0; ACT {ga:.2f} vs {fa:.2f}",
        CAUSES["greedy_vs_fifo"],
    )
    fd, gd = t.stat(ts, cl, "fifo", "dmr_pct")[0], t.stat(ts, cl, "greedy", "dmr_pct")[0]
    t.add(
        ts,
        "Greedy DMR vs FIFO",
        "lower",
        f"{gd:.2f} % vs {fd:.2f} %",
        gd < fd,
        f"{gd - fd:+.2f} points",
        CAUSES["greedy_vs_fifo"],
    )
    t.sa_rows(ts, cl, -25.0, "")


def _tasks2_medium(t: _Published) -> None:
    """tasks2 on the medium cluster: FIFO's and Greedy's misses, SAGreedy = Greedy."""
    ts, cl = "tasks2", "medium"
    t.close(ts, "FIFO GPU utilisation", 43.0, t.stat(ts, cl, "fifo", "gpu_util_pct"), 3.0, " %", fitted=True)
    v = t.stat(ts, cl, "fifo", "dmr_pct")
    t.add(ts, "FIFO DMR", "~2 %", v[1] + " %", 1.0 <= v[0] <= 3.0, f"{v[0] - 2:+.2f} points")
    v = t.stat(ts, cl, "greedy", "dmr_pct")
    t.add(ts, "Greedy DMR", "almost none", v[1] + " %", v[0] < 0.5, f"{v[0]:.2f} % (> 0.5 %)")
    t.sa_rows(ts, cl, None, "equal")


def _overloaded(t: _Published, ts: str, cl: str, gain: float) -> None:
    """tasks3/tasks4 (FIFO misses nearly all): FIFO's misses, SAGreedy's (tasks3), SAGreedy's ``gain`` [%]."""
    v = t.stat(ts, cl, "fifo", "dmr_pct")
    t.add(ts, "FIFO DMR", "~99 %", v[1] + " %", v[0] >= 95.0, f"{v[0] - 99:+.1f} points", fitted=True)
    if ts == "tasks3":
        for pol, dec in (("sagreedy", "list"), ("sagreedy_release", "release")):
            sd = t.stat(ts, cl, pol, "dmr_pct")[0]
            t.add(
                ts,
                f"SAGreedy [{dec}] DMR vs FIFO",
                "clearly fewer misses",
                f"{sd:.1f} % vs {v[0]:.1f} %",
                sd < v[0] - 5,
                f"{sd - v[0]:+.1f} points",
                CAUSES[f"sa_{dec}"],
            )
    t.sa_rows(ts, cl, gain, "")


def published_vs_ours(df: pd.DataFrame) -> pd.DataFrame:
    """One row per published figure or claim (task set on its published cluster) with status.

    ``df`` is :func:`run_seeds`'s frame (all four :data:`VARIANTS`). Status: ``faithful``
    (inside the stated tolerance or the claim holds; ``(fitted)`` marks a figure a preset was
    fitted to, so it is an input, not a prediction), ``deviates (size; cause)`` or ``missing``.
    Rows come in the order of the study's page: one function per task set.
    """
    t = _Published(df)
    have = set(zip(df.tasks, df.cluster))
    t.add(
        "all",
        "task sets tasks1-tasks4",
        "used, not public",
        "seeded generator at the published loads",
        None,
        cause="the study's sets and deadline model are not public (spec)",
    )
    if ("tasks1", "small") in have:
        _tasks1_small(t)
    if ("tasks2", "medium") in have:
        _tasks2_medium(t)
    for ts, cl, gain in (("tasks3", "small", -10.0), ("tasks4", "large", -1.3)):
        if (ts, cl) in have:
            _overloaded(t, ts, cl, gain)
    return pd.DataFrame(t.rows)
