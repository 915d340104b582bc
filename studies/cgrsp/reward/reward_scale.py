r"""How large each part of the JAX env's step reward is over the day, under the strongest rule.

A learner's value target is its reward's sum; a term that is large and moves with the time of day
(a shaping potential's (1 − γ)·Φ with γ < 1, say) can drown the terms that rank the actions. This
plays ``spt_rescue_defer_exp`` through the JAX env of a regime (the joint design,
``experiment=ppo_jax_joint``, plus ``--overrides``, e.g. an ablation row's) on ``--days`` native
selection days and splits each step's reward into the shaping term and the rest (the weighted raw
parts), by the hour of the day in which the step starts: mean and standard deviation of each, per
step.

    python -m studies reward --part scale --regime hectic_fresh --days 4 \
        --overrides env.reward=occupancy env.shaping=backlog env.shaping_gamma=0.95
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import pandas as pd

BLOCK_H = 1.0  # [h] the table's blocks of the day


def step_parts(env: Any, keys: Any) -> pd.DataFrame:
    """Per step of the rule on the days of ``keys``: ``t_h`` (its start [h]), ``shaping``, ``rest``.

    ``shaping`` is the env's own :func:`~gpu_sched_env.cgrsp.jax.shaping.shaping_term` of the step,
    ``rest`` the reward less it (the weighted raw parts); the days side by side
    (:func:`studies.cgrsp.jax_steps.play_steps`).
    """
    import jax.numpy as jnp

    from gpu_sched_env.cgrsp.jax.rules import RULES
    from gpu_sched_env.cgrsp.jax.shaping import shaping_term
    from studies.cgrsp.jax_steps import play_steps

    p, rule = env.default_params, RULES["spt_rescue_defer_exp"]

    def move(s, k):
        _, s1, r, _, _ = env.step(k, s, rule.act(env, s, p), p)
        shaping = shaping_term(env.cfg.shaping, env.spec, p, s, s1)
        return s1, jnp.stack([s.t / 3600.0, shaping, r - shaping]), ~s.done

    rows, live = play_steps(env, move, keys, 3, "spt_rescue_defer_exp's days (reward-scale)")
    return pd.DataFrame(rows[live], columns=["t_h", "shaping", "rest"])


def table(steps: pd.DataFrame) -> pd.DataFrame:
    """Per hour of the day: steps, and the mean and std per step of the shaping term and the rest."""
    block = (steps.t_h // BLOCK_H).astype(int)
    g = steps.groupby(block)
    return pd.DataFrame(
        {
            "hours": [f"{int(b * BLOCK_H)}-{int((b + 1) * BLOCK_H)}" for b in g.groups],
            "steps": g.size().to_numpy(),
            "shaping_mean": g.shaping.mean().to_numpy(),
            "shaping_std": g.shaping.std(ddof=0).to_numpy(),
            "rest_mean": g.rest.mean().to_numpy(),
            "rest_std": g.rest.std(ddof=0).to_numpy(),
        }
    )


def run(regime: str, overrides: Sequence[str], days: int) -> pd.DataFrame:
    """The :func:`table` of the rule's ``days`` selection days in ``regime`` under ``overrides``."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, test_keys
    from studies.cgrsp.versus_rule.versus_rule_jax import joint_env

    env = joint_env(regime, overrides, "the rule plays the joint design's actions")
    return table(step_parts(env, test_keys(days, SELECT_SEED0)))


def main(argv: Sequence[str] | None = None) -> int:
    from studies.cgrsp.learning.parity import REGIMES

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--regime", default="hectic_fresh", choices=list(REGIMES))
    ap.add_argument("--overrides", nargs="*", default=[], help="Hydra overrides of experiment=ppo_jax_joint")
    ap.add_argument("--days", type=int, default=4, help="selection days (keys 10 000 …)")
    args = ap.parse_args(argv)
    if args.days < 1:
        ap.error(f"--days = {args.days}: need at least 1")
    t = run(args.regime, args.overrides, args.days)
    setting = " ".join(args.overrides) or "the joint setting"
    print(f"spt_rescue_defer_exp on {args.regime} ({setting}), {args.days} days; per step, by hour of the day:")
    print("the shaping term and the rest of the reward (its weighted raw parts), mean and std")
    print(t.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0
