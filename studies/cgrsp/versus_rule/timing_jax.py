r"""Where a joint-design ``algo=ppo_jax`` actor's *timing* differs from the rule's, on the actor's own days.

``versus-rule --engine jax`` says how much the timing costs (``rule_when``); this says where it
goes wrong. The exported actor plays ``--days`` native selection days of a regime (keys 10 000 …,
not the test keys) through the JAX env; at every step where a dispatch is legal the rule
(``spt_rescue_defer_exp``) is asked what it would do in the same state. Each such step falls in one
of four cells: both dispatch, both wait, the actor waits where the rule dispatches (*over-waits*),
the actor dispatches where the rule waits (*under-waits*). For the two disagreements the table
splits the steps by their context: how many classes have a job waiting (the window's class
heads), the class of the job the rule would dispatch (or the actor does) and the stock status of
its slot's GPU type (0 High, 1 Medium, 2 Low).

    python -m studies versus-rule --part timing \
        runs/ablation/hectic_D900_capacity_excess1_time_aware_b3000000/seed0.npz \
        --regime hectic_D900 --overrides +env.reward_weights.excess_run=1.0 algo.tau_s=90 --days 50

Measured so (docs/results_ablation.md): the ``excess_run`` learners under D = 900 s over-wait about 20 times
a day, nearly all with one class waiting (the longest) and the rule's slot at Medium stock: the
charge, booked at the dispatch and discounted, pays them to postpone the long class's start.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.fleet import LOW

COLUMNS = (
    "learner_waits",
    "rule_waits",
    "heads",
    "cls",
    "level",
    "own_level",
    "hold_level",
    "t_h",
    "waiting",
    "trigger",
    "reward",
)
CELLS = {
    (False, False): "both dispatch",
    (True, True): "both wait",
    (True, False): "over-wait (learner waits, rule dispatches)",
    (False, True): "under-wait (learner dispatches, rule waits)",
}


def step_rows(env: Any, weights: Any, head: str, keys: Any, actor: bool = True) -> pd.DataFrame:
    """Per step with a legal dispatch on the actor's days of ``keys``: the :data:`COLUMNS`.

    ``cls`` and ``level``: the rule's pair's job class and its slot's stock status where the rule
    dispatches, else the actor's (both −1 when both wait); ``own_level``: the stock status of the
    slot the played policy dispatches to (−1: it waits or holds); ``hold_level``: in the
    ``joint_hold`` design, the stock status of the type the actor holds (−1: no hold; a hold counts
    as not dispatching, ``learner_waits``); ``waiting``: the jobs waiting; ``trigger``: whether the
    held deferrals' laxity trigger (:func:`gpu_sched_env.cgrsp.jax.hold.laxity_trigger`) is on for
    the played slot's type (a hold of it would be released at once); ``reward``: the env's reward of
    the played step. ``actor=False`` plays the rule instead
    (its own days: ``learner_waits`` is then the rule's). The days side by side
    (:func:`studies.cgrsp.jax_steps.play_steps`).
    """
    import jax.numpy as jnp

    from gpu_sched_env.cgrsp.jax.core import n_waiting
    from gpu_sched_env.cgrsp.jax.hold import laxity_trigger
    from gpu_sched_env.cgrsp.jax.obs import window
    from gpu_sched_env.cgrsp.jax.rules import spt_rescue_defer_exp
    from gpu_sched_env.cgrsp.jax.types import day_of
    from studies.cgrsp.jax_steps import play_steps
    from studies.cgrsp.versus_rule.versus_rule_jax import _dispatches

    p, c = env.default_params, env.spec.c

    def move(s, k, weights):
        ra = spt_rescue_defer_exp(env, s, p)
        la = _dispatches(env, s, p, weights, head)[0] if actor else ra
        kc = env.K * c  # the pairs come first; then joint_hold's holds, then the wait (the rule never holds)
        lw, rw = la >= kc, ra == env.wait_action
        hold = lw & (la != env.wait_action)
        legal = env._action_mask(s, p)[:kc].any()  # some job-slot pair
        a = jnp.where(rw, la, ra)  # the pair the context is read off: the rule's where it dispatches
        win = window(s, p, env.class_order, env.K, env.spec.n)[0]
        job = jnp.maximum(win[jnp.minimum(a // c, env.K - 1)], 0)
        both_wait = lw & rw
        cls = jnp.where(both_wait, -1, day_of(s, p).cx[job])
        level = jnp.where(both_wait, -1, s.stock[p.slot_type[a % c]])
        own = jnp.where(lw, -1, s.stock[p.slot_type[la % c]])
        held = jnp.where(hold, s.stock[jnp.clip(la - kc, 0, env.spec.t - 1)], -1)
        trig = laxity_trigger(env, p, s)[p.slot_type[la % c]] & ~lw
        _, s1, r, _, _ = env.step(k, s, la, p)
        row = jnp.stack([lw, rw, (win >= 0).sum(), cls, level, own, held, s.t / 3600.0, n_waiting(s), trig, r])
        return s1, row, legal & ~s.done

    rows, live = play_steps(env, move, keys, len(COLUMNS), "the actor's days (timing-jax)", weights)
    out = pd.DataFrame(rows[live], columns=list(COLUMNS))
    for k in ("learner_waits", "rule_waits", "trigger"):
        out[k] = out[k] > 0
    for k in ("heads", "cls", "level", "own_level", "hold_level", "waiting"):
        out[k] = out[k].astype(int)
    return out


def cells(steps: pd.DataFrame, days: int) -> pd.DataFrame:
    """The four cells: steps per day and share of the steps with a legal dispatch."""
    rows = []
    for (lw, rw), name in CELLS.items():
        n = int(((steps.learner_waits == lw) & (steps.rule_waits == rw)).sum())
        rows.append({"cell": name, "per_day": n / days, "share_pct": 100.0 * n / max(len(steps), 1)})
    return pd.DataFrame(rows)


def contexts(steps: pd.DataFrame, days: int, learner_waits: bool) -> pd.DataFrame:
    """The over-waits (``learner_waits``) or under-waits by (classes waiting, class, stock status): per day, share."""
    d = steps[(steps.learner_waits == learner_waits) & (steps.rule_waits != learner_waits)]
    if d.empty:
        return pd.DataFrame(columns=["heads", "cls", "level", "per_day", "share_pct", "median_h"])
    g = d.groupby(["heads", "cls", "level"])
    t = pd.DataFrame({"n": g.size(), "median_h": g.t_h.median()}).reset_index()
    t["per_day"] = t.n / days
    t["share_pct"] = 100.0 * t.n / len(d)
    return t.sort_values("n", ascending=False)[["heads", "cls", "level", "per_day", "share_pct", "median_h"]]


def by_stock(mine: pd.DataFrame, rule: pd.DataFrame, days: int) -> pd.DataFrame:
    """Dispatches per day by their slot's stock status (0 High, 1 Medium, 2 Low), the actor's and the rule's.

    Also the actor's holds per day by the held type's status (``joint_hold``; 0 elsewhere). Each
    policy on its own days (:func:`step_rows` with ``actor`` true and false).
    """

    def count(col: pd.Series) -> np.ndarray:
        return (col[col >= 0].value_counts().reindex(range(3), fill_value=0) / days).to_numpy()

    return pd.DataFrame(
        {
            "level": range(3),
            "actor_per_day": count(mine.own_level),
            "rule_per_day": count(rule.own_level),
            "actor_holds_per_day": count(mine.hold_level),
        }
    )


def low_starts(steps: pd.DataFrame, days: int) -> pd.DataFrame:
    """The played policy's starts on Low stock against its other starts: per day, jobs waiting, trigger, reward."""
    rows = []
    for name, d in (
        ("on Low", steps[steps.own_level == LOW]),
        ("elsewhere", steps[steps.own_level.between(0, LOW - 1)]),
    ):
        rows.append(
            {
                "starts": name,
                "per_day": len(d) / days,
                "median_waiting": d.waiting.median() if len(d) else float("nan"),
                "trigger_pct": 100.0 * d.trigger.mean() if len(d) else float("nan"),
                "mean_reward": d.reward.mean() if len(d) else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def run(actor: Path, regime: str, overrides: Sequence[str], days: int, rule: bool = False) -> pd.DataFrame:
    """The step rows of ``actor`` (an exported ``.npz``) in ``regime`` on ``days`` selection days.

    ``rule``: the rule's own days instead (the actor's network still loaded, not played).
    """
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, learned_rule, test_keys
    from studies.cgrsp.versus_rule.versus_rule_jax import joint_env

    why = "this diagnostic compares a joint-design actor's waits with the rule's"
    env = joint_env(regime, overrides, why, holds=True)
    policy = NumpyPolicy.load(actor)
    weights = learned_rule(env, policy).weights
    return step_rows(env, weights, policy.head, test_keys(days, SELECT_SEED0), actor=not rule)


def main(argv: Sequence[str] | None = None) -> int:
    from studies.cgrsp.jax_steps import actor_arguments, check_actor_arguments

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    actor_arguments(ap, days=50)
    args = ap.parse_args(argv)
    check_actor_arguments(ap, args, min_days=1)
    steps = run(args.actor, args.regime, args.overrides, args.days)
    fmt = lambda x: f"{x:.2f}"  # noqa: E731
    print(f"{args.actor} on {args.regime}, {args.days} selection days: {len(steps) / args.days:.0f} steps a day")
    print("with a legal dispatch; the actor's action against the rule's in the same state")
    print(cells(steps, args.days).to_string(index=False, float_format=fmt))
    for name, lw in (("over-waits", True), ("under-waits", False)):
        print(f"\n{name} by classes waiting (heads), the class and stock status (0 High, 2 Low) of the pair")
        print(contexts(steps, args.days, lw).head(8).to_string(index=False, float_format=fmt))
    rule = run(args.actor, args.regime, args.overrides, args.days, rule=True)
    print("\ndispatches (and the actor's holds) per day by the stock status (0 High, 1 Medium, 2 Low), each policy")
    print("on its own days")
    print(by_stock(steps, rule, args.days).to_string(index=False, float_format=fmt))
    print("\nthe actor's starts on Low stock and elsewhere: jobs waiting, the held deferrals' laxity trigger on the")
    print("slot's type (% of starts), the env's reward of the step")
    print(low_starts(steps, args.days).to_string(index=False, float_format=fmt))
    return 0
