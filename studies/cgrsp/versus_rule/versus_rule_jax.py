r"""Where an ``algo=ppo_jax`` actor loses to the rule, in JAX: *when* it dispatches, *which* job, *which* slot.

The JAX counterpart of ``versus-rule`` (which needs an SB3 run and plays CGRSP-v0).
A decision of the joint design has three parts: dispatch or wait (*when*), which job (a
window position) and which slot. Each day is played by seven policies on the same native
JAX days (common random numbers):

* ``learned``: the exported actor (its two-level deterministic action);
* ``rule``: ``spt_rescue_defer_exp`` (the JAX rule, equal to the reference's);
* ``rule_when``: dispatch exactly when the rule would; the pair is the actor's likeliest
  dispatch (its *which*);
* ``rule_which``: dispatch exactly when the actor does; the pair is the rule's base order's
  next one on the idle slots (SPT+Rescue's job order, the deferring rules' slot: the least
  expected delay + W̄; no deferral), its *which*;
* ``rule_slot``: the actor's *when* and job, the rule's slot for that job (the least expected
  delay + W̄ over the idle slots);
* ``rule_rescue`` and ``rule_spt`` split ``rule_which`` in two: the actor's timing, and the base
  order's next pair only where its job is *urgent* (``rule_rescue``: SPT+Rescue's rescue, a job
  whose laxity less the least expected run time on the idle slots is under ``THETA_S``) or only
  where it is not (``rule_spt``: the shortest class first, then the earliest deadline); elsewhere
  the actor's pair.

If ``rule_when`` comes close to ``rule`` the actor's choice of pair is as good as the rule's and
its timing (the deferral) is what costs; if ``rule_which`` does, the reverse; ``rule_slot``
against ``learned`` isolates the slot; ``rule_rescue`` and ``rule_spt`` say which of the rule's
two orders (rescuing urgent jobs, or the shortest first) the actor's pairs lack. The table is
each mode's mean wait and miss with the paired difference to ``rule`` (95 % CI), on ``--days``
days of the *selection* keys (10 000 …; not the test keys, so reading it cannot tune on test days).

    python -m studies versus-rule --engine jax runs/ablation_3m/hectic_D900_time_aware_b3000000/seed1.npz \
        --regime hectic_D900 --overrides algo.tau_s=90 --days 200
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import pandas as pd

MODES = ("learned", "rule", "rule_when", "rule_which", "rule_slot", "rule_rescue", "rule_spt")


def _dispatches(env: Any, s: Any, params: Any, weights: Any, head: str = "flat") -> tuple[jnp.ndarray, jnp.ndarray]:
    """(the actor's two-level action, its likeliest dispatch; the no-op when no dispatch is legal)."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import actor_logits
    from gpu_sched_agents.rl.ppo_jax.network import factored_mode

    z = actor_logits(env, s, params, weights, head)
    legal = env._action_mask(s, params)[:-1]
    best = jnp.where(legal.any(), jnp.argmax(z[:-1]), env.wait_action)
    return factored_mode(z), best.astype(jnp.int32)


def base_pair(env: Any, s: Any, params: Any) -> jnp.ndarray:
    """The rule's base order's next pair on the state as it is (no deferral; the no-op when nothing fits)."""
    return base_pair_urgent(env, s, params)[0]


def base_pair_urgent(env: Any, s: Any, params: Any) -> tuple[jnp.ndarray, jnp.ndarray]:
    """(:func:`base_pair`, whether its job is urgent): SPT+Rescue's test on the idle slots, as ``rescue_plan`` ranks."""
    from gpu_sched_env.cgrsp.jax.rules import SLOT_SCORE, _joint, is_urgent, rescue_plan
    from gpu_sched_env.cgrsp.jax.types import day_of

    idle = s.slot_job < 0
    jobs, slots, length = rescue_plan(env, params, s, s.ptr, idle, SLOT_SCORE)
    day, job = day_of(s, params), jobs[0]
    urgent = (length > 0) & is_urgent(params, s.t, day.deadline[job], day.cx[job], idle)
    return _joint(env, s, params, job, slots[0], length > 0), urgent


def rule_slot_for(env: Any, s: Any, params: Any, action: jnp.ndarray) -> jnp.ndarray:
    """``action`` (a dispatch) with its slot replaced by the rule's slot for the same job; the no-op unchanged."""
    from gpu_sched_env.cgrsp.jax.obs import window
    from gpu_sched_env.cgrsp.jax.rules import slot_delay
    from gpu_sched_env.cgrsp.jax.types import day_of

    c = env.spec.c
    pos = action // c
    win_j, _, _ = window(s, params, env.class_order, env.K, env.spec.n)
    job = jnp.maximum(win_j[jnp.minimum(pos, env.K - 1)], 0)
    slot = slot_delay(params, s, day_of(s, params).cx[job], s.slot_job < 0)
    return jnp.where(action == env.wait_action, action, pos * c + slot).astype(jnp.int32)


def _rule_when(env, s, params, weights, head="flat"):
    from gpu_sched_env.cgrsp.jax.rules import spt_rescue_defer_exp

    wait = spt_rescue_defer_exp(env, s, params) == env.wait_action
    return jnp.where(wait, env.wait_action, _dispatches(env, s, params, weights, head)[1]).astype(jnp.int32)


def _rule_which(env, s, params, weights, head="flat"):
    learned = _dispatches(env, s, params, weights, head)[0]
    return jnp.where(learned == env.wait_action, learned, base_pair(env, s, params)).astype(jnp.int32)


def _rule_urgent(env, s, params, weights, head="flat", urgent=True):
    learned = _dispatches(env, s, params, weights, head)[0]
    pair, pair_urgent = base_pair_urgent(env, s, params)
    swap = (learned != env.wait_action) & (pair_urgent == urgent)
    return jnp.where(swap, pair, learned).astype(jnp.int32)


def _rule_slot(env, s, params, weights, head="flat"):
    return rule_slot_for(env, s, params, _dispatches(env, s, params, weights, head)[0])


def _learned(env, s, params, weights, head="flat"):
    return _dispatches(env, s, params, weights, head)[0]


def policies(env: Any, weights: Any, head: str = "flat") -> dict[str, Any]:
    """The :data:`MODES` as JAX ``Rule``s (the actor's ``weights`` an argument of each; its policy ``head``)."""
    import functools

    from gpu_sched_env.cgrsp.jax.rules import RULES, Rule

    acts = {
        "learned": _learned,
        "rule_when": _rule_when,
        "rule_which": _rule_which,
        "rule_slot": _rule_slot,
        "rule_rescue": functools.partial(_rule_urgent, urgent=True),
        "rule_spt": functools.partial(_rule_urgent, urgent=False),
    }
    if head != "flat":
        acts = {m: functools.partial(f, head=head) for m, f in acts.items()}
    return {m: RULES["spt_rescue_defer_exp"] if m == "rule" else Rule(m, acts[m], weights=weights) for m in MODES}


def table(days: pd.DataFrame) -> pd.DataFrame:
    """Per mode: mean wait and miss, and the paired difference to ``rule`` with its 95 % CI."""
    from gpu_sched_env.core.stats import mean_ci

    rule = days[days.policy == "rule"].set_index("day_index").sort_index()
    rows = []
    for mode in MODES:
        mine = days[days.policy == mode].set_index("day_index").sort_index()
        row: dict[str, Any] = {"mode": mode}
        for m in ("mean_wait_min", "miss_pct"):
            ci = mean_ci(mine[m].to_numpy() - rule.loc[mine.index, m].to_numpy())
            row |= {m: mine[m].mean(), f"{m}_diff": ci.mean, f"{m}_ci": ci.half_width}
        rows.append(row)
    return pd.DataFrame(rows)


def joint_env(regime: str, overrides: Sequence[str], why: str, holds: bool = False) -> Any:
    """The JAX env of ``regime`` (``experiment=ppo_jax_joint`` + ``overrides``).

    Raises: ConfigError (naming ``why``) unless its actions are the joint design's pairs and wait
    (``holds``: or those and ``joint_hold``'s hold actions), read off the env's layout.
    """
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from gpu_sched_env.core.errors import ConfigError
    from studies.cgrsp.learning.parity import regime_config

    env = JaxCGRSP.from_config(env_config(regime_config(regime, 1, extra=tuple(overrides))), records=False)
    pairs_and_wait = env.n_actions == env.K * env.spec.c + env.n_hold + 1
    if not pairs_and_wait or (env.n_hold and not holds):
        allowed = "'joint' or 'joint_hold'" if holds else "'joint'"
        raise ConfigError(f"action_mode = {env.cfg.action_mode!r}: {why}; allowed: {allowed}")
    return env


def run(actor: Path, regime: str, overrides: Sequence[str], days: int) -> pd.DataFrame:
    """The :func:`table` of ``actor`` (an exported ``.npz``) in ``regime`` on ``days`` selection days."""
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, learned_rule, per_day, test_keys

    env = joint_env(regime, overrides, "this diagnostic splits a joint-design actor's pairs")
    policy = NumpyPolicy.load(actor)
    weights = learned_rule(env, policy).weights
    return table(per_day(env, policies(env, weights, policy.head), test_keys(days, SELECT_SEED0)))


def main(argv: Sequence[str] | None = None) -> int:
    from studies.cgrsp.jax_steps import actor_arguments, check_actor_arguments

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    actor_arguments(ap, days=200)
    args = ap.parse_args(argv)
    check_actor_arguments(ap, args, min_days=2)  # a confidence interval needs two days
    t = run(args.actor, args.regime, args.overrides, args.days)
    print(f"{args.actor} on {args.regime}, {args.days} selection days; diff = mode - rule (95 % CI half-width)")
    print(t.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0
