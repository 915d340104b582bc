"""Statistics for comparing policies on matched seeds (SciPy and statsmodels underneath)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st


@dataclass(frozen=True)
class MeanCI:
    """Sample mean with a two-sided Student-t confidence interval."""

    mean: float
    lo: float
    hi: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.hi - self.lo) / 2.0


def mean_ci(x: Sequence[float], level: float = 0.95) -> MeanCI:
    """Mean and ``level`` CI with the t distribution on n-1 degrees of freedom."""
    a = np.asarray(x, dtype=float)
    n = a.size
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    m = float(a.mean())
    if n == 1:
        return MeanCI(m, float("nan"), float("nan"), 1)
    se = float(a.std(ddof=1)) / np.sqrt(n)
    lo, hi = _st.t.interval(level, n - 1, loc=m, scale=se) if se > 0 else (m, m)
    return MeanCI(m, float(lo), float(hi), n)


def cohens_d_paired(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's d for paired samples: mean(a - b) / sd(a - b) (d_z); 0 when all differences are 0."""
    d = np.asarray(a, float) - np.asarray(b, float)
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if sd == 0.0:
        return 0.0 if float(d.mean()) == 0.0 else float("inf") * np.sign(d.mean())
    return float(d.mean()) / sd


@dataclass(frozen=True)
class PairedComparison:
    """Paired t-test, Wilcoxon signed-rank and effect size for a − b on matched seeds."""

    mean_diff: float
    t_stat: float
    t_p: float
    w_stat: float
    w_p: float
    cohens_d: float
    n: int


def paired_compare(a: Sequence[float], b: Sequence[float]) -> PairedComparison:
    """Compare two policies' per-seed values (same seeds, same order)."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.size} vs {b.size}")
    d = a - b
    if np.allclose(d, 0.0):
        return PairedComparison(0.0, 0.0, 1.0, 0.0, 1.0, 0.0, a.size)
    t = _st.ttest_rel(a, b)
    try:
        w = _st.wilcoxon(a, b, zero_method="wilcox")
        w_stat, w_p = float(w.statistic), float(w.pvalue)
    except ValueError:
        w_stat, w_p = float("nan"), float("nan")
    return PairedComparison(
        float(d.mean()), float(t.statistic), float(t.pvalue), w_stat, w_p, cohens_d_paired(a, b), a.size
    )


ALPHA = 0.05  # the family-wise level of every paired-test verdict (Holm), unless a caller says otherwise


def holm(pvalues: Sequence[float], alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Holm–Bonferroni step-down adjustment: returns (reject, adjusted p) per input."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, float)
    ok = ~np.isnan(p)
    reject = np.zeros(p.shape, bool)
    adj = np.full(p.shape, np.nan)
    if ok.any():
        r, padj, _, _ = multipletests(p[ok], alpha=alpha, method="holm")
        reject[ok] = r
        adj[ok] = padj
    return reject, adj


def compare_pairs(
    values: Mapping[str, Sequence[float]],
    pairs: Sequence[tuple[str, str]],
    alpha: float = ALPHA,
) -> list[dict[str, float | str | bool | int]]:
    """Paired comparisons of matched samples with Holm–Bonferroni over the whole family.

    Args:
        values: group name → per-seed values (every group in the same seed order).
        pairs: (a, b) group names to compare as a − b; together they form one family.
        alpha: family-wise error rate for the Holm step-down rejections.

    Returns:
        One dict per pair, in input order: ``a``, ``b``, ``n``, ``mean_a``, ``mean_b``,
        ``mean_diff``, ``t``, ``t_p``, ``t_p_holm``, ``t_reject``, ``w``, ``w_p``,
        ``w_p_holm``, ``w_reject``, ``cohens_d``.
    """
    rows: list[dict[str, float | str | bool | int]] = []
    for a, b in pairs:
        if a not in values or b not in values:
            missing = [x for x in (a, b) if x not in values]
            raise KeyError(f"compare_pairs: no values for {missing}; have {sorted(values)}")
        xa, xb = np.asarray(values[a], float), np.asarray(values[b], float)
        c = paired_compare(xa, xb)
        rows.append(
            {
                "a": a,
                "b": b,
                "n": c.n,
                "mean_a": float(xa.mean()),
                "mean_b": float(xb.mean()),
                "mean_diff": c.mean_diff,
                "t": c.t_stat,
                "t_p": c.t_p,
                "w": c.w_stat,
                "w_p": c.w_p,
                "cohens_d": c.cohens_d,
            }
        )
    for test in ("t", "w"):
        reject, adj = holm([float(r[f"{test}_p"]) for r in rows], alpha)
        for r, rej, q in zip(rows, reject, adj):
            r[f"{test}_p_holm"] = float(q)
            r[f"{test}_reject"] = bool(rej)
    return rows
