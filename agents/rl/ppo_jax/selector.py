"""The one checkpoint selection of ``algo=ppo_jax``: ``train.py``'s ``best_model`` and the studies' picks.

A :class:`Selector` plays an actor on native JAX *selection* days (keys 10 000 …, never the test
keys), one regime or several, and ranks the evaluations by a named rule (``by``):

* ``lexicographic`` (one regime): no more misses than the JAX rule on the same days, then the
  lowest wait (:func:`~gpu_sched_agents.rl.ppo_jax.constraint.lexicographic_key`);
* ``worst_regime`` (several regimes, the generalist): the fewest regimes missing more than the
  rule, then the worst regime's wait excess in units of ``margin``
  (:func:`~gpu_sched_agents.rl.ppo_jax.constraint.worst_regime_key`);
* ``objective`` (one regime, no rule played): the lowest selection objective (mean wait plus a
  miss priced as one job-hour, :func:`~gpu_sched_agents.rl.ppo_jax.jax_eval.selection_objective`).

Ties keep the earliest evaluation, so keeping the best so far one evaluation at a time (``train.py``)
and picking among every evaluation at the end (the studies) give the same checkpoint. An optional
second stage (:meth:`Selector.recheck`) replays the best few on further selection days and picks
again on both stages' days pooled, against the winner's curse of many checkpoints on few days.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from gpu_sched_agents.rl.ppo_jax.constraint import RECHECK_TOP
from gpu_sched_env.core.criteria import GENERALIST_MARGIN
from gpu_sched_env.core.errors import check_choice

SELECT_BY = ("lexicographic", "worst_regime", "objective")
JAX_RULE = "spt_rescue_defer_exp"  # the JAX rule the studies select against (train.py: algo.jax_eval_rules[0])
PART = ("wait", "miss")  # a regime's columns in a worst-regime table: <regime>_wait, <regime>_miss


@dataclass
class Selector:
    """What a selection evaluation plays and how the evaluations are ranked (see the module docstring).

    ``envs``: ``{"": env}`` (one regime) or regime name → its JAX env; ``keys``: the selection
    days; ``rules``: regime → the JAX rule's (mean wait [min], miss %) on ``keys`` (None for
    ``objective``). :meth:`play_rule` builds one, playing the rule.
    """

    envs: dict[str, Any]
    keys: Any
    by: str
    rules: dict[str, tuple[float, float]] | None = None
    rule: str = JAX_RULE
    margin: tuple[float, float] = GENERALIST_MARGIN
    recheck_days: int = 0
    recheck_top: int = RECHECK_TOP

    def __post_init__(self) -> None:
        check_choice("select_by", self.by, SELECT_BY)
        if (self.by == "worst_regime") == ("" in self.envs):
            raise ValueError(f"select_by = {self.by!r} with regimes {sorted(self.envs)}")

    @classmethod
    def play_rule(cls, envs: Mapping[str, Any], n_days: int, by: str, rule: str = JAX_RULE, **kwargs: Any) -> Selector:
        """A selector on ``n_days`` days of ``envs``, the ``rule`` played there once (none for ``objective``)."""
        from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, rule_regime_means, test_keys

        keys = test_keys(n_days, SELECT_SEED0)
        rules = None if by == "objective" else rule_regime_means(dict(envs), rule, keys)
        return cls(dict(envs), keys, by, rules, rule, **kwargs)

    @property
    def rule_miss(self) -> float | None:
        """The rule's miss % on the selection days (a lexicographic pick's bound), else None."""
        return self.rules[""][1] if self.by == "lexicographic" else None

    @property
    def columns(self) -> list[str]:
        """What an evaluation's row holds: ``mean_wait_min``, ``miss_pct`` (one regime), or each regime's parts."""
        if "" in self.envs:
            return ["mean_wait_min", "miss_pct", *(["objective"] if self.by == "objective" else [])]
        return [f"{r}_{m}" for r in self.envs for m in PART]

    @property
    def row(self) -> list[str]:
        """What :meth:`play` returns: ``mean_wait_min``, ``miss_pct``, ``objective`` (one regime), or each regime's."""
        return ["mean_wait_min", "miss_pct", "objective"] if "" in self.envs else self.columns

    def play(self, actor: Any, keys: Any = None) -> dict[str, float]:
        """The row of ``actor`` (flax params, or an exported policy) on ``keys`` (default: the selection days).

        One regime: ``mean_wait_min``, ``miss_pct`` and ``objective`` (the selection objective);
        several: ``<regime>_wait`` [min] and ``<regime>_miss`` [%] per regime.
        """
        from gpu_sched_agents.rl.ppo_jax import jax_eval

        keys = self.keys if keys is None else keys
        row: dict[str, float] = {}
        for name, env in self.envs.items():
            if isinstance(actor, jax_eval.NumpyPolicy):
                days = jax_eval.per_day(env, {"ppo_jax": jax_eval.learned_rule(env, actor)}, keys)
            else:
                days = jax_eval.play_params(env, actor, keys)
            wait, miss = float(days.mean_wait_min.mean()), float(days.miss_pct.mean())
            if name == "":
                return {"mean_wait_min": wait, "miss_pct": miss, "objective": jax_eval.selection_objective(days)}
            row |= {f"{name}_wait": wait, f"{name}_miss": miss}
        return row

    def key(self, row: Mapping[str, float]) -> tuple[float, ...]:
        """The ranking key of one evaluation's row (lower is better)."""
        from gpu_sched_agents.rl.ppo_jax.constraint import lexicographic_key, worst_regime_key

        if self.by == "objective":
            return (float(row["objective"]),)
        if self.by == "lexicographic":
            return lexicographic_key(row["miss_pct"], row["mean_wait_min"], self.rule_miss)
        return worst_regime_key(pd.Series(dict(row)), self.rules, *self.margin)

    def best(self, table: pd.DataFrame, top: int) -> list[Any]:
        """The index labels of the ``top`` best rows of ``table``, best first (ties: the earlier row first)."""
        from gpu_sched_agents.rl.ppo_jax.constraint import best_by_key, best_by_worst_regime, best_first

        if self.by == "lexicographic":
            return best_by_key(table, self.rule_miss, top)
        if self.by == "worst_regime":
            return best_by_worst_regime(table, self.rules, *self.margin, top)
        return best_first(table.index, [(float(x),) for x in table.objective], top)

    def pick(self, table: pd.DataFrame) -> Any:
        """The index label of the checkpoint to keep: the best row of ``table``."""
        return self.best(table, 1)[0]

    def further_keys(self) -> Any:
        """The second stage's days: the ``recheck_days`` selection keys after the first stage's."""
        from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, test_keys

        return test_keys(self.recheck_days, SELECT_SEED0 + len(self.keys))

    def recheck(self, table: pd.DataFrame, replay: Callable[[Any], Mapping[str, float]]) -> tuple[pd.DataFrame, Any]:
        """The second stage: ``(table with its columns, the index label picked)``.

        The ``recheck_top`` best rows of ``table`` are replayed (``replay``: label → that row's
        actor's row on :meth:`further_keys`, as :meth:`play` gives it) and the pick is made on both
        stages' days pooled against the rule's pooled numbers
        (:func:`~gpu_sched_agents.rl.ppo_jax.constraint.pooled_pick` on one regime,
        :func:`~gpu_sched_agents.rl.ppo_jax.constraint.pooled_regime_pick` on several).
        """
        from gpu_sched_agents.rl.ppo_jax.constraint import pooled_pick, pooled_regime_pick
        from gpu_sched_agents.rl.ppo_jax.jax_eval import rule_regime_means

        if self.by == "objective" or not self.recheck_days:
            raise ValueError(f"a second stage needs a rule and recheck_days (select_by = {self.by!r})")
        more = self.further_keys()
        second = rule_regime_means(self.envs, self.rule, more)
        n1, n2 = len(self.keys), self.recheck_days
        replayed = {i: dict(replay(i)) for i in self.best(table, self.recheck_top)}
        if self.by == "lexicographic":
            pairs = {i: (r["mean_wait_min"], r["miss_pct"]) for i, r in replayed.items()}
            return pooled_pick(table, pairs, n1, n2, self.rule_miss, second[""][1])
        return pooled_regime_pick(table, replayed, n1, n2, self.rules, second, *self.margin)

    def annotate(self, table: pd.DataFrame) -> pd.DataFrame:
        """The rule's numbers beside the evaluations (a study's selection table's extra columns)."""
        if self.by == "worst_regime":
            cols = {f"{r}_rule_{k}": v for r, (w, m) in self.rules.items() for k, v in (("wait", w), ("miss", m))}
            return table.assign(**cols)
        return table.assign(rule_miss_pct=self.rule_miss) if self.by == "lexicographic" else table


__all__ = ["JAX_RULE", "PART", "SELECT_BY", "Selector"]
