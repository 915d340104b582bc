r"""Which jobs an ``algo=ppo_jax`` actor misses that the rule does not, and how late it dispatched them.

The ablation's judges count misses per day; this names them. The exported actor and the rule
(``spt_rescue_defer_exp`` unless ``--rule``) play the same CGRSP-v0 days of a regime (simulator run
seeds from ``--first-seed``: 10 000 …, the selection seeds, unless told otherwise), and every job
one of them misses is listed with both policies' *slack at dispatch* (deadline − dispatch [min];
negative: dispatched after its deadline had passed), the stock status at the learner's dispatch,
its provisioning delay and run time. A second table sets the two policies' slack at dispatch of
the tight jobs side by side (the smallest quantiles: how close to its deadline a policy lets a
job wait before it starts it).

    python -m studies versus-rule --part misses \
        runs/ablation_hold6m/hectic_D900_hold_excess1_time_aware_b6000000/seed6.npz \
        --regime hectic_D900 --overrides env.action_mode=joint_hold +env.reward_weights.excess_run=1.0 algo.tau_s=90 \
        --days 100 --first-seed 20000

Measured so (docs/results_ablation.md): the held-deferral learners' few misses under D = 900 s are tight
jobs of a morning burst started with 2–3 min of slack or after their deadline, while the rule
rescues the same jobs with about 11 min to spare.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

QUANTILES = (0.001, 0.01, 0.05, 0.5)
MISSED_COLUMNS = (
    "seed",
    "job_id",
    "submit_h",
    "complexity",
    "tight",
    "learned_met",
    "rule_met",
    "learned_slack_min",
    "rule_slack_min",
    "learned_stock",
    "learned_delay_s",
    "learned_run_s",
    "learned_tardiness_s",
)


def slack_min(jobs: pd.DataFrame) -> pd.Series:
    """Per job: deadline − dispatch [min] (negative: dispatched after its deadline)."""
    return (jobs.deadline - jobs.dispatch) / 60.0


def missed(learned: pd.DataFrame, rule: pd.DataFrame) -> pd.DataFrame:
    """The jobs either policy missed, one row each (:data:`MISSED_COLUMNS`), the learner's misses first.

    ``learned`` and ``rule``: :attr:`SimResult.jobs` frames of the same days with a ``seed`` column.
    """
    both = learned.merge(rule, on=("seed", "job_id"), suffixes=("", "_r"))
    bad = both[~both.met | ~both.met_r]
    out = pd.DataFrame(
        {
            "seed": bad.seed,
            "job_id": bad.job_id,
            "submit_h": bad.submit / 3600.0,
            "complexity": bad.complexity,
            "tight": bad.tight,
            "learned_met": bad.met,
            "rule_met": bad.met_r,
            "learned_slack_min": slack_min(bad),
            "rule_slack_min": (bad.deadline_r - bad.dispatch_r) / 60.0,
            "learned_stock": bad.stock_at_dispatch,
            "learned_delay_s": bad.provisioning_delay,
            "learned_run_s": bad.runtime,
            "learned_tardiness_s": bad.tardiness,
        }
    )
    return out.sort_values(["learned_met", "seed", "job_id"]).reset_index(drop=True)


def slack_quantiles(learned: pd.DataFrame, rule: pd.DataFrame) -> pd.DataFrame:
    """The tight jobs' slack at dispatch [min] per policy: :data:`QUANTILES`, starts after the deadline, misses."""
    rows = []
    for name, jobs in (("learned", learned), ("rule", rule)):
        tight = jobs[jobs.tight]
        s = slack_min(tight)
        rows.append(
            {
                "policy": name,
                "tight_jobs": len(tight),
                **{f"q{100 * q:g}%": s.quantile(q) for q in QUANTILES},
                "after_deadline": int((s < 0).sum()),
                "missed": int((~jobs.met).sum()),
            }
        )
    return pd.DataFrame(rows)


def _learned_day(actor: str, config: Any, seed: int) -> pd.DataFrame:
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_env.cgrsp.env import CGRSPEnv
    from gpu_sched_env.cgrsp.evaluation import run_episode

    policy, env = NumpyPolicy.load(actor), CGRSPEnv(config)
    policy.bind(env)
    run_episode(policy, env, seed)
    jobs = env.sim.result().jobs.assign(seed=seed)
    env.close()
    return jobs


def _rule_day(rule: str, config: Any, seed: int) -> pd.DataFrame:
    from gpu_sched_env.cgrsp import simulate

    return simulate(rule, day=config.day, seed=seed, **dict(config.params)).jobs.assign(seed=seed)


def run(
    actor: Path, regime: str, overrides: Sequence[str], days: int, first_seed: int, rule: str, workers: int = 1
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(learned jobs, rule jobs)``: ``days`` CGRSP-v0 days from run seed ``first_seed`` in ``regime``.

    The actor's design is ``overrides`` on the ablation's base (``experiment=ppo_jax_joint``).
    """
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.core.fanout import map_cells
    from studies.cgrsp.learning.parity import regime_config

    config = env_config(regime_config(regime, 1, extra=overrides))
    seeds = range(first_seed, first_seed + days)
    executor = "process" if workers > 1 else "serial"
    learned = map_cells(
        _learned_day, [{"actor": str(actor), "config": config, "seed": s} for s in seeds], executor=executor,
        workers=workers, progress=False,
    )  # fmt: skip
    ruled = map_cells(
        _rule_day, [{"rule": rule, "config": config, "seed": s} for s in seeds], executor=executor, workers=workers,
        progress=False,
    )  # fmt: skip
    return pd.concat(learned, ignore_index=True), pd.concat(ruled, ignore_index=True)


def main(argv: Sequence[str] | None = None) -> int:
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
    from gpu_sched_agents.rl.envs import SELECTION_SEEDS
    from studies.cgrsp.jax_steps import actor_arguments, check_actor_arguments
    from studies.cgrsp.learning.parity import JAX_RULE

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    actor_arguments(ap, days=100)
    ap.add_argument("--first-seed", type=int, default=SELECTION_SEEDS.start, help="the first CGRSP-v0 run seed")
    ap.add_argument("--rule", default=JAX_RULE, choices=list(EXTENSIONS), help="the deferring rule to set beside it")
    ap.add_argument("--workers", type=int, default=1, help="processes for the days")
    ap.add_argument("--rows", type=int, default=30, help="missed jobs to list (the learner's first)")
    args = ap.parse_args(argv)
    check_actor_arguments(ap, args, min_days=1)
    if args.first_seed < 0:
        ap.error(f"--first-seed = {args.first_seed}: a simulator run seed is ≥ 0")
    if args.workers < 1 or args.rows < 0:
        ap.error(f"--workers = {args.workers}, --rows = {args.rows}: need workers ≥ 1 and rows ≥ 0")
    learned, rule = run(args.actor, args.regime, args.overrides, args.days, args.first_seed, args.rule, args.workers)
    fmt = lambda x: f"{x:.2f}"  # noqa: E731
    print(f"{args.actor} against {args.rule} on {args.regime}, CGRSP-v0 seeds {args.first_seed}…"
          f"{args.first_seed + args.days - 1}")  # fmt: skip
    print("\nthe tight jobs' slack at dispatch [min] (deadline − dispatch; quantiles), starts after it, misses")
    print(slack_quantiles(learned, rule).to_string(index=False, float_format=fmt))
    m = missed(learned, rule)
    n_l, n_r = int((~m.learned_met).sum()), int((~m.rule_met).sum())
    print(f"\nthe jobs either policy missed ({n_l} the learner's, {n_r} the rule's; slack [min], the learner's stock")
    print("status, provisioning delay, run time and tardiness [s])")
    print(m.head(args.rows).to_string(index=False, float_format=fmt) if len(m) else "none")
    return 0
