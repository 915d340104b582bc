"""What a learner's action design costs a rule: the rule through the env's design vs ``simulate()``.

A learned policy can only do what its env's action design lets it express. This drives a
rule (default: the strongest for the stock model) through ``CGRSP-v0`` under a run's design
and under variants that lift one restriction at a time, on the same held-out days:

* ``design``: the run's own settings (e.g. ``env=markov``: class-head window, ``hold=stock``);
* ``hold=event``: a slot left idle is offered again at the next decision point;
* ``joint``: the same window, but every (window job, idle slot) pair is one action (no slot
  offers: the rule's own job-to-slot placement is expressible);
* ``window=16 by order``: the first 16 jobs in the canonical order instead of class heads;
* ``simulate``: the rule in the simulator, every job and slot open (the number in the tables).

The rule is driven by :class:`~gpu_sched_agents.heuristics.cgrsp_agents.HeuristicAgent`; a
planned job beyond the window is replaced by the window's job of the same complexity class
in a class-head window (``fallback="same_class"``), else by the window's first job.

The gap between ``design`` and ``simulate`` is the handicap a learner in that design starts
with: beating the rule's table number needs a policy better than the rule by that much
within the design.

    python -m studies versus-rule --part design-cost runs/exp/markov_seed0 --seeds 5
    python -m studies versus-rule --part design-cost --env markov --stock 900 --seeds 5   # no run needed
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from gpu_sched_agents.heuristics.cgrsp import ALL_POLICY_NAMES
from gpu_sched_agents.heuristics.cgrsp.extensions import best_rule
from gpu_sched_agents.heuristics.cgrsp_agents import evaluate_heuristics
from gpu_sched_agents.rl.envs import TEST_SEED0, env_config
from gpu_sched_env.cgrsp.api import simulate
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.schemes import scheme_of
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.errors import ConfigError, check_choice
from studies.conf import CONF, composed_env


def composed(env: str, day: str) -> CGRSPEnvConfig:
    """The env config of ``python train.py env=ENV day=DAY``."""
    check_choice("--env", env, sorted(p.stem for p in (CONF / "env").glob("*.yaml")))
    return composed_env(day, f"env={env}")


def fallback_for(config: CGRSPEnvConfig) -> str:
    """How the rule's agent stands in for a planned job beyond the window: its class's head in a class-head window."""
    return "same_class" if config.window_by == "class" else "substitute"


def variants(config: CGRSPEnvConfig) -> dict[str, CGRSPEnvConfig | None]:
    """The design and its variants (None: ``simulate``)."""
    out: dict[str, CGRSPEnvConfig | None] = {"design": config}
    out.update(scheme_of(config.action_mode).simpler_designs(config))  # the scheme knows its simpler designs
    if config.window_by == "class" or config.window < 16:
        out["window=16 by order"] = config.replace(window=16, window_by="order", hold="event")
    out["simulate"] = None
    return out


def design_cost(config: CGRSPEnvConfig, seeds: list[int], rule: str | None = None) -> pd.DataFrame:
    """One row per variant: the rule's mean wait and miss on ``seeds``."""
    rule = check_choice("rule", rule or best_rule(config.sim_params()), ALL_POLICY_NAMES)
    rows = []
    for name, cfg in variants(config).items():
        if cfg is None:
            runs = pd.DataFrame([simulate(rule, config.day, seed=s, **config.params).summary() for s in seeds])
        else:
            runs = evaluate_heuristics([rule], cfg, seeds, fallback=fallback_for(cfg))
        rows.append(
            {
                "variant": name,
                "rule": rule,
                "mean_wait_min": float(runs.mean_wait_min.mean()),
                "miss_pct": float(runs.miss_pct.mean()),
            }
        )
    df = pd.DataFrame(rows)
    ref = df.set_index("variant").loc["simulate", "mean_wait_min"]
    return df.assign(vs_simulate_min=df.mean_wait_min - ref)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path, nargs="?", default=None, help="a training run directory (its env settings)")
    ap.add_argument("--env", default=None, help="instead of a run: an env design of conf/env (default, markov)")
    ap.add_argument("--day", default="hectic")
    ap.add_argument("--stock", default=None, help="with --env: 'fresh' or a mean dwell in s (default fresh)")
    ap.add_argument("--rule", default=None, help="the rule (default: the strongest for the stock model)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed0", type=int, default=TEST_SEED0)
    a = ap.parse_args(argv)
    try:
        if a.run_dir is not None:
            if not (a.run_dir / "config.yaml").exists():
                ap.error(f"{a.run_dir}: no config.yaml (a run directory written by train.py)")
            config = env_config(OmegaConf.load(a.run_dir / "config.yaml"))
        else:
            if a.env is None:
                ap.error("give a run directory or --env NAME")
            config = composed(a.env, a.day).replace(**(stock_params(a.stock) if a.stock else {}))
        df = design_cost(config, list(range(a.seed0, a.seed0 + a.seeds)), a.rule)
    except ConfigError as e:
        ap.error(str(e))
    print(
        f"rule {df.rule.iloc[0]} on {a.seeds} seeds from {a.seed0}; design: window {config.window} by "
        f"{config.window_by}, "
        f"{config.action_mode} mode, hold={config.hold}, stock {config.params.get('stock_process', 'fresh')}"
    )
    print(df.drop(columns="rule").round(2).to_string(index=False))
    return 0
