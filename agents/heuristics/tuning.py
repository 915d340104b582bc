"""Tuning a scenario's strong rules on selection seeds: the seed range, the grid's check, the table of candidates.

Each scenario's ``strong.tune()`` (HGSP, LLM serving, MIG; the edge cluster's shares the seed range) plays
every knob candidate of its rules on its own instances and hands the scores here; the rules, grids,
instances and objective stay the scenario's. Selection seeds only: the knobs a rule ships with are
chosen where no test instance (20 000 .. 29 999) and no training day (>= 2**20) is ever seen.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_choice, check_keys, check_number
from gpu_sched_env.core.stats import mean_ci

SELECTION = (10_000, 19_999)  # the project's selection seeds, inclusive (agents/rl/envs.py: SELECTION_SEEDS)


def selection_seeds(n_seeds: int, seed0: int) -> range:
    """``seed0 .. seed0 + n_seeds - 1``, all selection seeds (ConfigError otherwise)."""
    check_number("n_seeds", n_seeds, lo=1, integer=True)
    check_number("seed0", seed0, integer=True)
    lo, hi = SELECTION
    last = seed0 + n_seeds - 1
    if seed0 < lo or last > hi:
        raise ConfigError(
            f"seed0 = {seed0!r}, n_seeds = {n_seeds!r}: seeds {seed0} .. {last} leave the selection seeds; "
            f"allowed: {lo} .. {hi} (training seeds >= 2**20, test seeds 20 000 .. 29 999 are never tuned on)"
        )
    return range(seed0, last + 1)


def grids_to_play(grid: Mapping[str, Any], grids: Mapping[str, Mapping[str, Sequence]]) -> dict[str, dict]:
    """The grids to play: ``grid``'s rules with their candidates (in ``grids`` order), or every one of ``grids``.

    ``grid`` maps a rule of ``grids`` to ``{knob: candidates}``, each knob one of that rule's and each
    candidate list non-empty (ConfigError naming the rule, the knob and what is allowed otherwise).
    """
    for rule, g in grid.items():
        check_choice("rule", rule, grids)
        if not isinstance(g, Mapping):
            raise ConfigError(f"{rule} = {g!r} is not allowed; allowed: a mapping {{knob: candidate values}}")
        check_keys(g, grids[rule], section=f"{rule} knobs")
        for knob, vals in g.items():
            if isinstance(vals, (str, bytes)) or not isinstance(vals, Sequence) or not vals:
                raise ConfigError(f"{rule}.{knob} = {vals!r} is not allowed; allowed: a non-empty list of candidates")
    return {r: dict(grid[r]) for r in grids if r in grid} if grid else {r: dict(g) for r, g in grids.items()}


def candidates(grid: Mapping[str, Sequence]) -> list[dict[str, Any]]:
    """Every combination of the knobs' candidates (the product, the first knob slowest)."""
    keys = list(grid)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(grid[k] for k in keys))]


def grid_table(
    grids: Mapping[str, Mapping[str, Sequence]],
    defaults: Mapping[str, Mapping[str, Any]],
    play: Callable[[str, dict[str, Any]], Mapping[str, np.ndarray]],
    pool: Callable[[list[np.ndarray]], np.ndarray] = np.concatenate,
) -> pd.DataFrame:
    """One row per (rule, knobs): ``play(rule, knobs)`` -> ``{configuration: scores per seed}``, summarised.

    Columns ``rule``, the knobs (NaN where a rule has not the knob), ``mean`` with ``ci_lo``/``ci_hi`` (the
    95 % t interval of ``pool`` of the configurations' scores: all of them by default), ``mean_<configuration>``
    each, ``n`` and ``default`` (the row of ``defaults``); rules in ``grids`` order, lowest mean first within a
    rule (ties: grid order).
    """
    rows = []
    for rule, g in grids.items():
        for knobs in candidates(g):
            scores = play(rule, knobs)
            ci = mean_ci(pool(list(scores.values())))
            rows.append(
                {
                    "rule": rule,
                    **knobs,
                    "mean": ci.mean,
                    "ci_lo": ci.lo,
                    "ci_hi": ci.hi,
                    **{f"mean_{k}": float(v.mean()) for k, v in scores.items()},
                    "n": ci.n,
                    "default": all(defaults[rule][k] == v for k, v in knobs.items()),
                }
            )
    knobs = [k for g in grids.values() for k in g]
    df = pd.DataFrame(rows)
    df = df[["rule", *dict.fromkeys(knobs), *(c for c in df.columns if c != "rule" and c not in knobs)]]
    rank = {r: k for k, r in enumerate(grids)}
    df = df.assign(_r=df.rule.map(rank)).sort_values(["_r", "mean"], kind="stable").drop(columns="_r")
    return df.reset_index(drop=True)


__all__ = ["SELECTION", "candidates", "grid_table", "grids_to_play", "selection_seeds"]
