"""The verdict from the protocol's rows: CIs per policy, the paired tests against the best rule, Holm.

:func:`judge` returns report.json's ``scopes``; :func:`judge_jax` its ``jax`` section.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.evaluate.protocol import (
    BOUNDS,
    METRICS,
    MONTH,
    POLICY,
    REGIMES,
    RULE_KEYS,
    Protocol,
    objective,
)
from gpu_sched_env.core import criteria
from gpu_sched_env.core.stats import ALPHA, compare_pairs, holm, mean_ci


def _stats(g: pd.DataFrame) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in METRICS:
        ci = mean_ci(g[m].to_numpy())
        out[m], out[f"{m}_ci"] = ci.mean, ci.half_width
    out["objective_min"] = objective(out["mean_wait_min"], out["miss_pct"])
    return out


def verdict(wait: dict[str, float], miss: dict[str, float]) -> str:
    """:func:`gpu_sched_env.core.criteria.verdict` on a scope's ``vs_best_rule`` entries: wait, the miss as the guard.

    ``better``: wait lower (Holm p < ALPHA) and miss not higher; ``worse``: wait or miss higher (Holm p < ALPHA).
    """
    return criteria.verdict(wait["diff"], wait["t_p_holm"], miss["diff"], miss["t_p_holm"])


def judge(u: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Per scope: the policy's, each rule's and each bound's means ± CI, the best rule, the paired tests."""
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS

    scopes: dict[str, dict[str, Any]] = {}
    values: dict[str, np.ndarray] = {}
    pairs: list[tuple[str, str]] = []
    keys: list[tuple[str, str]] = []
    for scope, g in u.groupby("scope", sort=False):
        by = dict(tuple(g.groupby("policy", sort=False)))
        means = g.groupby("policy")[list(METRICS)].mean()
        best = criteria.best_rule(means, [r for r in EXTENSIONS if r in means.index], RULE_KEYS)
        scopes[str(scope)] = {
            "unit": "replication" if scope == MONTH else "day",
            "n": int(len(by[POLICY])),
            **({"day": REGIMES[scope][0], "stock": REGIMES[scope][1]} if scope in REGIMES else {}),
            "policy": _stats(by[POLICY]),
            "best_rule": best,
            "rules": {r: _stats(by[r]) for r in EXTENSIONS if r in by},
            "bounds": {b: _stats(by[b]) for b in BOUNDS if b in by},
            "vs_best_rule": {},
        }
        mine, rule = by[POLICY].set_index("unit").sort_index(), by[best].set_index("unit").sort_index()
        common = mine.index.intersection(rule.index)
        for m in METRICS:
            a, b = f"{scope}|policy|{m}", f"{scope}|{best}|{m}"
            values[a], values[b] = mine.loc[common, m].to_numpy(float), rule.loc[common, m].to_numpy(float)
            pairs.append((a, b))
            keys.append((str(scope), m))
    for (scope, m), (a, b), r in zip(keys, pairs, compare_pairs(values, pairs, ALPHA)):
        ci = mean_ci(values[a] - values[b])
        scopes[scope]["vs_best_rule"][m] = {
            "policy": r["mean_a"],
            "rule": r["mean_b"],
            "diff": r["mean_diff"],
            "ci_low": ci.lo,
            "ci_high": ci.hi,
            "t_p": r["t_p"],
            "t_p_holm": r["t_p_holm"],
            "wilcoxon_p": r["w_p"],
            "wilcoxon_p_holm": r["w_p_holm"],
            "cohens_d": r["cohens_d"],
        }
    for s in scopes.values():
        w, x = s["vs_best_rule"]["mean_wait_min"], s["vs_best_rule"]["miss_pct"]
        s["verdict"] = verdict(w, x)
        s["at_parity"] = criteria.within(w["ci_high"], w["rule"], x["diff"], criteria.PARITY_MARGIN)
    return scopes


def judge_jax(pol: Any, protocol: Protocol) -> dict[str, dict[str, Any]]:
    """An exported ppo_jax policy against the JAX ``spt_rescue_defer_exp`` on ``jax_days`` native days per regime."""
    from gpu_sched_agents.evaluate.policy import env_for
    from gpu_sched_agents.rl.ppo_jax.jax_eval import learned_rule, paired_table, per_day, test_keys
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP
    from gpu_sched_env.cgrsp.stock import stock_params

    rule = "spt_rescue_defer_exp"
    out: dict[str, dict[str, Any]] = {}
    keys = test_keys(protocol.jax_days)
    for regime in protocol.regimes:
        day, dwell = REGIMES[regime]
        env = JaxCGRSP.from_config(env_for(pol, day, stock_params(dwell)), records=False)
        days = per_day(env, {"learned": learned_rule(env, pol.model), rule: RULES[rule]}, keys)
        t = paired_table(days, "learned", [rule]).set_index("metric")
        out[regime] = {
            "n": protocol.jax_days,
            "rule": rule,
            **{
                m: {
                    k: float(t.loc[m, c])
                    for k, c in (
                        ("policy", "learned"),
                        ("rule", "rule"),
                        ("diff", "diff"),
                        ("ci_low", "ci_low"),
                        ("ci_high", "ci_high"),
                        ("t_p", "t_p"),
                        ("wilcoxon_p", "wilcoxon_p"),
                    )
                }
                for m in METRICS
            },
        }
    ps = [out[r][m]["t_p"] for r in out for m in METRICS]
    _, adj = holm(ps, ALPHA)
    for (r, m), q in zip([(r, m) for r in out for m in METRICS], adj):
        out[r][m]["t_p_holm"] = float(q)
    return out


def score(scopes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The leaderboard's score: the policy's objective averaged over the scopes, and the best rules' beside it."""
    return {
        "objective_min": float(np.mean([s["policy"]["objective_min"] for s in scopes.values()])),
        "best_rule_objective_min": float(
            np.mean([s["rules"][s["best_rule"]]["objective_min"] for s in scopes.values()])
        ),
        "definition": "mean over the scopes of (mean wait + 60 min × miss % / 100): a miss priced as one job-hour",
    }


__all__ = ["judge", "judge_jax", "score", "verdict"]
