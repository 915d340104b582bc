"""The one judge (:mod:`gpu_sched_env.core.criteria`): each criterion on its edges, and no copy of it elsewhere."""

import ast
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpu_sched_env.core import criteria
from gpu_sched_env.core.criteria import (
    BETTER,
    GENERALIST_MARGIN,
    MISS_BOUND_PP,
    NO_DIFFERENCE,
    PARITY_MARGIN,
    WORSE,
    best_rule,
    significance,
    tolerance,
    verdict,
    within,
)
from gpu_sched_env.core.stats import ALPHA

ROOT = Path(__file__).resolve().parents[2]
up, down = (lambda x: float(np.nextafter(x, np.inf))), (lambda x: float(np.nextafter(x, -np.inf)))


def test_the_margins_are_named():
    assert PARITY_MARGIN == (0.01, 0.05) and GENERALIST_MARGIN == (0.02, 0.05) and MISS_BOUND_PP == 0.01


def test_tolerance_is_the_fraction_of_the_rule_or_the_floor_whichever_is_larger():
    assert tolerance(44.0) == 0.01 * 44.0 and tolerance(44.0, GENERALIST_MARGIN) == 0.02 * 44.0  # the fraction
    assert tolerance(0.3) == 0.05 and tolerance(0.3, GENERALIST_MARGIN) == 0.05  # the floor (the surge rule)
    assert tolerance(5.0) == 0.05 and tolerance(2.5, GENERALIST_MARGIN) == 0.05  # where both are equal
    assert tolerance(up(5.0)) > 0.05 and tolerance(down(5.0)) == 0.05
    assert math.isnan(tolerance(float("nan")))


def test_within_includes_the_tolerance_and_needs_the_guard_not_higher():
    t = 0.01 * 44.0
    assert within(t, 44.0, 0.0) and not within(up(t), 44.0, 0.0)  # exactly at the tolerance: within
    assert within(0.05, 0.3, 0.0) and not within(up(0.05), 0.3, 0.0)  # the floor, exactly
    assert within(0.88, 44.0, 0.0, GENERALIST_MARGIN) and not within(0.89, 44.0, 0.0, GENERALIST_MARGIN)
    assert within(-5.0, 44.0, 0.0) and within(-5.0, 44.0, -0.1)  # the guard equal or lower
    assert not within(-5.0, 44.0, 1e-12)  # the guard higher, by however little
    assert within(0.0, 44.0, MISS_BOUND_PP, guard_bound=MISS_BOUND_PP)  # the guard's upper bound at the bound
    assert not within(0.0, 44.0, up(MISS_BOUND_PP), guard_bound=MISS_BOUND_PP)
    nan = float("nan")
    assert not any([within(nan, 44.0, 0.0), within(0.0, nan, 0.0), within(0.0, 44.0, nan)])  # a judge not run


def test_significance_is_strictly_below_alpha_and_signed():
    assert significance(-1.0, down(ALPHA)) == BETTER and significance(1.0, down(ALPHA)) == WORSE
    assert significance(-1.0, ALPHA) == NO_DIFFERENCE and significance(1.0, ALPHA) == NO_DIFFERENCE  # p at ALPHA
    assert significance(-1.0, 0.5) == NO_DIFFERENCE
    assert significance(-1.0, float("nan")) == NO_DIFFERENCE  # no test (one unit): nothing is significant
    assert significance(0.0, 0.0) == NO_DIFFERENCE
    assert significance(-1.0, 0.01, alpha=0.005) == NO_DIFFERENCE


def test_the_verdict_needs_the_primary_lower_and_the_guard_not_higher():
    assert verdict(-1.0, 0.01, 0.0, 1.0) == BETTER
    assert verdict(-1.0, 0.01, -0.2, 0.01) == BETTER
    assert verdict(-1.0, 0.01, 0.001, 0.5) == NO_DIFFERENCE  # the guard higher, not significantly: not better
    assert verdict(-1.0, 0.01, 0.001, 0.01) == WORSE  # the guard significantly higher
    assert verdict(1.0, 0.01, 0.0, 1.0) == WORSE
    assert verdict(-1.0, ALPHA, 0.0, 1.0) == NO_DIFFERENCE and verdict(1.0, ALPHA, 1.0, ALPHA) == NO_DIFFERENCE
    assert set(criteria.WORDS) == {BETTER, WORSE, NO_DIFFERENCE}


def test_the_best_rule_is_the_lowest_first_key_rounded_then_the_lowest_second():
    means = pd.DataFrame(
        {"miss_pct": [0.1, 0.0, 1e-12, 0.0, 1e-8], "mean_wait_min": [30.0, 46.0, 45.0, 45.0, 40.0]},
        index=["low_wait_misses", "a", "noise", "b", "real_miss"],
    )
    keys = ("miss_pct", "mean_wait_min")
    assert best_rule(means, list(means.index), keys) == "noise"  # 1e-12 pp rounds to no miss; then the wait
    assert best_rule(means, ["a", "b"], keys) == "b"
    assert best_rule(means, ["b", "noise"], keys) == "b" and best_rule(means, ["noise", "b"], keys) == "noise"  # ties
    assert best_rule(means, ["real_miss", "a"], keys) == "a"  # 1e-8 pp is a difference
    other = pd.DataFrame({"jct": [2.0, 1.0], "energy": [1.0, 2.0]}, index=["x", "y"])  # any scenario's keys
    assert best_rule(other, ["x", "y"], ("jct", "energy")) == "y" and best_rule(other, ["x", "y"], ("energy",)) == "x"


def _sources():
    for folder in ("gpu_sched_env", "agents", "studies", "scripts"):
        yield from (p for p in (ROOT / folder).rglob("*.py") if p != ROOT / "gpu_sched_env/core/criteria.py")
    yield ROOT / "train.py"


def _criteria_names(tree: ast.Module) -> set[str]:
    """The names a module binds to the criteria module or to what it exports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "gpu_sched_env.core.criteria":
            names |= {a.asname or a.name for a in node.names}
        if isinstance(node, ast.ImportFrom) and node.module == "gpu_sched_env.core":
            names |= {a.asname or a.name for a in node.names if a.name == "criteria"}
    return names


def _calls_into(fn: ast.FunctionDef, names: set[str]) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in names:
                return True
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in names:
                return True
    return False


INLINE = re.compile(r"max\(0\.0[12] \*|round\(.*miss_pct.*, 9\)|t_p(_holm)?\W* < 0\.05|>= ALPHA|< ALPHA")


def _copies_in(text: str, rel: str) -> list[str]:
    """Where ``text`` (a module's source) defines a criterion itself instead of calling the criteria module."""
    copies = []
    tree = ast.parse(text)
    names = _criteria_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in ("tolerance", "within", "significance"):
            copies.append(f"{rel}:{node.lineno}: def {node.name}")
        if isinstance(node, ast.FunctionDef) and node.name in ("at_parity", "verdict") and not _calls_into(node, names):
            copies.append(f"{rel}:{node.lineno}: def {node.name} without the criteria module")
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id in ("PARITY_MARGIN", "GENERALIST_MARGIN", "MISS_BOUND_PP"):
                    copies.append(f"{rel}:{node.lineno}: {t.id} =")
        if isinstance(node, (ast.Compare, ast.Call)) and INLINE.search(ast.unparse(node)):  # code, not prose
            copies.append(f"{rel}:{node.lineno}: {INLINE.search(ast.unparse(node)).group()}")
    return list(dict.fromkeys(copies))  # a call inside a comparison is one copy


def test_the_criteria_module_is_the_only_definition():
    """No copy elsewhere: no tolerance/within/significance, no margin constant, no inline criterion expression.

    A scenario's thin pairing may keep a name (``parity.at_parity`` on its paired row, ``judge.verdict`` on a
    report's entries, ``compare.verdict`` a run's lines) only where its body calls into the criteria module.
    """
    copies = [c for path in _sources() for c in _copies_in(path.read_text(), str(path.relative_to(ROOT)))]
    assert not copies, "criteria defined outside gpu_sched_env/core/criteria.py:\n" + "\n".join(copies)


def test_the_checker_sees_the_copies_there_were():
    old = """
def at_parity(diff_ci_high, rule_wait, miss_diff):
    return bool(diff_ci_high <= max(0.01 * rule_wait, 0.05) and miss_diff <= 0)
def tolerance(rule_wait):
    return max(0.01 * float(rule_wait), 0.05)
def pick(means, rules):
    return min(rules, key=lambda r: (round(means.loc[r, "miss_pct"], 9), means.loc[r, "mean_wait_min"]))
def verdict(wait, miss):
    return "better" if wait["diff"] < 0 and wait["t_p_holm"] < ALPHA and miss["diff"] <= 0 else "no"
def beats(w, m):
    return bool(w.mean_diff < 0 and w.t_p_holm < 0.05 and m.mean_diff <= 0)
GENERALIST_MARGIN = (0.02, 0.05)
"""
    found = _copies_in(old, "old.py")
    assert {int(c.split(":")[1]) for c in found} == {2, 3, 4, 5, 7, 8, 9, 11, 12}, found
    thin = "from gpu_sched_env.core.criteria import within\ndef at_parity(p):\n    return within(p, 1, 0)\n"
    assert _copies_in(thin, "thin.py") == []


def test_the_leaderboard_marks_every_verdict_word():
    from gpu_sched_agents.evaluate.leaderboard import MARK

    assert set(MARK) == set(criteria.WORDS)


@pytest.mark.parametrize("module", ["agents/evaluate/judge.py", "agents/rl/compare.py"])
def test_the_judges_read_the_verdict_from_the_criteria_module(module):
    assert "criteria" in _criteria_names(ast.parse((ROOT / module).read_text()))
