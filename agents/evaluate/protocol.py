"""The standard protocol: how this project judges a CGRSP policy.

Scopes: the four regimes of the parity study (hectic and surge × fresh stock and the Markov
stock with D = 900 s), each on the test seeds 20 000 … 20 000 + n − 1 (one day per seed, the unit
of the statistics), and the month (:mod:`gpu_sched_agents.rl.month`: 30 days of the month mix per
replication, fresh stock; the unit is the replication's job-weighted monthly figure). In every
scope, on the same days and with the policy's own simulator parameters:

* the ten deferring rules (``EXTENSIONS``); the best is re-chosen per scope (lowest mean miss %,
  then lowest mean wait, as the parity study and ``compare.versus_rules`` choose), and the policy
  is paired against it: the 95 % t interval of the mean difference policy − rule, the paired t
  test and Wilcoxon signed-rank test, Holm-adjusted over the whole family (every scope × wait
  and miss);
* the headroom map's bounds (:mod:`gpu_sched_env.cgrsp.bounds`): ``spt_rescue_defer_exp`` with
  every stock status High (``all_high``), with no provisioning delay (``no_delay``), and the
  clairvoyant SRPT lower bound on any policy's mean wait (``srpt``, no miss bound: 0).

A policy exported by ``algo=ppo_jax`` is also played in JAX on ``jax_days`` native days per regime
(keys ``PRNGKey(20 000 + i)``), paired with the JAX ``spt_rescue_defer_exp`` (Holm over those tests).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.evaluate.policy import Policy, learned_days
from gpu_sched_env.cgrsp.batch import SIM_SOURCES
from gpu_sched_env.cgrsp.rewards import deadline_objective
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_table
from gpu_sched_env.core.store import (
    CellStore,
    code_version,
    in_grid_order,
    package_version,
    reference_cache,
    stored_rows,
)

REGIMES: dict[str, tuple[str, str]] = {  # name -> (day, stock: "fresh" or the Markov dwell D [s])
    "hectic_fresh": ("hectic", "fresh"),
    "hectic_D900": ("hectic", "900"),
    "surge_fresh": ("surge", "fresh"),
    "surge_D900": ("surge", "900"),
}
MONTH = "month"
SEED0 = 20_000  # test seeds: never used in training (10 000 … selection, ≥ 2^20 training days)
BOUND_RULE = "spt_rescue_defer_exp"  # the rule the relaxed worlds play (the headroom map's)
BOUNDS = ("all_high", "no_delay", "srpt")
METRICS = ("mean_wait_min", "miss_pct")
# The best rule's keys (gpu_sched_env.core.criteria.best_rule): the lowest mean miss %, then the lowest mean wait
RULE_KEYS = ("miss_pct", "mean_wait_min")
POLICY = "__policy__"  # the evaluated policy's label inside the tables (a rule name may be evaluated too)


@dataclass(frozen=True)
class Protocol:
    """What is played: seeds per regime, regimes, month replications (0: no month), native JAX days."""

    name: str
    seeds: int
    regimes: tuple[str, ...]
    month_reps: int
    jax_days: int

    def check(self) -> Protocol:
        """Raise ConfigError naming the first bad field."""
        for r in self.regimes:
            if r not in REGIMES:
                raise ConfigError(f"regime = {r!r} is not known; allowed: {', '.join(REGIMES)}")
        if self.seeds < 2:
            raise ConfigError(f"seeds = {self.seeds}: need at least 2 for confidence intervals and paired tests")
        if self.month_reps == 1 or self.month_reps < 0:
            raise ConfigError(f"month_reps = {self.month_reps}: 0 (no month) or at least 2 replications")
        if self.jax_days == 1 or self.jax_days < 0:
            raise ConfigError(f"jax_days = {self.jax_days}: 0 (no JAX judging) or at least 2 days")
        if not self.regimes and not self.month_reps:
            raise ConfigError("no regime and no month: nothing to evaluate")
        return self

    @property
    def scopes(self) -> tuple[str, ...]:
        """The regimes, then the month when it is played."""
        return self.regimes + ((MONTH,) if self.month_reps else ())

    def describe(self) -> dict[str, Any]:
        """JSON-ready (report.json's ``protocol``)."""
        from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS

        return {
            **asdict(self),
            "regimes": {r: {"day": REGIMES[r][0], "stock": REGIMES[r][1]} for r in self.regimes},
            "seed0": SEED0,
            "month": "30 days of the month mix (4 hectic, 3 surge, 18 normal, 5 quiet), fresh stock, per replication",
            "deferring_rules": list(EXTENSIONS),
            "bound_rule": BOUND_RULE,
            "bounds": list(BOUNDS),
            "ci": "95 % Student t interval over the units (days; month: replications)",
            "tests": "paired t and Wilcoxon signed-rank, policy − best rule, Holm over every scope × metric",
        }


STANDARD = Protocol("standard", seeds=100, regimes=tuple(REGIMES), month_reps=10, jax_days=1000)
# --quick: one regime, 5 seeds, no month, 64 JAX days (the JAX compile dominates a JAX policy's look)
QUICK = Protocol("quick", seeds=5, regimes=("hectic_fresh",), month_reps=0, jax_days=64)


def _fanout(workers: int) -> dict[str, Any]:
    return {"executor": "process" if workers > 1 else "serial", "workers": workers, "progress": False}


def _srpt_row(day: str, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    """The SRPT bound's row for one day (top-level: picklable)."""
    from gpu_sched_env.cgrsp.bounds import srpt_wait_bound
    from gpu_sched_env.cgrsp.params import make_params

    n = make_params(day, **params).n_jobs
    wait = srpt_wait_bound(day, seed, **params)
    return {
        "policy": "srpt",
        "day": day,
        "seed": seed,
        "n_jobs": n,
        "completed": n,
        "mean_wait_min": wait,
        "miss_pct": 0.0,
    }


COLS = ["policy", "day", "seed", "n_jobs", "completed", *METRICS]
# (day, parameters, seeds) -> the rules' and bounds' rows: policies evaluated in one process share them
_REFERENCE: dict[tuple[str, str, tuple[int, ...]], pd.DataFrame] = {}
# What decides a reference day's rows: the simulator and the rules, the bounds, and this module
# (which rules, which bounds, the SRPT row). Any change to them gives new keys (never a stale row).
REFERENCE_SOURCES = (*SIM_SOURCES, "gpu_sched_env/cgrsp/bounds.py", "agents/evaluate/protocol.py")


# What decides the days stored in --out's days/ besides the policy itself: the simulator, the env,
# the rules and bounds, the month, the learners' loading and this layer's playing of them.
DAYS_SOURCES = (
    *REFERENCE_SOURCES,
    "gpu_sched_env/cgrsp/**/*.py",
    "gpu_sched_env/core/*.py",
    "agents/heuristics/**/*.py",
    "agents/rl/envs.py",
    "agents/rl/month.py",
    "agents/rl/registry.py",
    "agents/rl/policies.py",
    "agents/rl/masked_dqn.py",
    "agents/rl/ppo_jax/*.py",
    "agents/evaluate/policy.py",
)


def days_key(pol: Policy, protocol: Protocol) -> dict[str, Any]:
    """What decides a policy's stored days (``days/key.json``): a rerun reuses them only when all of it is equal.

    The policy (:meth:`Policy.describe` but its label), its fingerprint (env config; the model's bytes, or a
    ``module:attr`` object's modules' bytes), the protocol, the package version and the hash of
    :data:`DAYS_SOURCES` (:func:`gpu_sched_env.core.store.code_version`).
    """
    return json.loads(
        json.dumps(
            {
                "policy": {k: v for k, v in pol.describe().items() if k != "label"},  # a label decides no day
                "fingerprint": pol.fingerprint(),
                "protocol": asdict(protocol),
                "package": package_version(),
                "code": code_version(DAYS_SOURCES),
            },
            default=str,
        )
    )


KEY_PARTS = {  # a key's parts, as a reason for recomputing
    "policy": "another policy",
    "fingerprint": "another model, env config or policy code",
    "protocol": "another protocol",
    "package": "another package version",
    "code": "another code version of the simulator, rules or evaluate",
}


def key_changes(old: Any, new: dict[str, Any]) -> list[str]:
    """Why stored days of key ``old`` are not those of key ``new`` (empty: they are)."""
    if not isinstance(old, dict):
        return ["an unreadable key"]
    if "code" not in old:
        return ["an earlier version of gpu-sched evaluate (a key without the code version)"]
    why = [words for part, words in KEY_PARTS.items() if old.get(part) != new.get(part)]
    if not why and old != new:
        why = ["another key"]
    return why


def reference_store() -> CellStore | None:
    """The cross-run store of reference days, in the user's cache (None when ``$GPU_SCHED_REFERENCE_CACHE=0``).

    The rules and bounds are deterministic given a day, its parameters and a seed, so every
    ``gpu-sched evaluate`` on this machine shares their days: a policy's full protocol plays
    only the policy's own days once the rules' are stored. A cell is one seed's 13 rows, keyed by
    the day, the parameters, the seed, the policies, NumPy's version (its random streams) and the
    hash of :data:`REFERENCE_SOURCES`.
    """
    return reference_cache("reference", REFERENCE_SOURCES)


def _reference_names() -> list[str]:
    """The reference rows' policies, in their order: the deferring rules, then the bounds."""
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS

    return [*EXTENSIONS, *BOUNDS]


def _reference_cell(day: str, params_json: str, seed: int) -> dict[str, Any]:
    import numpy as np

    names = _reference_names()
    return {"day": day, "params": params_json, "seed": int(seed), "policies": names, "numpy": np.__version__}


def _compute_reference(day: str, params: dict[str, Any], seeds: list[int], workers: int) -> pd.DataFrame:
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
    from gpu_sched_env.cgrsp.batch import run_grid
    from gpu_sched_env.cgrsp.bounds import relaxed_params
    from gpu_sched_env.core.fanout import map_cells

    fan = _fanout(workers)
    frames = [run_grid(list(EXTENSIONS), seeds, day=day, params=params, **fan)]
    for kind in ("all_high", "no_delay"):
        relaxed = relaxed_params(kind, day, **params)
        frames.append(run_grid([BOUND_RULE], seeds, day=day, params=relaxed, **fan).assign(policy=kind))
    cells = [{"day": day, "seed": int(s), "params": params} for s in seeds]
    frames.append(pd.DataFrame(map_cells(_srpt_row, cells, **fan)))
    return pd.concat([f[COLS] for f in frames], ignore_index=True)


def reference_rows(day: str, params: dict[str, Any], seeds: list[int], workers: int) -> pd.DataFrame:
    """Per-seed rows of the deferring rules and the bounds on ``day`` (memoised per process, stored across runs).

    Seeds found in :func:`reference_store` are read from it; the others are simulated and stored.
    """
    params_json = json.dumps(params, sort_keys=True, default=str)
    key = (day, params_json, tuple(int(s) for s in seeds))
    if key in _REFERENCE:
        return _REFERENCE[key]
    cells = {s: _reference_cell(day, params_json, s) for s in key[2]}
    rows = stored_rows(reference_store(), cells, lambda todo: _compute_reference(day, params, todo, workers), "seed")
    rows = rows[COLS].astype({"seed": int})
    _REFERENCE[key] = in_grid_order(rows, _reference_names(), key[2])  # as computed: policy-major
    return _REFERENCE[key]


def day_rows(pol: Policy, day: str, stock: dict[str, Any], seeds: list[int], workers: int) -> pd.DataFrame:
    """Per-seed rows of the policy, the deferring rules and the bounds on ``day`` (``policy`` … ``miss_pct``)."""
    from gpu_sched_env.cgrsp.batch import run_grid

    params = pol.params(stock)
    ref = reference_rows(day, params, seeds, workers)
    if pol.kind == "rule" and pol.spec in set(ref.policy):  # a deferring rule: the days it just played
        own = ref[ref.policy == pol.spec]
    elif pol.kind == "rule":
        own = run_grid([pol.spec], seeds, day=day, params=params, **_fanout(workers))
    else:
        own = learned_days(pol, day, stock, seeds, workers)
    return pd.concat([own[COLS].assign(policy=POLICY), ref], ignore_index=True)


def scope_rows(pol: Policy, scope: str, protocol: Protocol, workers: int) -> pd.DataFrame:
    """Every row of one scope (a regime, or the month with ``rep`` and ``day_index``)."""
    if scope != MONTH:
        ((day, stock, seeds),) = _plan(scope, protocol)
        return day_rows(pol, day, stock, seeds, workers).assign(scope=scope)
    from gpu_sched_agents.rl.month import month_days

    where = month_days(range(protocol.month_reps)).set_index("seed")[["rep", "day_index"]]
    parts = [
        day_rows(pol, day, stock, seeds, workers).join(where, on="seed") for day, stock, seeds in _plan(MONTH, protocol)
    ]
    return pd.concat(parts, ignore_index=True).assign(scope=MONTH)


def _plan(scope: str, protocol: Protocol) -> list[tuple[str, dict[str, Any], list[int]]]:
    """``(day, stock, seeds)`` of each block of days a scope plays."""
    if scope != MONTH:
        day, dwell = REGIMES[scope]
        return [(day, stock_params(dwell), list(range(SEED0, SEED0 + protocol.seeds)))]
    from gpu_sched_agents.rl.month import month_days

    plan = month_days(range(protocol.month_reps))
    return [(str(day), {}, g.seed.tolist()) for day, g in plan.groupby("day", sort=False)]


def remember(pol: Policy, scope: str, rows: pd.DataFrame, protocol: Protocol) -> None:
    """Put the rules' and bounds' rows of a stored scope into the memo (the next policy reuses them)."""
    for day, stock, seeds in _plan(scope, protocol):
        key = (day, json.dumps(pol.params(stock), sort_keys=True, default=str), tuple(int(s) for s in seeds))
        ref = rows[(rows.day == day) & (rows.policy != POLICY) & rows.seed.isin(seeds)]
        _REFERENCE.setdefault(key, ref[COLS].reset_index(drop=True))


def run_scopes(
    pol: Policy, protocol: Protocol, workers: int, parts: Path | None = None, log: Callable[[str], None] = print
) -> pd.DataFrame:
    """Every scope's rows; with ``parts`` each finished scope is stored there and reused by a rerun."""
    frames = []
    for scope in protocol.scopes:
        path = None if parts is None else parts / f"{scope}.csv"
        if path is not None and path.is_file():
            frames.append(pd.read_csv(path))
            remember(pol, scope, frames[-1], protocol)
            log(f"{scope}: reused {path}")
            continue
        t0 = time.perf_counter()
        rows = scope_rows(pol, scope, protocol, workers)
        if path is not None:
            atomic_write_table(path, rows)
        frames.append(rows)
        log(f"{scope}: {rows.policy.eq(POLICY).sum()} days of the policy, {time.perf_counter() - t0:.0f} s")
    return pd.concat(frames, ignore_index=True)


def units(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per scope × policy × unit (a day; the month: a replication, job-weighted): the metrics."""
    from gpu_sched_agents.rl.month import month_totals

    out = []
    for scope, g in rows.groupby("scope", sort=False):
        if scope == MONTH:
            u = month_totals(g).rename(columns={"rep": "unit"})
        else:
            u = g.rename(columns={"seed": "unit"})
        out.append(u[["policy", "unit", *METRICS]].assign(scope=scope))
    return pd.concat(out, ignore_index=True)


def objective(wait: float, miss: float) -> float:
    """Mean wait plus a miss priced as one job-hour [min]: the leaderboard's score per scope (lower is better)."""
    return deadline_objective(wait, miss)


__all__ = [
    "BOUNDS",
    "MONTH",
    "POLICY",
    "QUICK",
    "REGIMES",
    "STANDARD",
    "Protocol",
    "DAYS_SOURCES",
    "RULE_KEYS",
    "days_key",
    "key_changes",
    "objective",
    "run_scopes",
    "scope_rows",
    "units",
]
