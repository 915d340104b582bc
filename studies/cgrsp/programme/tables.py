"""Statistics tables from an experiment's tidy results (means with CIs, paired tests, re-scoring).

Every function takes the tidy frame of :func:`~.runner.run_experiment` (one row per
policy × seed × cell) and returns a DataFrame; :func:`md_table` renders any of them as a
Markdown pipe table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.batch import summarise
from gpu_sched_env.core.stats import compare_pairs, mean_ci
from gpu_sched_env.core.tables import markdown_table

MAIN_METRICS = ("mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd")
ALL_METRICS = MAIN_METRICS + (
    "tight_miss_pct",
    "loose_miss_pct",
    "mean_tardiness_missed_min",
    "p95_tardiness_min",
    "slot_util_pct",
)
LABELS = {
    "mean_wait_min": "wait (min)",
    "miss_pct": "miss %",
    "mean_tardiness_min": "tardiness (min)",
    "mean_tardiness_missed_min": "tardiness of missed (min)",
    "p95_tardiness_min": "p95 tardiness (min)",
    "cost_usd": "cost $",
    "tight_miss_pct": "tight miss %",
    "loose_miss_pct": "loose miss %",
    "slot_util_pct": "slot util %",
}


# ---------------------------------------------------------------------------- formatting
def fmt_ci(mean: float, half: float, digits: int = 2) -> str:
    """``mean ± half`` (just the mean when the half-width is undefined)."""
    if not np.isfinite(mean):
        return "—"
    if half is None or not np.isfinite(half):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def md_table(df: pd.DataFrame, index: bool = True, floatfmt: str = ".2f") -> str:
    """A Markdown pipe table (:func:`gpu_sched_env.core.tables.markdown_table`, numbers right-aligned)."""
    return markdown_table(df, floatfmt, index=index, align_numbers=True)


def order_policies(names: Sequence[str]) -> list[str]:
    """Policies in the published table's order (§4), unknown names last."""
    from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC

    ref = list(PUBLISHED_HECTIC.index)
    return sorted(names, key=lambda p: (ref.index(p) if p in ref else len(ref), p))


# ---------------------------------------------------------------------------- per cell
def cell_means(df: pd.DataFrame, by: Sequence[str] = ("policy",), metrics: Sequence[str] = ALL_METRICS) -> pd.DataFrame:
    """Mean and 95 % t-interval half-width per group (columns ``m`` and ``m_ci``), plus ``n``."""
    return summarise(df, metrics=list(metrics), by=list(by) if len(by) > 1 else by[0])


def policy_table(
    df: pd.DataFrame, metrics: Sequence[str] = MAIN_METRICS + ("tight_miss_pct", "loose_miss_pct")
) -> pd.DataFrame:
    """The §4 shape: one row per policy, ``mean ± CI`` per metric."""
    s = cell_means(df, ("policy",), metrics)
    s = s.loc[order_policies(list(s.index))]
    out = pd.DataFrame(
        {LABELS.get(m, m): [fmt_ci(a, b) for a, b in zip(s[m], s[f"{m}_ci"])] for m in metrics}, index=s.index
    )
    out.index.name = "policy"
    out.insert(0, "n", s["n"].astype(int))
    return out


def sweep_table(df: pd.DataFrame, col: str, metric: str, digits: int = 2) -> pd.DataFrame:
    """Policy × swept value of ``col``: ``mean ± CI`` of ``metric``."""
    s = cell_means(df, ("policy", col), (metric,)).reset_index()
    s["v"] = [fmt_ci(a, b, digits) for a, b in zip(s[metric], s[f"{metric}_ci"])]
    t = s.pivot(index="policy", columns=col, values="v")[list(dict.fromkeys(s[col]))]  # the sweep's order
    t = t.loc[order_policies(list(t.index))]
    t.columns = [f"{col}={c}" for c in t.columns]
    return t


def metric_sweep_table(df: pd.DataFrame, col: str, metrics: Sequence[str], digits: int = 2) -> pd.DataFrame:
    """Metric × swept value of ``col`` for one policy's rows: ``mean ± CI`` per cell."""
    rows = {LABELS.get(m, m): sweep_table(df, col, m, digits).iloc[0] for m in metrics}
    out = pd.DataFrame(rows).T
    out.index.name = "metric"
    return out


# ---------------------------------------------------------------------------- RH in the pack
RH_PACK_BOUNDS = (0.9, 2.0)  # spec §6: RH's mean wait within 0.9–2× the median policy's


def pack_readings(m: pd.DataFrame) -> dict[str, pd.Series]:
    """RH's wait over the median policy's, per row of ``m`` (policy columns), under both readings.

    ``other 10``: the median of the other published policies (RH excluded). ``contract 7``:
    the median of the seven policies the §6 contract names (RH included), the pack of the
    contract's other checks. Only the second is consistent with the published table itself
    (:func:`published_rh_pack`).
    """
    from gpu_sched_env.cgrsp.reference import CONTRACT_POLICIES

    contract = [p for p in m.columns if p in CONTRACT_POLICIES]
    return {
        "other 10": m["rh"] / m[_other_published(m)].median(axis=1),
        "contract 7": m["rh"] / m[contract].median(axis=1),
    }


def _other_published(m: pd.DataFrame) -> list[str]:
    """The published policies among ``m``'s columns, RH excepted (extension heuristics are not)."""
    from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC

    return [p for p in m.columns if p != "rh" and p in PUBLISHED_HECTIC.index]


def published_rh_pack() -> dict[str, float]:
    """RH / median policy on the published hectic table (spec §4), under both readings of §6."""
    from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC

    m = PUBLISHED_HECTIC[["mean_wait_min"]].T
    return {k: float(v.iloc[0]) for k, v in pack_readings(m).items()}


def rh_in_pack(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per cell: RH's mean wait against the median policy's, under both readings of spec §6.

    ``RH / median (other 10)``: against the median of every other published policy in ``df``
    (extension heuristics excluded); ``RH / median (contract 7)``: against the median of the
    seven contract policies, RH included (the reading under which the published hectic table
    itself holds: 0.95× against 0.83×, :func:`published_rh_pack`). Each has its ``holds``
    column (within :data:`RH_PACK_BOUNDS`); ``within the range``: between the other
    published policies' lowest and highest wait.
    """
    m = df.groupby([*by, "policy"], sort=False)["mean_wait_min"].mean().unstack("policy")
    pack = _other_published(m)
    lo, hi = RH_PACK_BOUNDS
    r = pack_readings(m)
    out = pd.DataFrame(
        {
            "RH wait (min)": m["rh"],
            "range of the other 10 (min)": [
                f"{a:.2f}–{b:.2f}" for a, b in zip(m[pack].min(axis=1), m[pack].max(axis=1))
            ],
            "RH / median (other 10)": r["other 10"],
            f"other 10: within {lo:g}–{hi:g}×": r["other 10"].between(lo, hi),
            "RH / median (contract 7)": r["contract 7"],
            f"contract 7: within {lo:g}–{hi:g}×": r["contract 7"].between(lo, hi),
        }
    )
    out["within the range"] = m["rh"].between(m[pack].min(axis=1), m[pack].max(axis=1))
    return out


def relative_to_pack(df: pd.DataFrame, col: str, metric: str = "mean_wait_min") -> pd.DataFrame:
    """Policy × value of ``col``: the policy's mean ``metric`` / the median over the published policies."""
    from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC

    m = df.groupby([col, "policy"], sort=False)[metric].mean().unstack("policy")
    pub = [p for p in m.columns if p in PUBLISHED_HECTIC.index]
    rel = m.div(m[pub].median(axis=1), axis=0).T
    rel = rel.loc[order_policies(list(rel.index))]
    rel.columns = [f"{col}={c}" for c in rel.columns]
    rel.index.name = "policy"
    return rel


# ---------------------------------------------------------------------------- paired tests
def paired_tests(
    df: pd.DataFrame,
    metrics: Sequence[str] = ("miss_pct", "mean_wait_min"),
    refs: Sequence[str] = ("rh", "cadr"),
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Each reference policy vs every other policy on matched seeds, per metric.

    One family for Holm–Bonferroni: every (metric, reference, other) comparison in the
    table. Columns: metric, a, b, n, mean_a, mean_b, mean_diff, t, t_p, t_p_holm, w, w_p,
    w_p_holm, cohens_d, t_reject, w_reject.
    """
    pols = order_policies(list(df["policy"].unique()))
    refs = [r for r in refs if r in pols]
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    for r in refs:
        for o in pols:
            if o != r and frozenset((r, o)) not in seen:
                seen.add(frozenset((r, o)))
                pairs.append((r, o))
    values: dict[str, np.ndarray] = {}
    keyed: list[tuple[str, str]] = []
    for m in metrics:
        wide = df.pivot_table(index="seed", columns="policy", values=m, aggfunc="first").dropna()
        for p in pols:
            values[f"{m}|{p}"] = wide[p].to_numpy()
        keyed += [(f"{m}|{a}", f"{m}|{b}") for a, b in pairs]
    rows = compare_pairs(values, keyed, alpha)
    out = pd.DataFrame(rows)
    out.insert(0, "metric", [r["a"].split("|")[0] for r in rows])
    out["a"] = [r["a"].split("|")[1] for r in rows]
    out["b"] = [r["b"].split("|")[1] for r in rows]
    return out


def tests_md(t: pd.DataFrame) -> pd.DataFrame:
    """Paired-test table shaped for the report."""

    def p(x: float) -> str:
        return "—" if not np.isfinite(x) else ("< 1e-4" if x < 1e-4 else f"{x:.4f}")

    return pd.DataFrame(
        {
            "metric": [LABELS.get(m, m) for m in t["metric"]],
            "a − b": [f"{a} − {b}" for a, b in zip(t["a"], t["b"])],
            "mean diff": t["mean_diff"].map(lambda v: f"{v:+.2f}"),
            "t": t["t"].map(lambda v: f"{v:.2f}"),
            "p (t, Holm)": t["t_p_holm"].map(p),
            "p (Wilcoxon, Holm)": t["w_p_holm"].map(p),
            "Cohen's d": t["cohens_d"].map(lambda v: f"{v:+.2f}"),
            "significant": [
                ("yes" if a and b else ("t only" if a else ("W only" if b else "no")))
                for a, b in zip(t["t_reject"], t["w_reject"])
            ],
        }
    )


# ---------------------------------------------------------------------------- objective
def run_totals(df: pd.DataFrame) -> pd.DataFrame:
    """Per-run totals from the summaries: wait [s], misses, tardiness [s], cost [$]."""
    done = df["completed"].to_numpy(float)
    return pd.DataFrame(
        {
            "policy": df["policy"].to_numpy(),
            "seed": df["seed"].to_numpy(),
            "wait_s": df["mean_wait_min"].to_numpy() * 60.0 * done,
            "misses": df["miss_pct"].to_numpy() * df["n_jobs"].to_numpy() / 100.0,
            "tardiness_s": df["mean_tardiness_min"].to_numpy() * 60.0 * done,
            "cost": df["cost_usd"].to_numpy(),
        }
    )


def _minmax(x: pd.Series) -> pd.Series:
    span = x.max() - x.min()
    return (x - x.min()) / span if span > 0 else x * 0.0


def composite_scores(
    df: pd.DataFrame, w_cost: Sequence[float], ratios: Sequence[float], basis: str = "miss"
) -> pd.DataFrame:
    """Min–max normalised composite per policy and grid point (lower is better).

    ``score = w_cost·N(cost) + (1 − w_cost)·N(QoS)`` with N min–max over the policies'
    seed-mean totals and QoS = α1·Σwait[s] + α2·Σmiss (``basis="miss"``, the published
    objective) or α1·Σwait[s] + α2·Σtardiness[s] (``basis="tardiness"``); α1 = 1,
    α2 = ratio. Returns columns w_cost, ratio, policy, score, rank.
    """
    if basis not in ("miss", "tardiness"):
        raise ValueError(f"basis {basis!r}: use 'miss' or 'tardiness'")
    tot = run_totals(df).groupby("policy")[["wait_s", "misses", "tardiness_s", "cost"]].mean()
    second = tot["misses"] if basis == "miss" else tot["tardiness_s"]
    ncost = _minmax(tot["cost"])
    rows = []
    for r in ratios:
        nq = _minmax(tot["wait_s"] + r * second)
        for w in w_cost:
            sc = w * ncost + (1 - w) * nq
            rk = sc.rank(method="min")
            rows += [
                {"w_cost": w, "ratio": r, "policy": p, "score": float(sc[p]), "rank": int(rk[p])} for p in sc.index
            ]
    return pd.DataFrame(rows)


def best_policy_grid(scores: pd.DataFrame) -> pd.DataFrame:
    """w_cost × α2/α1: the policy with the lowest composite score (ties joined by '/')."""
    best = scores[scores["rank"] == 1].groupby(["w_cost", "ratio"])["policy"].agg(lambda s: "/".join(sorted(s)))
    t = best.unstack("ratio")
    t.columns = [f"α2/α1={c:g}" for c in t.columns]
    t.index = [f"{w:g}" for w in t.index]
    t.index.name = "w_cost"
    return t


def mean_rank_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean rank of each policy over the whole weight grid, best first."""
    t = scores.groupby("policy")["rank"].agg(["mean", "min", "max"])
    t["first places"] = scores[scores["rank"] == 1].groupby("policy").size().reindex(t.index).fillna(0).astype(int)
    return t.sort_values("mean").rename(columns={"mean": "mean rank", "min": "best rank", "max": "worst rank"})


# ---------------------------------------------------------------------------- month
def month_totals(df: pd.DataFrame) -> pd.DataFrame:
    """Per policy × replication: jobs, job-weighted wait and miss, tardiness, cost."""
    t = run_totals(df)
    t["rep"] = df["rep"].to_numpy()
    t["n_jobs"] = df["n_jobs"].to_numpy()
    t["completed"] = df["completed"].to_numpy()
    g = t.groupby(["policy", "rep"]).sum(numeric_only=True)
    return pd.DataFrame(
        {
            "jobs": g["n_jobs"],
            "mean_wait_min": g["wait_s"] / g["completed"] / 60.0,
            "miss_pct": 100.0 * g["misses"] / g["n_jobs"],
            "mean_tardiness_min": g["tardiness_s"] / g["completed"] / 60.0,
            "cost_usd": g["cost"],
        }
    ).reset_index()


def month_table(df: pd.DataFrame) -> pd.DataFrame:
    """Policy rows, monthly metrics ``mean ± CI`` over the replications."""
    m = month_totals(df)
    metrics = ("jobs", "mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd")
    out = {}
    for pol, g in m.groupby("policy"):
        out[pol] = {
            ("jobs/month" if k == "jobs" else LABELS.get(k, k)): fmt_ci(
                mean_ci(g[k]).mean, mean_ci(g[k]).half_width, 0 if k == "jobs" else 2
            )
            for k in metrics
        }
        out[pol]["reps"] = len(g)
    t = pd.DataFrame.from_dict(out, orient="index")
    t = t.loc[order_policies(list(t.index))]
    t.index.name = "policy"
    return t


def month_by_daytype(df: pd.DataFrame) -> pd.DataFrame:
    """Policy × day type: job-weighted miss % over every replication's days of that type."""
    t = run_totals(df)
    t["day"] = df["day"].to_numpy()
    t["n_jobs"] = df["n_jobs"].to_numpy()
    g = t.groupby(["policy", "day"])[["misses", "n_jobs"]].sum()
    miss = (100.0 * g["misses"] / g["n_jobs"]).unstack("day")
    days = [d for d in ("quiet", "normal", "surge", "hectic") if d in miss.columns]
    miss = miss[days].loc[order_policies(list(miss.index))]
    miss.columns = [f"{d} miss %" for d in days]
    return miss


__all__ = [
    "ALL_METRICS",
    "LABELS",
    "MAIN_METRICS",
    "best_policy_grid",
    "cell_means",
    "composite_scores",
    "fmt_ci",
    "md_table",
    "mean_rank_table",
    "metric_sweep_table",
    "month_by_daytype",
    "month_table",
    "month_totals",
    "order_policies",
    "paired_tests",
    "policy_table",
    "run_totals",
    "sweep_table",
    "tests_md",
]
