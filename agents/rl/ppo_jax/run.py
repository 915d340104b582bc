"""``python train.py algo=ppo_jax``: the training loop behind ``train()``'s run folder.

``gpu_sched_agents.rl.train.train`` validates the config, makes the run folder, writes
``config.yaml`` and ``command.txt`` and hands over here (the registry's ``trainer``). The files
and tags are ``algo=ppo``'s: ``tb/learned_1`` (``eval/*`` on the selection seeds, ``train/*``,
``rollout/ep_rew_mean``, ``episode/*``, ``time/fps``), ``tb/heuristic_<name>`` (the baselines'
``eval/*`` levels), ``best_model`` + ``best.json`` (lowest env objective on the selection seeds),
``learning_curve.{csv,png}``, ``final_model``, ``final_eval.*`` (CGRSP-v0, the same table as
``algo=ppo``); the models are exported actors (``.npz``, :mod:`.export`). Checkpoints
(``checkpoints/model_<steps>_steps.npz``) hold the whole runner state (network, Adam, reward
statistics, env states, key), so a resumed run continues the same update sequence; each is
written after that step's evaluations, beside its ``.state`` (the evaluator's best key, curve
rows and candidates, :mod:`gpu_sched_agents.rl.resume`), so a resumed run's curve and best model
are the uninterrupted run's.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig

from gpu_sched_agents.rl.callbacks import EVAL_METRICS, flat_hparams, write_heuristic_runs
from gpu_sched_agents.rl.ppo_jax.config import build_trainer, jax_device, select_by, selection_regimes, training_env
from gpu_sched_agents.rl.ppo_jax.evaluator import Evaluator, describe
from gpu_sched_agents.rl.ppo_jax.export import load_policy, save_policy
from gpu_sched_agents.rl.resume import read_state, write_state
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.core.errors import ConfigError

log = logging.getLogger(__name__)


def save_runner(path: Path, runner: Any) -> None:
    """The runner state's leaves as ``leaf_<i>`` arrays (``.npz``, atomic)."""
    import jax

    leaves = jax.tree_util.tree_leaves(jax.device_get(runner))
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **{f"leaf_{i}": np.asarray(x) for i, x in enumerate(leaves)})
    tmp.replace(path)


def load_runner(path: Path, like: Any) -> Any:
    """A runner state from ``path`` shaped as ``like`` (ConfigError if the shapes differ)."""
    import jax

    leaves, treedef = jax.tree_util.tree_flatten(like)
    with np.load(path) as z:
        saved = [z[f"leaf_{i}"] for i in range(len(z.files))]
    shapes = [np.shape(x) for x in leaves]
    if [s.shape for s in saved] != shapes:
        raise ConfigError(
            f"resume: {path} holds a runner of another shape (network, n_envs or env) than this config builds"
        )
    return jax.tree_util.tree_unflatten(treedef, [jax.numpy.asarray(s, dtype=x.dtype) for s, x in zip(saved, leaves)])


# SB3's tags for the same quantities (train/*), so TensorBoard charts line up with algo=ppo's
_TAGS = {
    "policy_loss": "train/policy_gradient_loss",
    "value_loss": "train/value_loss",
    "approx_kl": "train/approx_kl",
    "clip_fraction": "train/clip_fraction",
    "explained_variance": "train/explained_variance",
    "episode_return": "rollout/ep_rew_mean",
    "replayed_days": "rollout/replayed_days",
}


def _log_update(writer: Any, metrics: dict[str, Any], steps: int, fps: float) -> None:
    for k, v in metrics.items():
        v = float(v)
        if np.isnan(v):
            continue
        if k in _TAGS:
            writer.add_scalar(_TAGS[k], v, steps)
        elif k == "entropy":
            writer.add_scalar("train/entropy_loss", -v, steps)
        elif k.startswith("episode/"):
            writer.add_scalar(k, v, steps)
    writer.add_scalar("time/fps", fps, steps)


def train_ppo_jax(cfg: DictConfig, config: CGRSPEnvConfig, run_dir: Path, ckpt: Path | None) -> dict[str, float]:
    """Train (or resume), evaluate and write ``run_dir`` as ``algo=ppo``'s; return the final means."""
    return train_ppo_jax_seeds([(cfg, run_dir, ckpt)], config, batched=False)[0]


def train_ppo_jax_seeds(
    runs: list[tuple[DictConfig, Path, Path | None]], config: CGRSPEnvConfig, batched: bool = True
) -> list[dict[str, float]]:
    """Train the seeds of ``runs`` (config, run folder, checkpoint or None) side by side; each folder as one run's.

    The configs differ in ``seed`` alone. ``batched`` (``train.seeds``, however many): ``trainer.init``
    and ``trainer.update`` ``jax.vmap``-ped over the seeds' keys, one jitted update for all (each
    network what the seed gets alone, to float rounding: ``tests/rl/test_ppo_jax_vmap.py``; bit for
    bit the studies' multi-seed training); else (one run of ``seed``) the update unbatched. Every
    folder gets its own curve, TensorBoard run, checkpoints, best and final models and final tables.
    Resumed seeds continue from checkpoints of one step (the caller's choice).
    """
    from gpu_sched_env.core.jaxcache import use_compile_cache

    use_compile_cache()  # a rerun (or a run of the same shapes) loads the compiled update and days
    import jax

    from gpu_sched_agents.rl.ppo_jax.jax_eval import EPISODE_KEYS
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    cfg = runs[0][0]
    env = training_env(cfg, config, records=False)  # training reads no per-job records
    eval_env = JaxCGRSP.from_config(config, records=False) if env.is_mixed else env  # the JAX rules' single regime
    with jax.default_device(jax_device(str(cfg.train.device))):
        _, hp, trainer = build_trainer(cfg, config, env, episode_keys=EPISODE_KEYS)
        runner, update = _start(trainer, runs, hp.steps_per_update, batched)
        steps0 = _updates(runner) * hp.steps_per_update
        heur = _heuristic_means(cfg, config)
        sinks = [_Sink(c, d, k, config, eval_env, heur, hp.n_updates * hp.steps_per_update) for c, d, k in runs]
        t0 = time.perf_counter()
        runner, steps = _train_loop(cfg, hp, env, update, runner, sinks, batched)
        train_s = time.perf_counter() - t0
        for i, sink in enumerate(sinks):
            sink.finish(jax.device_get(_part(runner, i, batched).train_state.params), steps, env)
        n = steps - steps0
        log.info(f"trained {n} steps{_of(runs)} in {train_s:.0f} s ({n * len(runs) / max(train_s, 1e-9):.0f} steps/s)")
        return [_final_evaluations(c, config, eval_env, d, train_s) for c, d, _ in runs]


def _of(runs: list[Any]) -> str:
    return f" of {len(runs)} seeds side by side" if len(runs) > 1 else ""


def _part(tree: Any, i: int, batched: bool) -> Any:
    """Seed ``i``'s slice of a tree batched over the seeds (the tree itself when not ``batched``)."""
    import jax

    return jax.tree_util.tree_map(lambda x: x[i], tree) if batched else tree


def _updates(runner: Any) -> int:
    """The updates done (every seed of a batch is at the same one)."""
    return int(np.asarray(runner.update).reshape(-1)[0])


def _start(
    trainer: Any, runs: list[tuple[DictConfig, Path, Path | None]], per_update: int, batched: bool
) -> tuple[Any, Any]:
    """The runner (fresh from the seeds' keys, or each seed's checkpoint) and the jitted update."""
    import jax

    keys = [jax.random.PRNGKey(int(c.seed)) for c, _, _ in runs]
    if not batched:
        runner, update = jax.jit(trainer.init)(keys[0]), jax.jit(trainer.update)
    else:
        runner = jax.jit(jax.vmap(trainer.init))(jax.numpy.stack(keys))
        update = jax.jit(jax.vmap(trainer.update))
    ckpts = [k for _, _, k in runs]
    if any(k is not None for k in ckpts):
        if any(k is None for k in ckpts):
            raise ConfigError("resume: every seed of a batch resumes from a checkpoint, or none does")
        parts = [load_runner(k, _part(runner, i, batched)) for i, k in enumerate(ckpts)]
        runner = parts[0] if not batched else jax.tree_util.tree_map(lambda *x: jax.numpy.stack(x), *parts)
        for (_, d, k), part in zip(runs, parts):
            log.info(f"resuming {d} from {k.name} at {int(part.update) * per_update} steps")
    return runner, update


def _heuristic_means(cfg: DictConfig, config: CGRSPEnvConfig) -> dict[str, dict[str, float]]:
    """The heuristics' means on the evaluation seeds (TensorBoard's heuristic lines, the curve's figure)."""
    from gpu_sched_agents.rl.compare import heuristic_runs
    from gpu_sched_agents.rl.train import baselines, with_objective

    eval_seeds = [int(s) for s in cfg.train.eval_seeds]
    heur = with_objective(heuristic_runs(baselines(), eval_seeds, config.day, config.params), config)
    return {name: {m: float(g[m].mean()) for m in EVAL_METRICS} for name, g in heur.groupby("policy")}


class _Sink:
    """One seed's outputs: its run folder, TensorBoard writer (hyper-parameters on a fresh run) and evaluator."""

    def __init__(
        self,
        cfg: DictConfig,
        run_dir: Path,
        ckpt: Path | None,
        config: CGRSPEnvConfig,
        eval_env: Any,
        heur: dict[str, dict[str, float]],
        total: int,
    ) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.run_dir, self.label = run_dir, f"seed {int(cfg.seed)}: "
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        write_heuristic_runs(run_dir / "tb", heur, total)
        self.writer = SummaryWriter(str(run_dir / "tb" / "learned_1"))
        if ckpt is None:
            from torch.utils.tensorboard.summary import hparams

            for event in hparams(flat_hparams(cfg, config), {"eval/miss_pct": 0.0, "eval/mean_wait_min": 0.0}):
                self.writer.file_writer.add_summary(event)
        eval_seeds = [int(s) for s in cfg.train.eval_seeds]
        selection = _selector(cfg, config, eval_env)
        self.evaluate = Evaluator(config, eval_seeds, run_dir, heur, self.writer, selection)
        state = read_state(ckpt) if ckpt is not None else None  # None: fresh, or an old checkpoint (warned)
        if state is not None:
            self.evaluate.restore_state(state["evaluator"])

    def checkpoint(self, steps: int, runner: Any) -> None:
        """The runner and the evaluator's state at ``steps`` (after that step's evaluations: their rows are in it)."""
        path = self.run_dir / "checkpoints" / f"model_{steps}_steps.npz"
        write_state(path, {"timesteps": steps, "evaluator": self.evaluate.resume_state()})
        save_runner(path, runner)  # last: a runner file means its checkpoint is complete

    def finish(self, params: Any, steps: int, env: Any) -> None:
        """``final_model``; the final policy evaluated if nothing was kept yet; the second stage; close the writer."""
        save_policy(self.run_dir / "final_model.npz", params, env.obs_dim, env.n_actions)
        # resumed at the end of the budget: the final policy is the only one
        if not (self.run_dir / "best_model.npz").exists():
            self.evaluate(params, steps, env.obs_dim, env.n_actions)
        self.evaluate.finish()  # algo.recheck_days' second stage, if on
        self.writer.close()


def _selector(cfg: DictConfig, config: CGRSPEnvConfig, eval_env: Any) -> Any:
    """``algo.select_days`` > 0: the run's selection on native JAX days, against ``algo.jax_eval_rules[0]``.

    On the run's regime (``eval_env``) lexicographic, or by the selection objective alone
    (``algo.select_by=objective``, no rule played); with ``algo.select_regimes`` the worst regime's.
    """
    from gpu_sched_agents.rl.ppo_jax.selector import Selector

    n_days = int(cfg.algo.get("select_days", 0))
    if not n_days:
        return None
    regimes = selection_regimes(cfg, config)
    selector = Selector.play_rule(
        regimes or {"": eval_env},
        n_days,
        select_by(cfg.algo),
        str(cfg.algo.jax_eval_rules[0]),
        recheck_days=int(cfg.algo.get("recheck_days", 0)),
        recheck_top=int(cfg.algo.recheck_top),
    )
    for name, (wait, miss) in (selector.rules or {}).items():
        log.info(
            f"selection on {n_days} native JAX days{f' of {name}' if name else ''}: {selector.rule} waits "
            f"{wait:.2f} min and misses {miss:.4f} % there"
        )
    return selector


def _train_loop(
    cfg: DictConfig, hp: Any, env: Any, update: Any, runner: Any, sinks: list[_Sink], batched: bool
) -> tuple[Any, int]:
    """Update until the budget; log each update, checkpoint and evaluate on schedule. Returns the runner and steps."""
    import jax

    total = hp.n_updates * hp.steps_per_update
    eval_freq, ckpt_freq = int(cfg.train.eval_freq), int(cfg.train.checkpoint_freq)
    select_every = cfg.algo.get("select_every")
    select_freq = eval_freq if select_every is None else int(select_every)
    steps = _updates(runner) * hp.steps_per_update
    while steps < total:
        t_upd = time.perf_counter()
        runner, metrics = update(runner)
        metrics = jax.device_get(metrics)
        before, steps = steps, steps + hp.steps_per_update
        fps = hp.steps_per_update / (time.perf_counter() - t_upd)
        params = jax.device_get(runner.train_state.params)
        on_v0 = steps // eval_freq > before // eval_freq or steps >= total
        select = steps // select_freq > before // select_freq or steps >= total
        for i, sink in enumerate(sinks):
            _log_update(sink.writer, _part(metrics, i, batched), steps, fps)
            evaluate = sink.evaluate
            if on_v0 or (select and evaluate.selection is not None):
                means = evaluate(
                    _part(params, i, batched), steps, env.obs_dim, env.n_actions, on_v0=on_v0, select=select
                )
                parts = (
                    []
                    if "mean_wait_min" not in means
                    else [f"eval mean wait {means['mean_wait_min']:.2f} min, miss {means['miss_pct']:.2f} %"]
                )
                parts += [describe(evaluate.selection, means)] if select and evaluate.selection is not None else []
                log.info(f"{sink.label if batched else ''}{steps} steps: {'; '.join(parts)}")
        if steps // ckpt_freq > before // ckpt_freq or steps >= total:
            for i, sink in enumerate(sinks):
                sink.checkpoint(steps, _part(runner, i, batched))
    return runner, steps


def _final_evaluations(
    cfg: DictConfig, config: CGRSPEnvConfig, eval_env: Any, run_dir: Path, train_s: float
) -> dict[str, float]:
    """``final_eval.*`` on CGRSP-v0 and, beside it, the in-JAX evaluation of the best model; CGRSP-v0's means."""
    from gpu_sched_agents.rl.ppo_jax.jax_eval import final_jax_evaluation
    from gpu_sched_agents.rl.registry import get_algo
    from gpu_sched_agents.rl.train import final_evaluation

    # the in-JAX evaluation (XLA, GIL released) runs in a thread beside CGRSP-v0's (Python, one core)
    with ThreadPoolExecutor(1) as pool:
        n_jax = int(cfg.algo.jax_eval_seeds) if int(cfg.train.final_eval_seeds) else 0
        t1 = time.perf_counter()
        in_jax = (
            pool.submit(
                final_jax_evaluation,
                eval_env,
                load_policy(run_dir / "best_model.npz"),
                n_jax,
                run_dir,
                rules=list(cfg.algo.jax_eval_rules),
            )
            if n_jax
            else None
        )
        out = final_evaluation(cfg, get_algo("ppo_jax"), config, run_dir, train_s)
        if in_jax is not None:
            log.info(
                f"in-JAX evaluation on {n_jax} days ({time.perf_counter() - t1:.0f} "
                f"s):\n{in_jax.result().to_string(index=False)}"
            )
    return out


__all__ = ["load_runner", "save_runner", "train_ppo_jax", "train_ppo_jax_seeds"]
