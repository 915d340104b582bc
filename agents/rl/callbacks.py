"""Training callbacks: episode metrics, evaluation against the heuristic baselines, hparams.

TensorBoard layout under ``<run>/tb``: ``learned_1`` is the learner's run; each heuristic
gets its own run ``heuristic_<name>`` holding the *same* tags (``eval/miss_pct`` …) as
constant lines over the training range, so one chart shows the learning curve against the
heuristics' levels on the same held-out seeds.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import HParam

from gpu_sched_agents.rl.best import SELECT_ON, best_record, read_best, write_best
from gpu_sched_env.core.io import atomic_write_table

SUMMARY_METRICS = ("miss_pct", "mean_wait_min", "mean_tardiness_min", "cost_usd", "tight_miss_pct")
EVAL_METRICS = (*SUMMARY_METRICS, "objective")
log = logging.getLogger(__name__)  # Hydra sends it to the console and the run's train.log
PLOT = (("miss_pct", "miss [%]"), ("mean_wait_min", "mean wait [min]"))  # CGRSP's learning-curve panels


class EpisodeMetricsCallback(BaseCallback):
    """Log each finished training episode's metrics (``episode/``) and reward parts (``reward_parts/``).

    ``metrics``: the keys of ``info["summary"]`` logged (CGRSP's by default).
    """

    def __init__(self, metrics: tuple[str, ...] = SUMMARY_METRICS) -> None:
        super().__init__()
        self.metrics = tuple(metrics)

    def _init_callback(self) -> None:
        n = self.training_env.num_envs
        self._parts = [dict() for _ in range(n)]
        self._illegal = 0

    def _on_step(self) -> bool:
        for i, (done, info) in enumerate(zip(self.locals["dones"], self.locals["infos"])):
            for k, v in info.get("reward_parts", {}).items():
                self._parts[i][k] = self._parts[i].get(k, 0.0) + float(v)
            self._illegal += bool(info.get("illegal_action", False))
            if done and "summary" in info:
                s = info["summary"]
                for m in self.metrics:
                    self.logger.record_mean(f"episode/{m}", float(s[m]))
                for k, v in self._parts[i].items():
                    self.logger.record_mean(f"reward_parts/{k}", v)
                self._parts[i] = {}
        self.logger.record("train/illegal_actions", self._illegal)
        return True

    def resume_state(self) -> dict[str, Any]:
        """What a checkpoint keeps: each env's reward parts of its unfinished episode, the illegal-action count."""
        return {"parts": [dict(p) for p in self._parts], "illegal": self._illegal}

    def restore_state(self, state: dict[str, Any]) -> None:
        self._parts = [dict(p) for p in state["parts"]]
        self._illegal = int(state["illegal"])


class EvalCallback(BaseCallback):
    """Every ``eval_freq`` steps: evaluate on fixed held-out seeds, log ``eval/``, keep the best.

    The best model minimises the mean of the env's own objective (Σ_k weight_k · part_k with
    the weights the agent is trained on) over the selection seeds. Each evaluation is also
    appended to ``learning_curve.csv`` and drawn in ``learning_curve.png`` (miss % and mean
    wait against steps, the heuristics' levels on the same seeds as horizontal lines).
    ``metrics`` are the columns logged (CGRSP's by default, ``objective`` among them) and ``plot``
    the two drawn, each with its axis label.
    """

    def __init__(
        self,
        evaluate_fn: Any,
        eval_freq: int,
        run_dir: Path,
        heuristics: dict[str, dict[str, float]],
        total_timesteps: int,
        hparams: dict[str, Any],
        eval_at_start: bool = False,
        metrics: tuple[str, ...] = EVAL_METRICS,
        plot: tuple[tuple[str, str], ...] = PLOT,
    ) -> None:
        super().__init__()
        self.metrics = tuple(metrics)
        self.plot = tuple(plot)
        self.eval_at_start = eval_at_start
        self.evaluate_fn = evaluate_fn
        self.eval_freq = int(eval_freq)
        self.run_dir = Path(run_dir)
        self.heuristics = heuristics
        self.total_timesteps = int(total_timesteps)
        self.hparams = hparams
        self._next = 0
        kept = read_best(self.run_dir)  # a resumed run keeps the best of its first part
        self.best = kept["select_key"][0] if kept is not None else float("inf")
        curve = self.run_dir / "learning_curve.csv"
        self.curve = pd.read_csv(curve).to_dict("records") if curve.exists() else []

    def _on_training_start(self) -> None:
        self._next = (self.num_timesteps // self.eval_freq + 1) * self.eval_freq
        metric_dict = {f"eval/{m}": 0.0 for m, _ in self.plot}
        self.logger.record("hparams", HParam(self.hparams, metric_dict), exclude=("stdout", "log", "json", "csv"))
        self._write_heuristics()
        if self.eval_at_start:  # e.g. the behaviour-cloned policy before any RL update
            self.run_eval()

    def _write_heuristics(self) -> None:
        write_heuristic_runs(
            Path(self.logger.dir).parent if self.logger.dir else self.run_dir / "tb",
            self.heuristics,
            self.total_timesteps,
        )

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self._next += self.eval_freq
            self.run_eval()
        return True

    def _on_training_end(self) -> None:
        self.run_eval()

    def resume_state(self) -> dict[str, Any]:
        """What a checkpoint keeps: the next evaluation's step, the best objective, the curve's rows."""
        return {"next": int(self._next), "best": float(self.best), "curve": [dict(r) for r in self.curve]}

    def restore_state(self, state: dict[str, Any]) -> None:
        """Continue from a checkpoint: rows evaluated after it (by the run that was stopped) are dropped."""
        self._next, self.best, self.curve = int(state["next"]), float(state["best"]), [dict(r) for r in state["curve"]]

    def run_eval(self) -> dict[str, float]:
        df = self.evaluate_fn(self.model)
        means = {m: float(df[m].mean()) for m in self.metrics}
        for m, v in means.items():
            self.logger.record(f"eval/{m}", v)
        self.logger.dump(self.num_timesteps)
        improved = means[SELECT_ON] < self.best
        log.info(
            f"step {int(self.num_timesteps)}/{self.total_timesteps}: held-out "
            + ", ".join(f"{m} {v:.4g}" for m, v in means.items())
            + (" (new best)" if improved else f" (best {SELECT_ON} {self.best:.4g})")
        )
        if improved:
            self.best = means[SELECT_ON]
            self.model.save(self.run_dir / "best_model")
            write_best(self.run_dir, best_record(self.num_timesteps, "objective", [self.best], means))
        self.curve = [r for r in self.curve if r["timesteps"] != self.num_timesteps] + [
            {"timesteps": int(self.num_timesteps), **means}
        ]
        atomic_write_table(self.run_dir / "learning_curve.csv", pd.DataFrame(self.curve))
        learning_curve_figure(pd.DataFrame(self.curve), self.heuristics, self.run_dir / "learning_curve.png", self.plot)
        return means


def write_heuristic_runs(tb: Path, heuristics: dict[str, dict[str, float]], total_timesteps: int) -> None:
    """One TensorBoard run ``tb/heuristic_<name>`` per baseline.

    Each run holds the baseline's ``eval/*`` means as flat lines (kept if present).
    """
    from torch.utils.tensorboard import SummaryWriter

    for name, means in heuristics.items():
        d = Path(tb) / f"heuristic_{name}"
        if d.exists():
            continue
        w = SummaryWriter(str(d))
        for step in (0, total_timesteps):
            for m, v in means.items():
                w.add_scalar(f"eval/{m}", v, step)
        w.close()


def learning_curve_figure(
    curve: pd.DataFrame, heuristics: dict[str, dict[str, float]], path: Path, plot: tuple[tuple[str, str], ...] = PLOT
) -> Path:
    """Held-out metrics (``plot``: CGRSP's miss % and mean wait) against steps, heuristics as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    cmap = plt.get_cmap("tab20")
    for ax, (m, label) in zip(axes, plot):
        for i, (name, means) in enumerate(sorted(heuristics.items())):
            ax.axhline(means[m], color=cmap(i % 20), lw=1, ls="--", label=name)
        seen = curve.dropna(subset=[m]) if m in curve else curve.iloc[:0]  # rows of a selection alone have no eval/*
        ax.plot(seen.timesteps, seen[m], "k-o", lw=2, ms=4, label="learned")
        ax.set_xlabel("training steps")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1000:g}k" if x else "0"))
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, ncol=2, loc="upper right")
    fig.suptitle("held-out selection seeds: learned policy (deterministic) vs heuristics")
    fig.tight_layout()
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return path


def flat_hparams(cfg: Any, env_config: Any) -> dict[str, Any]:
    """Scalar hyper-parameters for TensorBoard's HParams tab: the algorithm's and the env config whole."""
    out: dict[str, Any] = {"algo": cfg.algo.name, "day": cfg.day.name, "seed": int(cfg.seed)}
    for k, v in cfg.algo.items():
        if isinstance(v, (int, float, str, bool)) and k != "name":
            out[f"algo.{k}"] = v
        elif k == "net_arch":
            out["algo.net_arch"] = "x".join(str(x) for x in v)
    for k, v in env_config.as_dict().items():  # every env setting (dataclasses.asdict), nested ones flattened
        for kk, vv in v.items() if isinstance(v, dict) else [("", v)]:
            out[f"env.{k}" + (f".{kk}" if kk else "")] = (
                "none" if vv is None else vv if isinstance(vv, (int, float, str, bool)) else str(vv)
            )
    out.update({"train.total_timesteps": int(cfg.train.total_timesteps), "train.n_envs": int(cfg.train.n_envs)})
    return {k: (float(v) if isinstance(v, (np.floating,)) else v) for k, v in out.items()}
