r"""How far apart the regimes' reward scales are: why one running scale starves the small ones.

A generalist trains one network on days of several regimes (``day=mixed``). PPO scales every
reward by one running standard deviation of the discounted return (``train.normalize_reward``) and
normalises the advantages per minibatch, so a regime's share of each gradient is roughly its
returns' spread against the pooled spread. This plays ``spt_rescue_defer_exp`` through the JAX env
of each judged regime (``experiment=ppo_jax_joint`` plus ``--overrides``; by default the
from-scratch generalist's held-deferral design) on ``--days`` native selection days, discounts
each day's rewards as the learner does (γ^(Δt/τ) per step, ``--gamma`` per ``--tau-s`` seconds)
and reports, per regime: the decisions per day, the per-step reward's mean and std, the
discounted return's std, and that std over the pooled one (the regimes' steps together, each
regime weighted by its ``--weights``, default equal): what ``algo.reward_norm=global`` scales each
regime's returns to, against 1 under ``algo.reward_norm=regime``.

    python -m studies reward --part regimes --days 8
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

GENERALIST_DESIGN = ("env=joint_heads", "env.action_mode=joint_hold", "+env.reward_weights.excess_run=1.0")


def step_rewards(env: Any, keys: Any) -> list[np.ndarray]:
    """Per day of ``keys``: the rule's steps as rows ``(reward, Δt [s])`` in order (the days side by side)."""
    import jax.numpy as jnp

    from gpu_sched_env.cgrsp.jax.rules import RULES
    from studies.cgrsp.jax_steps import play_steps

    p, rule = env.default_params, RULES["spt_rescue_defer_exp"]

    def move(s, k):
        _, s1, r, _, info = env.step(k, s, rule.act(env, s, p), p)
        return s1, jnp.stack([r, info["dt"]]), ~s.done

    rows, live = play_steps(env, move, keys, 2, "spt_rescue_defer_exp's days (regime-scale)")
    return [rows[live[:, d], d].astype(np.float64) for d in range(rows.shape[1])]


def discounted_returns(reward: np.ndarray, dt: np.ndarray, gamma: float, tau_s: float | None) -> np.ndarray:
    """G_t = r_t + g_t·G_{t+1} to the day's end, g_t the learner's (γ^(Δt_t/τ); γ per step when ``tau_s`` is None)."""
    from gpu_sched_agents.rl.ppo_jax.returns import step_discounts

    g = np.full_like(reward, gamma) if tau_s is None else np.asarray(step_discounts(gamma, dt, tau_s), np.float64)
    out, acc = np.empty_like(reward), 0.0
    for i in range(len(reward) - 1, -1, -1):
        acc = reward[i] + g[i] * acc
        out[i] = acc
    return out


def table(
    per_regime: dict[str, list[np.ndarray]], gamma: float, tau_s: float | None, weights: Sequence[float]
) -> pd.DataFrame:
    """One row per regime: decisions per day, the step reward's mean and std, the return's std and its share."""
    rows, returns = [], []
    for name, days in per_regime.items():
        r = np.concatenate([d[:, 0] for d in days])
        g = np.concatenate([discounted_returns(d[:, 0], d[:, 1], gamma, tau_s) for d in days])
        returns.append(g)
        rows.append(
            {
                "regime": name,
                "steps_per_day": len(r) / len(days),
                "reward_mean": r.mean(),
                "reward_std": r.std(),
                "return_std": g.std(),
            }
        )
    # the pooled spread: each regime's returns weighted by its weight over its step count (a mixed batch's share)
    w = np.concatenate([np.full(len(g), wt / len(g)) for g, wt in zip(returns, weights, strict=True)])
    pooled = np.concatenate(returns)
    mean = np.average(pooled, weights=w)
    pooled_std = float(np.sqrt(np.average((pooled - mean) ** 2, weights=w)))
    out = pd.DataFrame(rows)
    out["return_std_over_pooled"] = out.return_std / pooled_std
    return out


def run(
    days: int, overrides: Sequence[str], gamma: float, tau_s: float | None, weights: Sequence[float]
) -> pd.DataFrame:
    """The :func:`table` of the rule's ``days`` selection days in each judged regime under ``overrides``."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, test_keys
    from studies.cgrsp.learning.parity import REGIMES
    from studies.cgrsp.versus_rule.versus_rule_jax import joint_env

    keys = test_keys(days, SELECT_SEED0)
    per_regime = {
        regime: step_rewards(joint_env(regime, overrides, "the rule plays the joint pairs", holds=True), keys)
        for regime in REGIMES
    }
    return table(per_regime, gamma, tau_s, weights)


def main(argv: Sequence[str] | None = None) -> int:
    from studies.cgrsp.learning.parity import REGIMES

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=8, help="selection days per regime (keys 10 000 …)")
    ap.add_argument(
        "--overrides", nargs="*", default=list(GENERALIST_DESIGN), help="Hydra overrides of experiment=ppo_jax_joint"
    )
    ap.add_argument("--gamma", type=float, default=0.95, help="the discount per --tau-s seconds (or per step)")
    ap.add_argument("--tau-s", type=float, default=90.0, help="seconds per factor γ; 0: γ per decision")
    ap.add_argument("--weights", type=float, nargs="*", default=None, help=f"one per regime ({', '.join(REGIMES)})")
    args = ap.parse_args(argv)
    if args.days < 1:
        ap.error(f"--days = {args.days}: need at least 1")
    if not 0.0 < args.gamma <= 1.0:
        ap.error(f"--gamma = {args.gamma}: allowed (0, 1]")
    if args.tau_s < 0:
        ap.error(f"--tau-s = {args.tau_s}: allowed 0 (per decision) or a positive number of seconds")
    weights = args.weights or [1.0] * len(REGIMES)
    if len(weights) != len(REGIMES) or min(weights) <= 0:
        ap.error(f"--weights = {args.weights}: give {len(REGIMES)} positive weights, one per {', '.join(REGIMES)}")
    tau = args.tau_s or None
    t = run(args.days, args.overrides, args.gamma, tau, weights)
    clock = f"γ {args.gamma} per {args.tau_s:g} s" if tau else f"γ {args.gamma} per decision"
    print(f"spt_rescue_defer_exp, {args.days} selection days per regime ({' '.join(args.overrides)}); {clock}:")
    print("the step reward and the discounted return per regime; their std over the pooled std (one running scale)")
    print(t.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    return 0
