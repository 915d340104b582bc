"""The held-out evaluations of an ``algo=ppo_jax`` run: CGRSP-v0's ``eval/*``, the selection, ``best_model``.

:class:`Evaluator` is called by the training loop (:mod:`.run`) at each evaluation point; it
writes ``learning_curve.{csv,png}``, ``best_model.npz`` + ``best.json``, with a selection on JAX
days ``select_candidates.csv`` (every evaluation there, the pick marked) and, with a second stage,
``candidates/`` (the actors it replays); its state goes into each checkpoint so a resumed run
keeps the uninterrupted run's curve and best model.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.rl.best import best_record, read_best, write_best
from gpu_sched_agents.rl.callbacks import EVAL_METRICS, SELECT_ON, learning_curve_figure
from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy, actor_arrays, load_policy, save_policy
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.core.io import atomic_write_table

log = logging.getLogger(__name__)

CANDIDATES = "select_candidates.csv"  # every evaluation on the selection days, annotated, the pick marked


def _select_means(selector: Any, row: dict[str, float]) -> dict[str, float]:
    """An evaluation's ``select_*`` means (learning curve, TensorBoard's ``select/*``, ``best.json``).

    One regime: ``select_mean_wait_min`` and ``select_miss_pct`` (and ``select_objective`` when it
    ranks by the objective); several: ``select_<regime>_wait`` and ``select_<regime>_miss`` per
    regime and ``select_worst_excess`` (the worst regime's wait excess in units of the margin).
    """
    means = {f"select_{c}": row[c] for c in selector.columns}
    return means if selector.by != "worst_regime" else means | {"select_worst_excess": selector.key(row)[1]}


def describe(selector: Any, means: dict[str, float]) -> str:
    """The training log's words for an evaluation on the selection days."""
    if selector.by != "worst_regime":
        said = f"selection days {means['select_mean_wait_min']:.2f} min, miss {means['select_miss_pct']:.3f} %"
        return said + (f", objective {means['select_objective']:.2f}" if selector.by == "objective" else "")
    from gpu_sched_agents.rl.ppo_jax.constraint import wait_excess

    def excess(r: str) -> float:
        return wait_excess(means[f"select_{r}_wait"], selector.rules[r][0], *selector.margin)

    worst = max(selector.envs, key=excess)
    return (
        f"selection: worst regime's wait excess {means['select_worst_excess']:.2f} margins "
        f"({len(selector.envs)} regimes; {worst} {means[f'select_{worst}_wait']:.2f} min against the rule's "
        f"{selector.rules[worst][0]:.2f})"
    )


class Evaluator:
    """Held-out evaluation during training on CGRSP-v0 (``eval/*``, best model, learning curve).

    With a :class:`~gpu_sched_agents.rl.ppo_jax.selector.Selector` (``algo.select_days`` > 0) the best
    model is the one it ranks first (``select/*`` logged, ``best.json`` holds its ``select_key``),
    kept one evaluation at a time; otherwise the lowest env objective on the seeds.
    """

    def __init__(
        self,
        config: CGRSPEnvConfig,
        seeds: list[int],
        run_dir: Path,
        heuristics: dict[str, dict[str, float]],
        writer: Any,
        selection: Any = None,
    ) -> None:
        self.config, self.seeds, self.run_dir, self.heuristics, self.writer = config, seeds, run_dir, heuristics, writer
        self.selection = selection
        self._rule = "objective" if selection is None else selection.by
        self.recheck = selection is not None and selection.recheck_days > 0
        path = run_dir / CANDIDATES
        kept_rows = pd.read_csv(path).to_dict("records") if selection is not None and path.exists() else []
        self.candidates = [{k: r[k] for k in ["steps", *selection.row]} for r in kept_rows]  # as recorded
        kept = read_best(run_dir)  # a resumed run keeps the best of its first part
        self.best = kept["select_key"] if kept is not None else [float("inf")]
        curve = run_dir / "learning_curve.csv"
        self.curve = pd.read_csv(curve).to_dict("records") if curve.exists() else []

    def __call__(
        self, params: Any, steps: int, obs_dim: int, n_actions: int, on_v0: bool = True, select: bool = True
    ) -> dict[str, float]:
        """Evaluate the actor with flax ``params`` at ``steps``: on CGRSP-v0's seeds (``on_v0``) and/or the selection.

        With a selection the best model is decided by the selection alone, so a call with
        ``select=False`` only logs; without one every call is on CGRSP-v0 and decides.
        """
        from gpu_sched_agents.rl.envs import evaluate_model

        on_v0 = on_v0 or self.selection is None  # without a selection, CGRSP-v0's evaluation decides
        means: dict[str, float] = {}
        if on_v0:
            df = evaluate_model(NumpyPolicy(actor_arrays(params)), self.config, self.seeds, masked=True)
            means = {m: float(df[m].mean()) for m in EVAL_METRICS}
            for m, v in means.items():
                self.writer.add_scalar(f"eval/{m}", v, steps)
        key = None
        if self.selection is None:
            key = [means[SELECT_ON]]
        elif select:
            row = self.selection.play(params)
            key = [float(x) for x in self.selection.key(row)]
            means |= _select_means(self.selection, row)
            for m, v in means.items():
                if m.startswith("select_"):
                    self.writer.add_scalar(f"select/{m.removeprefix('select_')}", v, steps)
            self._keep_candidate(params, steps, row, obs_dim, n_actions)
        if key is not None and key < self.best:
            self.best = key
            save_policy(self.run_dir / "best_model.npz", params, obs_dim, n_actions)
            write_best(self.run_dir, best_record(steps, self._rule, key, means))
        self.curve = [r for r in self.curve if r["timesteps"] != steps] + [{"timesteps": int(steps), **means}]
        atomic_write_table(self.run_dir / "learning_curve.csv", pd.DataFrame(self.curve))
        if on_v0:
            learning_curve_figure(pd.DataFrame(self.curve), self.heuristics, self.run_dir / "learning_curve.png")
        return means

    def resume_state(self) -> dict[str, Any]:
        """What a checkpoint keeps: the best key, the curve's rows and the selection's candidates."""
        return {
            "best": [float(x) for x in self.best],
            "curve": [dict(r) for r in self.curve],
            "candidates": [dict(r) for r in self.candidates],
        }

    def restore_state(self, state: dict[str, Any]) -> None:
        """Continue from a checkpoint: evaluations made after it (by the run that was stopped) are dropped."""
        self.best = list(state["best"])
        self.curve = [dict(r) for r in state["curve"]]
        self.candidates = [dict(r) for r in state["candidates"]]

    def _table(self) -> pd.DataFrame:
        """The selection's evaluations so far, indexed by ``steps`` (their rows, the rule's numbers beside)."""
        table = pd.DataFrame(self.candidates, columns=["steps", *self.selection.row]).set_index("steps")
        return self.selection.annotate(table)

    def _keep_candidate(self, params: Any, steps: int, row: dict[str, float], obs_dim: int, n_actions: int) -> None:
        """Record an evaluation; with a second stage keep the ``recheck_top`` best actors (``candidates/``)."""
        row = {c: row[c] for c in self.selection.row}
        self.candidates = [r for r in self.candidates if r["steps"] != steps] + [{"steps": int(steps), **row}]
        atomic_write_table(self.run_dir / CANDIDATES, pd.DataFrame(self.candidates))
        if not self.recheck:
            return
        top = set(self.selection.best(self._table(), self.selection.recheck_top))
        folder = self.run_dir / "candidates"
        folder.mkdir(exist_ok=True)
        if steps in top:
            save_policy(folder / f"model_{steps}.npz", params, obs_dim, n_actions)
        for f in folder.glob("model_*.npz"):
            if int(f.stem.removeprefix("model_")) not in top:
                f.unlink()

    def finish(self) -> None:
        """``select_candidates.csv`` with the pick marked; with ``algo.recheck_days`` the second stage first.

        The second stage replays the kept candidates and picks on both stages' days pooled:
        ``best_model.npz`` becomes the pick and ``best.json`` says so (``recheck``); the table with
        the second stage's columns replaces ``select_candidates.csv``. Done once: a rerun of a
        finished run finds ``best.json``'s ``recheck`` (made with every evaluation) and leaves it.
        """
        import shutil

        if self.selection is None or not self.candidates:
            return
        if not self.recheck:  # the pick is the best kept so far: mark it in the table
            table, pick = self._table(), read_best(self.run_dir)["timesteps"]
            atomic_write_table(self.run_dir / CANDIDATES, table.assign(picked=table.index == pick).reset_index())
            return
        done = (read_best(self.run_dir) or {}).get("recheck", {})
        if done.get("evaluations") == len(self.candidates):  # finished already, no evaluation since
            return
        sel = self.selection
        more = sel.further_keys()
        table, pick = sel.recheck(self._table(), lambda steps: sel.play(load_policy(self._candidate(steps)), more))
        chosen = table.loc[pick]
        second, said = _second_stage_words(sel, chosen)
        tmp = self.run_dir / "best_model.tmp.npz"
        shutil.copyfile(self._candidate(pick), tmp)
        tmp.replace(self.run_dir / "best_model.npz")
        means = next((r for r in self.curve if r["timesteps"] == pick), {})  # its evaluation's means
        recheck = {"days": sel.recheck_days, "evaluations": len(table), **second}
        first_stage = read_best(self.run_dir)
        key = sel.key(chosen)
        write_best(self.run_dir, best_record(pick, sel.by, key, means, recheck=recheck, first_stage=first_stage))
        atomic_write_table(self.run_dir / CANDIDATES, table.assign(picked=table.index == pick).reset_index())
        log.info(
            f"second stage on {sel.recheck_days} more selection days: best_model is the {pick}-step actor "
            f"({sel.recheck_top} best replayed; {said})"
        )

    def _candidate(self, steps: Any) -> Path:
        return self.run_dir / "candidates" / f"model_{int(steps)}.npz"


def _second_stage_words(sel: Any, chosen: pd.Series) -> tuple[dict[str, float], str]:
    """The picked row's second-stage numbers (``best.json``'s ``recheck``) and the log's words for them."""
    from gpu_sched_agents.rl.ppo_jax.constraint import worst_regime_key
    from gpu_sched_agents.rl.ppo_jax.selector import PART

    if sel.by == "lexicographic":
        cols = ["recheck_wait_min", "recheck_miss_pct", "pooled_wait_min", "pooled_miss_pct", "pooled_rule_miss_pct"]
        said = f"pooled {chosen.pooled_wait_min:.2f} min, miss {chosen.pooled_miss_pct:.4f} % against the rule's "
        said += f"{chosen.pooled_rule_miss_pct:.4f} %"
    else:
        cols = [f"{s}_{r}_{m}" for s in ("recheck", "pooled") for r in sel.envs for m in PART]
        pooled = {r: (chosen[f"pooled_{r}_rule_wait"], chosen[f"pooled_{r}_rule_miss"]) for r in sel.envs}
        on_pool = pd.Series({f"{r}_{m}": chosen[f"pooled_{r}_{m}"] for r in sel.envs for m in PART})
        excess = worst_regime_key(on_pool, pooled, *sel.margin)
        said = f"pooled worst regime's wait excess {excess[1]:.2f} margins, {excess[0]} regime(s) missing more"
    return {k: float(chosen[k]) for k in cols}, said


__all__ = ["CANDIDATES", "Evaluator", "describe"]
