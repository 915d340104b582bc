"""In-JAX evaluation of an ``algo=ppo_jax`` policy against the JAX rules, paired over many days.

The exported actor (:class:`~.export.NumpyPolicy` weights) becomes a pure policy
``(state, params) -> action`` (the JAX env's observation, the same MLP, the two-level mode) and
is played with :func:`gpu_sched_env.cgrsp.jax.rules.evaluate` beside the JAX rules
(``spt_rescue_defer_exp``, SPT, FIFO) on the same days: native JAX days drawn from the test keys
``PRNGKey(20 000 + i)`` (the test seed numbers; not the reference's draws of those seeds, which
CGRSP-v0's ``final_eval`` plays). The table is the paired difference learned − rule per metric
with its 95 % CI (t interval) and the paired t and Wilcoxon p values.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy, actor_arrays
from gpu_sched_agents.rl.ppo_jax.network import factored_mode, policy_logits
from gpu_sched_env.cgrsp.batch import SIM_SOURCES
from gpu_sched_env.cgrsp.jax.rules import RULES, Rule
from gpu_sched_env.cgrsp.rewards import deadline_objective
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text

EPISODE_KEYS = ("mean_wait_min", "miss_pct", "cost_usd")  # the JAX env's end-of-day info, logged as episode/*
METRICS = ("mean_wait_min", "miss_pct", "cost_usd")
TEST_SEED0 = 20_000  # as gpu_sched_agents.rl.envs.TEST_SEED0
SELECT_SEED0 = 10_000  # selection days (model selection, tuning): keys PRNGKey(10 000 + i), never the test keys


def actor_logits(env: Any, s: Any, params: Any, weights: Any, head: str = "flat") -> jnp.ndarray:
    """The exported actor's policy logits (``network.policy_logits`` of its ``head``) on ``env``'s observation of ``s``.

    ``weights``: hidden layers, output layer.
    """
    layers, (w_out, b_out) = weights
    h = env._obs(s, params)
    for w, b in layers:
        h = jnp.tanh(h @ w + b)
    return policy_logits(h @ w_out + b_out, env._action_mask(s, params), head)


def _mlp_act(env: Any, s: Any, params: Any, weights: Any, head: str = "flat") -> jnp.ndarray:
    """The exported actor's two-level mode on ``env``'s observation of ``s``."""
    return factored_mode(actor_logits(env, s, params, weights, head))


_mlp_act_factored = functools.partial(_mlp_act, head="factored")  # one object per head: one compiled day each


def learned_rule(env: Any, policy: NumpyPolicy, name: str = "ppo_jax") -> Rule:
    """``policy`` as a JAX :class:`~gpu_sched_env.cgrsp.jax.rules.Rule` on ``env``, its weights an argument.

    Every network of one shape plays through one compiled day (``rules.evaluate`` passes the
    weights to the program), so evaluating a learner every few updates compiles once.
    """
    layers = tuple((jnp.asarray(w), jnp.asarray(b)) for w, b in policy.layers)
    out = (jnp.asarray(policy.out[0]), jnp.asarray(policy.out[1]))
    return Rule(name, _mlp_act_factored if policy.head == "factored" else _mlp_act, weights=(layers, out))


def test_keys(n: int, seed0: int = TEST_SEED0) -> jnp.ndarray:
    """``PRNGKey(seed0 + i)`` for i < n (native JAX days of the test seed numbers)."""
    return jax.vmap(jax.random.PRNGKey)(jnp.arange(seed0, seed0 + n))


def play_params(env: Any, params: Any, keys: jnp.ndarray) -> pd.DataFrame:
    """Per-day :data:`METRICS` of the actor with flax ``params`` (as exported: NumPy weights, two-level mode)."""
    return per_day(env, {"ppo_jax": learned_rule(env, NumpyPolicy(actor_arrays(params)))}, keys)


def rule_regime_means(envs: dict[str, Any], rule: str, keys: jnp.ndarray) -> dict[str, tuple[float, float]]:
    """Regime → the JAX ``rule``'s (mean wait [min], miss %) on ``keys`` (a selection's days, ``Selector``)."""
    out = {}
    for name, env in envs.items():
        days = per_day(env, {rule: RULES[rule]}, keys)
        out[name] = (float(days.mean_wait_min.mean()), float(days.miss_pct.mean()))
    return out


def selection_objective(days: pd.DataFrame) -> float:
    """Lower is better: mean wait + a miss priced as one job-hour (the ``deadline`` objective per job) [min]."""
    return deadline_objective(days.mean_wait_min.mean(), days.miss_pct.mean())


# What decides a JAX rule's days besides their cell: the simulator's parameters, the JAX env and rules, this module
RULE_DAY_SOURCES = (
    *SIM_SOURCES,
    "gpu_sched_env/cgrsp/config.py",
    "gpu_sched_env/cgrsp/jax/*.py",
    "agents/rl/ppo_jax/jax_eval.py",
)


def _rule_days_cell(on: Any, rule: Rule, keys: jnp.ndarray) -> dict[str, Any] | None:
    """The store cell of a registered JAX rule's days on ``on`` (None where the days are not a config's alone)."""
    from gpu_sched_env.cgrsp.jax import RULES

    if RULES.get(rule.name) is not rule or on.is_mixed or on.default_params.pool is not None:
        return None
    return {
        "config": json.dumps(on.cfg.as_dict(), sort_keys=True, default=str),
        "design": type(on).__name__,
        "dtype": str(np.dtype(on.dtype)),
        "rule": rule.name,
        "keys": hashlib.sha1(np.asarray(jax.random.key_data(keys)).tobytes()).hexdigest(),
        "n": len(keys),
        "jax": jax.__version__,
    }


DAY_CHUNK = 100  # days per compiled evaluation (the selection's 100 days; more are played 100 at a time)


def _chunks(keys: jnp.ndarray, chunk: int) -> Iterator[tuple[jnp.ndarray, int]]:
    """``keys`` in batches of ``min(chunk, len(keys))`` (the last padded with its own first key) and each one's length.

    Every batch has one shape, so a policy's evaluation on any number of days above ``chunk``
    runs one compiled program (the selection's and the final test's alike).
    """
    size = min(chunk, len(keys))
    for i in range(0, len(keys), size):
        part = keys[i : i + size]
        n = len(part)
        yield (part if n == size else jnp.concatenate([part, jnp.repeat(part[:1], size - n, axis=0)])), n


def per_day(env: Any, policies: dict[str, Any], keys: jnp.ndarray, chunk: int = DAY_CHUNK) -> pd.DataFrame:
    """One row per (policy, day): :data:`METRICS` of each policy (a JAX ``Rule`` or callable) on ``keys``.

    The days are played ``chunk`` at a time (:func:`_chunks`: one compiled shape for any number of
    days; on the 2-core CPU 1000 hectic days take no longer in batches of 100 than in one batch,
    docs/performance.md).

    A rule without weights (a joint-space rule of ``RULES``) plays on ``env.rule_env`` (``env``
    itself, or the joint twin of a design with other actions, ``when``); the same days either way.
    Such a rule's days are deterministic, so they are kept in the user's cache
    (``reference_cache("jax_rule_days")``, keyed by the env's config, the rule, the keys and the
    code of :data:`RULE_DAY_SOURCES`) and read on the next call (``GPU_SCHED_REFERENCE_CACHE=0``: always played).
    """
    from gpu_sched_env.cgrsp.jax.rules import evaluate
    from gpu_sched_env.core.store import reference_cache, stored_rows

    rows = []
    seeds = np.arange(len(keys))
    for label, rule in policies.items():
        on = env.rule_env if isinstance(rule, Rule) and rule.weights is None else env

        def play(_: Any, on: Any = on, rule: Any = rule) -> pd.DataFrame:
            parts = [(jax.device_get(evaluate(on, rule, part)), n) for part, n in _chunks(keys, chunk)]
            out = {m: np.concatenate([np.asarray(p[m], float)[:n] for p, n in parts]) for m in METRICS}
            return pd.DataFrame({"cell": 0, "day_index": seeds, **out})

        cell = _rule_days_cell(on, rule, keys) if isinstance(rule, Rule) and rule.weights is None else None
        days = (
            play(None)
            if cell is None
            else stored_rows(reference_cache("jax_rule_days", RULE_DAY_SOURCES), {0: cell}, play, "cell")
        )
        days = days.sort_values("day_index").drop(columns="cell")
        rows.append(days.assign(policy=label)[["policy", "day_index", *METRICS]])
    return pd.concat(rows, ignore_index=True)


def paired_table(days: pd.DataFrame, label: str, rules: Sequence[str]) -> pd.DataFrame:
    """Per rule and metric: means, the paired difference ``label`` − rule, its 95 % CI and p values."""
    from gpu_sched_env.core.stats import mean_ci, paired_compare

    mine = days[days.policy == label].set_index("day_index").sort_index()
    rows = []
    for rule in rules:
        other = days[days.policy == rule].set_index("day_index").sort_index()
        for m in ("mean_wait_min", "miss_pct"):
            a, b = mine[m].to_numpy(), other.loc[mine.index, m].to_numpy()
            ci, pc = mean_ci(a - b), paired_compare(a, b)
            rows.append(
                {
                    "vs": rule,
                    "metric": m,
                    "n": len(a),
                    "learned": a.mean(),
                    "rule": b.mean(),
                    "diff": ci.mean,
                    "ci_low": ci.mean - ci.half_width,
                    "ci_high": ci.mean + ci.half_width,
                    "t_p": pc.t_p,
                    "wilcoxon_p": pc.w_p,
                }
            )
    return pd.DataFrame(rows)


def final_jax_evaluation(
    env: Any,
    policy: NumpyPolicy,
    n: int,
    out_dir: Path,
    stem: str = "final_eval_jax",
    rules: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Learned vs the JAX rules on ``n`` native test days; writes ``<stem>.{csv,md}`` and ``<stem>_per_seed.csv``."""
    from gpu_sched_env.cgrsp.jax.rules import RULES

    names = list(RULES if rules is None else rules)
    days = per_day(env, {"ppo_jax": learned_rule(env, policy), **{r: RULES[r] for r in names}}, test_keys(n))
    table = paired_table(days, "ppo_jax", names)
    atomic_write_table(Path(out_dir) / f"{stem}_per_seed.csv", days)
    atomic_write_table(Path(out_dir) / f"{stem}.csv", table)
    text = (
        f"# ppo_jax vs the JAX rules on {n} native JAX days (keys {TEST_SEED0}…{TEST_SEED0 + n - 1})\n\n"
        "Paired difference learned − rule, 95 % CI (negative = learned lower):\n\n"
        f"```\n{table.to_string(index=False, float_format=lambda x: f'{x:.4g}')}\n```\n"
    )
    atomic_write_text(Path(out_dir) / f"{stem}.md", text)
    return table


__all__ = [
    "EPISODE_KEYS",
    "DAY_CHUNK",
    "SELECT_SEED0",
    "final_jax_evaluation",
    "learned_rule",
    "paired_table",
    "per_day",
    "play_params",
    "rule_regime_means",
    "selection_objective",
    "test_keys",
]
