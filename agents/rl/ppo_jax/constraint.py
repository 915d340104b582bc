"""Misses as a constraint of model selection for ``algo=ppo_jax``: lexicographic and worst-regime picks.

Model selection (:func:`lexicographic_pick`): among the evaluated checkpoints, those with no more
misses than the rule on the same selection days (an exact count: same days, same jobs, so the
mean miss % orders as the count), then the lowest mean wait; when none qualifies, the fewest
misses, then the lowest wait. For a policy judged on several regimes (the generalist),
:func:`worst_regime_pick`: the fewest regimes with more misses than the rule, then the smallest
wait excess of the worst regime in units of the criterion's margin. Either pick may have a second
stage against the winner's curse (:func:`pooled_pick`, :func:`pooled_regime_pick`): the best few
replayed on further selection days and picked again on both stages' days pooled.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

# The generalist criterion's margin (frac, floor), defined in the criteria module; the tests read it from here.
from gpu_sched_env.core.criteria import GENERALIST_MARGIN, tolerance

SELECTION_ROOM = 10_000  # selection days are keys 10 000 … 19 999: jax_eval.SELECT_SEED0 up to its TEST_SEED0


def rule_miss_pct(env: Any, rule: str, n_days: int) -> float:
    """The JAX rule's mean miss % on ``n_days`` native selection days (keys 10 000 …): a lexicographic pick's bound."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, rule_regime_means, test_keys

    return rule_regime_means({"": env}, rule, test_keys(n_days, SELECT_SEED0))[""][1]


def lexicographic_key(miss_pct: float, wait_min: float, rule_miss_pct: float) -> tuple[float, float, float]:
    """Lower is better: ``(0, 0, wait)`` within the rule's misses, else ``(1, miss %, wait)``.

    One evaluation at a time (``train.py``'s ``algo.select_days`` keeps the best so far with it).
    """
    return (0.0, 0.0, wait_min) if miss_pct <= rule_miss_pct + 1e-9 else (1.0, miss_pct, wait_min)


def lexicographic_pick(evals: pd.DataFrame, rule_miss_pct: float) -> Any:
    """The index of the checkpoint to keep: no more misses than the rule, then the lowest wait.

    ``evals``: one row per checkpoint with the mean ``miss_pct`` and ``mean_wait_min`` on the
    selection days the rule's ``rule_miss_pct`` was measured on. None within the rule's misses:
    the fewest misses, then the lowest wait (:func:`lexicographic_key`). Ties keep the earliest row.
    """
    keys = [lexicographic_key(m, w, rule_miss_pct) for m, w in zip(evals.miss_pct, evals.mean_wait_min)]
    return evals.index[min(range(len(keys)), key=keys.__getitem__)]


RECHECK_TOP = 8  # a pick's second stage: how many of the best evaluations it replays


def _pool(first: Any, second: Any, n_first: int, n_second: int) -> Any:
    """A mean over both stages' days: each stage's mean weighted by its number of days."""
    return (n_first * first + n_second * second) / (n_first + n_second)


def best_first(index: pd.Index, keys: list[Any], top: int) -> list[Any]:
    """The labels of ``index`` with the ``top`` lowest ``keys``, lowest first (a stable sort: ties keep the earlier)."""
    return [index[i] for i in sorted(range(len(keys)), key=keys.__getitem__)[:top]]


def best_by_key(evals: pd.DataFrame, rule_miss_pct: float, top: int) -> list[Any]:
    """The index labels of the ``top`` best rows of ``evals`` by :func:`lexicographic_key`, best first.

    Ties keep the earlier row first.
    """
    keys = [lexicographic_key(m, w, rule_miss_pct) for m, w in zip(evals.miss_pct, evals.mean_wait_min)]
    return best_first(evals.index, keys, top)


def pooled_pick(
    evals: pd.DataFrame,
    replayed: dict[Any, tuple[float, float]],
    n_first: int,
    n_second: int,
    rule_first: float,
    rule_second: float,
) -> tuple[pd.DataFrame, Any]:
    """The lexicographic pick's second stage: ``(evals with its columns, the index picked)``.

    A miss one day in a hundred is invisible to a hundred selection days, so the lowest wait among
    many checkpoints with no miss there is partly luck (a winner's curse). ``evals``: one row per
    checkpoint (``mean_wait_min``, ``miss_pct`` on ``n_first`` selection days, where the rule missed
    ``rule_first`` %); ``replayed``: index → (mean wait, miss %) on ``n_second`` further selection
    days (the rule's: ``rule_second`` %), for the rows :func:`best_by_key` chose. The pick is
    :func:`lexicographic_pick` among the replayed rows on both stages' days pooled, against the
    rule's pooled rate. Columns added: ``recheck_wait_min``, ``recheck_miss_pct``,
    ``pooled_wait_min``, ``pooled_miss_pct`` (NaN where not replayed), ``recheck_rule_miss_pct``,
    ``pooled_rule_miss_pct``.
    """

    def pool(a: Any, b: Any) -> Any:
        return _pool(a, b, n_first, n_second)

    second = pd.DataFrame.from_dict(replayed, orient="index", columns=["recheck_wait_min", "recheck_miss_pct"])
    table = evals.join(second)
    table = table.assign(
        pooled_wait_min=pool(table.mean_wait_min, table.recheck_wait_min),
        pooled_miss_pct=pool(table.miss_pct, table.recheck_miss_pct),
        recheck_rule_miss_pct=rule_second,
        pooled_rule_miss_pct=pool(rule_first, rule_second),
    )
    done = table.loc[list(replayed)]
    pooled = pd.DataFrame({"miss_pct": done.pooled_miss_pct, "mean_wait_min": done.pooled_wait_min})
    return table, lexicographic_pick(pooled, pool(rule_first, rule_second))


def check_recheck(prefix: str, recheck_days: int, recheck_top: int, select_days: int, how: str | None) -> None:
    """ConfigError unless the second stage is off (``recheck_days`` = 0) or can run.

    ``prefix``: the fields' prefix in the message (``"algo."`` in train.py, ``""`` for a function's
    arguments, ``"--"`` for a command's options, spelled ``--recheck-days``); ``how``: None where the
    selection can have a second stage (lexicographic on one regime, or the worst-regime pick of the
    studies), else what it is instead. Both stages' selection days must stay below the test keys
    (keys 10 000 … below 20 000).
    """
    from gpu_sched_env.core.errors import ConfigError

    def field(name: str) -> str:
        return f"--{name.replace('_', '-')}" if prefix == "--" else f"{prefix}{name}"

    days, top, both = field("recheck_days"), field("recheck_top"), f"{field('select_days')} + {field('recheck_days')}"
    if recheck_days == 0:
        return
    if recheck_days < 0:
        raise ConfigError(f"{days} = {recheck_days}: 0 (no second stage) or a number of selection days")
    if how is not None:
        raise ConfigError(
            f"{days} = {recheck_days}: the second stage re-ranks a selection's pick (lexicographic, or the "
            f"worst regime's) on further selection days; here {how}"
        )
    if recheck_top < 1:
        raise ConfigError(f"{top} = {recheck_top}: at least 1 evaluation to replay")
    if select_days + recheck_days > SELECTION_ROOM:
        raise ConfigError(
            f"{both} = {select_days + recheck_days}: selection days are keys "
            f"10000 … and must stay below the test keys (20000); at most {SELECTION_ROOM} together"
        )


def worst_regime_key(
    evals: pd.Series, rules: dict[str, tuple[float, float]], frac: float, floor_min: float
) -> tuple[int, float]:
    """Lower is better: (regimes with more misses than the rule, the worst regime's wait excess).

    ``evals``: one checkpoint's ``<regime>_wait`` and ``<regime>_miss`` on each regime's selection
    days; ``rules``: regime → the rule's (mean wait [min], miss %) on the same days. A regime's
    excess is (wait − rule's) / max(``frac`` × rule's wait, ``floor_min``): ≤ 1 inside the
    generalist criterion's margin, so the key ranks checkpoints by the criterion's worst regime.
    """
    over = sum(int(evals[f"{r}_miss"] > m + 1e-9) for r, (_, m) in rules.items())
    excess = max(wait_excess(evals[f"{r}_wait"], w, frac, floor_min) for r, (w, _) in rules.items())
    return over, float(excess)


def wait_excess(wait: float, rule_wait: float, frac: float, floor_min: float) -> float:
    """(wait − the rule's) in units of the margin max(``frac`` × the rule's wait, ``floor_min``): ≤ 1 is inside it."""
    return (wait - rule_wait) / tolerance(rule_wait, (frac, floor_min))


def worst_regime_pick(evals: pd.DataFrame, rules: dict[str, tuple[float, float]], frac: float, floor_min: float) -> Any:
    """The index of the checkpoint whose worst regime is best (:func:`worst_regime_key`); ties keep the earliest."""
    return best_by_worst_regime(evals, rules, frac, floor_min, 1)[0]


def best_by_worst_regime(
    evals: pd.DataFrame, rules: dict[str, tuple[float, float]], frac: float, floor_min: float, top: int
) -> list[Any]:
    """The ``top`` best rows of ``evals`` by :func:`worst_regime_key`, best first (ties: the earlier)."""
    return best_first(evals.index, [worst_regime_key(row, rules, frac, floor_min) for _, row in evals.iterrows()], top)


def pooled_regime_pick(
    evals: pd.DataFrame,
    replayed: dict[Any, dict[str, float]],
    n_first: int,
    n_second: int,
    rules_first: dict[str, tuple[float, float]],
    rules_second: dict[str, tuple[float, float]],
    frac: float,
    floor_min: float,
) -> tuple[pd.DataFrame, Any]:
    """The worst-regime pick's second stage (the generalist's): ``(evals with its columns, the index picked)``.

    As :func:`pooled_pick` for one regime: ``evals`` has each checkpoint's ``<regime>_wait`` and
    ``<regime>_miss`` on ``n_first`` selection days per regime (the rule's: ``rules_first``, regime →
    (wait, miss %)); ``replayed``: index → the same columns on ``n_second`` further days per regime
    (the rule's: ``rules_second``), for the rows :func:`best_by_worst_regime` chose. The pick is
    :func:`worst_regime_pick` among the replayed rows on both stages' days pooled, against the
    rule's pooled numbers. Columns added: ``recheck_<regime>_<wait|miss>`` and
    ``pooled_<regime>_<wait|miss>`` (NaN where not replayed), ``pooled_<regime>_rule_<wait|miss>``.
    """

    def pool(a: Any, b: Any) -> Any:
        return _pool(a, b, n_first, n_second)

    cols = [f"{r}_{m}" for r in rules_first for m in ("wait", "miss")]
    second = pd.DataFrame.from_dict(replayed, orient="index")[cols]
    table = evals.join(second.add_prefix("recheck_"))
    pooled_rules = {r: (pool(w, rules_second[r][0]), pool(m, rules_second[r][1])) for r, (w, m) in rules_first.items()}
    table = table.assign(
        **{f"pooled_{c}": pool(table[c], table[f"recheck_{c}"]) for c in cols},
        **{f"pooled_{r}_rule_{k}": v for r, (w, m) in pooled_rules.items() for k, v in (("wait", w), ("miss", m))},
    )
    done = table.loc[list(replayed), [f"pooled_{c}" for c in cols]]
    pooled = done.rename(columns=lambda c: c.removeprefix("pooled_"))
    return table, worst_regime_pick(pooled, pooled_rules, frac, floor_min)


__all__ = [
    "best_first",
    "GENERALIST_MARGIN",
    "RECHECK_TOP",
    "best_by_key",
    "best_by_worst_regime",
    "check_recheck",
    "pooled_pick",
    "pooled_regime_pick",
    "lexicographic_key",
    "lexicographic_pick",
    "rule_miss_pct",
    "wait_excess",
    "worst_regime_key",
    "worst_regime_pick",
]
