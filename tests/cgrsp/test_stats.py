"""core.stats checked against textbook formulas computed by hand (not the same SciPy calls)."""

import itertools
import math

import numpy as np
import pytest

from gpu_sched_env.core.stats import cohens_d_paired, compare_pairs, holm, mean_ci, paired_compare


def t2_two_sided_p(t: float) -> float:
    """Student t with 2 df has the closed-form CDF 1/2 + t / (2 sqrt(2 + t²))."""
    return 1.0 - abs(t) / math.sqrt(2.0 + t * t)


def t2_quantile(p: float) -> float:
    """Inverse of that CDF: (2p − 1) / sqrt(2 p (1 − p))."""
    return (2 * p - 1) / math.sqrt(2 * p * (1 - p))


def exact_wilcoxon_p(d: list[float]) -> tuple[float, float]:
    """Two-sided exact signed-rank test by enumerating all 2^n sign patterns (no ties, no zeros)."""
    ranks = {v: i + 1 for i, v in enumerate(sorted(abs(x) for x in d))}
    w_plus = sum(ranks[abs(x)] for x in d if x > 0)
    w_minus = sum(ranks[abs(x)] for x in d if x < 0)
    stat = min(w_plus, w_minus)
    n = len(d)
    dist = [sum(r for r, s in zip(range(1, n + 1), signs) if s) for signs in itertools.product((0, 1), repeat=n)]
    p = 2 * sum(1 for w in dist if w <= stat) / len(dist)
    return stat, min(1.0, p)


def test_mean_ci_matches_closed_form_t_quantile():
    ci = mean_ci([1.0, 2.0, 3.0])  # mean 2, sd 1, n 3
    half = t2_quantile(0.975) * 1.0 / math.sqrt(3)  # 4.3027 / sqrt(3) = 2.4841
    assert ci.mean == pytest.approx(2.0)
    assert ci.half_width == pytest.approx(half, rel=1e-9)
    assert half == pytest.approx(2.484138, abs=1e-6)
    assert (ci.lo, ci.hi) == pytest.approx((2 - half, 2 + half))


def test_mean_ci_single_value_has_no_interval():
    ci = mean_ci([5.0])
    assert ci.mean == 5.0 and math.isnan(ci.half_width)


def test_paired_t_and_cohens_d_by_hand():
    a, b = [3.0, 5.0, 9.0], [1.0, 2.0, 4.0]  # d = 2, 3, 5
    mean_d = 10 / 3
    sd_d = math.sqrt(((2 - mean_d) ** 2 + (3 - mean_d) ** 2 + (5 - mean_d) ** 2) / 2)  # 1.5275
    t = mean_d / (sd_d / math.sqrt(3))  # 3.7796
    c = paired_compare(a, b)
    assert c.mean_diff == pytest.approx(mean_d)
    assert c.t_stat == pytest.approx(t, rel=1e-9)
    assert t == pytest.approx(3.779645, abs=1e-6)
    assert c.t_p == pytest.approx(t2_two_sided_p(t), rel=1e-9)
    assert c.cohens_d == pytest.approx(mean_d / sd_d, rel=1e-12)
    assert cohens_d_paired(a, b) == pytest.approx(2.182179, abs=1e-6)
    # all three differences positive: W- = 0, exact two-sided p = 2 · (1/8)
    assert c.w_stat == 0.0
    assert c.w_p == pytest.approx(0.25)


def test_wilcoxon_exact_by_enumeration():
    a = np.array([10.0, 12.5, 9.0, 14.0, 11.0, 8.0])
    b = np.array([9.0, 10.0, 9.5, 10.0, 11.7, 5.0])  # d = 1, 2.5, -0.5, 4, -0.7, 3 (distinct |d|)
    stat, p = exact_wilcoxon_p(list(a - b))
    assert stat == 3  # ranks of |d|: 0.5→1, 0.7→2, 1→3, 2.5→4, 3→5, 4→6; W- = 1 + 2
    c = paired_compare(a, b)
    assert c.w_stat == stat
    assert c.w_p == pytest.approx(p, rel=1e-9)
    assert p == pytest.approx(2 * 5 / 64)  # rank subsets summing to ≤ 3: {}, {1}, {2}, {3}, {1,2}


def test_identical_samples_compare_as_no_difference():
    c = paired_compare([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (c.mean_diff, c.t_p, c.w_p, c.cohens_d) == (0.0, 1.0, 1.0, 0.0)


def test_paired_compare_length_mismatch_raises():
    with pytest.raises(ValueError, match="differ in length"):
        paired_compare([1.0, 2.0], [1.0])


def test_holm_step_down_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max(0.06, 0.04) = 0.06
    reject, adj = holm(p, alpha=0.05)
    assert adj == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert reject.tolist() == [True, False, False, True]


def test_holm_caps_at_one_and_keeps_nan():
    reject, adj = holm([0.5, float("nan"), 0.4])
    assert adj[0] == pytest.approx(min(1.0, max(0.4 * 2, 0.5 * 1)))
    assert math.isnan(adj[1]) and not reject.any()


def test_compare_pairs_holm_over_the_family():
    a = [3.0, 5.0, 9.0]
    vals = {"a": a, "b": [1.0, 2.0, 4.0], "c": [2.0, 5.5, 8.0]}
    rows = compare_pairs(vals, [("a", "b"), ("a", "c")])
    raw = [t2_two_sided_p(r["t"]) for r in rows]
    assert [r["t_p"] for r in rows] == pytest.approx(raw)
    lo, hi = sorted(raw)
    expect = {lo: 2 * lo, hi: max(2 * lo, hi)}
    assert [r["t_p_holm"] for r in rows] == pytest.approx([min(1.0, expect[p]) for p in raw])
    assert rows[0]["mean_a"] == pytest.approx(17 / 3) and rows[0]["b"] == "b"
    with pytest.raises(KeyError, match="no values"):
        compare_pairs(vals, [("a", "zz")])
