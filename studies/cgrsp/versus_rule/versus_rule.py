"""Where a learned policy loses to the strongest rule: *when* it dispatches, or *which* job.

A decision has two parts: dispatch or take the no-op (*when*: in ``slot`` mode, fill the
offered slot or leave it idle), and, when dispatching, which job (*which*; in ``joint`` mode,
which job–slot pair). This plays held-out days four ways,
every one on the same days (common random numbers):

* ``learned``: the trained policy (its two-level deterministic action);
* ``rule``: the rule alone (``--rule``, default the strongest, ``spt_rescue_defer_exp``),
  driven through the run's own action design (its window, slot offers and hold), which
  can cost the rule against ``simulate()``: ``python -m studies versus-rule --part design-cost`` measures that;
* ``rule_when``: dispatch exactly when the rule would (fill the offered slot; in ``joint``
  mode, dispatch anything); the job (pair) is the learned policy's likeliest dispatch (its
  *which*);
* ``rule_which``: dispatch exactly when the learned policy does; the job is the one the
  rule's base order (the rule without its deferral, e.g. ``spt_rescue``) puts on that slot
  (its *which*; beyond the window, the window's job of the same class); in ``joint`` mode the
  base rule's next pair.

If ``rule_when`` comes close to ``rule``, the learner's job choice is as good as the
rule's and its deferral is what costs; if ``rule_which`` does, the reverse. It also counts
the decisions where the two parts disagree. Needs a PPO run.

    python -m studies versus-rule runs/exp/markov_seed0 --seeds 10
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd
import torch as th
from omegaconf import OmegaConf

from gpu_sched_agents.heuristics.cgrsp.extensions import RULES, SUFFIXES, best_rule
from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_agents.rl.envs import TEST_SEED0, env_config
from gpu_sched_agents.rl.policies import factored_mode
from gpu_sched_agents.rl.registry import load_model
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.stats import paired_compare
from studies.cgrsp.versus_rule.design_cost import fallback_for

MODES = ("learned", "rule", "rule_when", "rule_which")


def base_of(rule: str) -> str:
    """The rule's base order: ``spt_rescue_defer_exp`` → ``spt_rescue``."""
    for sfx in SUFFIXES:
        tail = f"_defer_{sfx}"
        if rule.endswith(tail):
            return rule[: -len(tail)]
    raise ConfigError(f"rule = {rule!r} is not a deferring rule; allowed: {', '.join(sorted(RULES))}")


def _planned(agent: HeuristicAgent, env: CGRSPEnv) -> tuple[int, int] | None:
    """What ``agent``'s rule does now as a ``(job, slot)`` pair (None: the no-op).

    The action scheme decides (:meth:`~gpu_sched_env.cgrsp.actions.ActionScheme.rule_choice`):
    ``joint``: the agent's action (the first planned pair in the window); ``slot``: the job
    it puts on the offered slot (beyond the window too).
    """

    def act() -> tuple[int, int] | None:
        a = agent.action(env)
        return None if a == env.wait_action else env.decode(a)

    return env.actions.rule_choice(agent.plan(env), act)


def play(model: Any, env: CGRSPEnv, seed: int, mode: str, rule: str) -> dict[str, float]:
    """One day in ``mode``; the run's summary and the disagreement counts."""
    obs, _ = env.reset(seed=seed)
    policy, noop = model.policy, env.wait_action
    fb = fallback_for(env.cfg)
    full = HeuristicAgent(rule, fallback=fb).bind(env)
    base = HeuristicAgent(base_of(rule), fallback=fb).bind(env)
    n_choice = n_when = n_which = 0
    done = False
    while not done:
        mask = env.action_masks()
        if mode == "rule":
            a = full.action(env)
        else:
            with th.no_grad():
                ob, _ = policy.obs_to_tensor(obs)
                probs = policy.get_distribution(ob, action_masks=mask[None]).distribution.probs
            learned = int(factored_mode(probs)[0])
            a = learned
            if mask[:noop].any() and mask[noop]:  # a real choice: dispatch or leave idle
                n_choice += 1
                rule_job = _planned(full, env)
                base_job = _planned(base, env)
                n_when += (rule_job is None) != (learned == noop)
                if learned != noop and base_job is not None:
                    n_which += (
                        env.decode(learned) != base_job
                    )  # (job, slot) pairs: the slot is the offered one in slot mode
                likeliest = int(th.argmax(probs[0, :noop]))  # the learned which
                if mode == "rule_when":
                    a = noop if rule_job is None else likeliest
                elif mode == "rule_which" and learned != noop and base_job is not None:
                    a = base.action(env)  # the base rule's job for this slot (its class head beyond the window)
        obs, _, done, _, info = env.step(a)
    s = info["summary"]
    return {
        "mode": mode,
        "seed": seed,
        "miss_pct": s["miss_pct"],
        "mean_wait_min": s["mean_wait_min"],
        "decisions": n_choice,
        "when_disagree": n_when / max(n_choice, 1),
        "which_disagree": n_which / max(n_choice, 1),
    }


def diagnose(
    run_dir: Path, model_file: str, seeds: list[int], rule: str | None = None, modes: tuple[str, ...] = MODES
) -> pd.DataFrame:
    """One row per mode × seed."""
    cfg = OmegaConf.load(run_dir / "config.yaml")
    config = env_config(cfg)
    rule = check_choice("rule", rule or best_rule(config.sim_params()), tuple(RULES))
    base_of(rule)
    th.set_num_threads(int(cfg.train.get("torch_threads", 1)))
    model = load_model(cfg.algo.name, run_dir / model_file, device="cpu")
    if not hasattr(model.policy, "get_distribution"):
        raise ConfigError(
            f"{cfg.algo.name}: this diagnostic needs a policy-gradient model (ppo), not {type(model).__name__}"
        )
    env = CGRSPEnv(config)
    return pd.DataFrame([play(model, env, s, m, rule) for m in modes for s in seeds]).assign(rule=rule)


def versus_rule_tests(df: pd.DataFrame) -> pd.DataFrame:
    """Each mode against ``rule`` on the same seeds: mean difference of wait and miss, paired t and Wilcoxon p."""
    ref = df[df["mode"] == "rule"].set_index("seed")
    rows = []
    for mode, g in df[df["mode"] != "rule"].groupby("mode", sort=False):
        g = g.set_index("seed").loc[ref.index]
        for m in ("mean_wait_min", "miss_pct"):
            c = paired_compare(g[m], ref[m])
            rows.append(
                {"mode": mode, "metric": m, "diff_vs_rule": c.mean_diff, "t_p": c.t_p, "wilcoxon_p": c.w_p, "n": c.n}
            )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--model", default="best_model.zip")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed0", type=int, default=TEST_SEED0)
    ap.add_argument("--rule", default=None, help="a deferring rule (default: the strongest for the run's stock model)")
    ap.add_argument("--out", type=Path, default=None, help="also write the per-seed rows as CSV")
    a = ap.parse_args(argv)
    if not (a.run_dir / "config.yaml").exists() or not (a.run_dir / a.model).exists():
        ap.error(f"{a.run_dir} needs config.yaml and {a.model} (a run directory written by train.py)")
    try:
        df = diagnose(a.run_dir, a.model, list(range(a.seed0, a.seed0 + a.seeds)), a.rule)
    except ConfigError as e:
        ap.error(str(e))
    if a.out:
        df.to_csv(a.out, index=False)
    cols = ["miss_pct", "mean_wait_min", "when_disagree", "which_disagree"]
    print(f"rule: {df.rule.iloc[0]} (base order {base_of(df.rule.iloc[0])}); {a.seeds} seeds from {a.seed0}")
    print(df.groupby("mode", sort=False)[cols].mean().round(3).to_string())
    print("\nagainst the rule in the same design (paired over seeds; negative = lower than the rule):")
    print(versus_rule_tests(df).to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    return 0
