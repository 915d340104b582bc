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
from gpu_sched_agents.rl.ppo_jax.config import build_trainer, jax_device, selection_regimes, training_env
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
    from gpu_sched_env.core.jaxcache import use_compile_cache

    use_compile_cache()  # a rerun (or a run of the same shapes) loads the compiled update and days
    import jax

    from gpu_sched_agents.rl.ppo_jax.jax_eval import EPISODE_KEYS
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    env = training_env(cfg, config, records=False)  # training reads no per-job records
    eval_env = JaxCGRSP.from_config(config, records=False) if env.is_mixed else env  # the JAX rules' single regime
    device = jax_device(str(cfg.train.device))
    (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    with jax.default_device(device):
        _, hp, trainer = build_trainer(cfg, config, env, episode_keys=EPISODE_KEYS)
        runner = jax.jit(trainer.init)(jax.random.PRNGKey(int(cfg.seed)))
        if ckpt is not None:
            runner = load_runner(ckpt, runner)
            log.info(f"resuming {run_dir} from {ckpt.name} at {int(runner.update) * hp.steps_per_update} steps")
        update = jax.jit(trainer.update)
        total = hp.n_updates * hp.steps_per_update
        writer, evaluate = _logging(cfg, config, eval_env, run_dir, total, fresh=ckpt is None)
        state = read_state(ckpt) if ckpt is not None else None  # None: fresh, or an old checkpoint (warned)
        if state is not None:
            evaluate.restore_state(state["evaluator"])
        steps0 = int(runner.update) * hp.steps_per_update
        t0 = time.perf_counter()
        runner, steps = _train_loop(cfg, hp, env, update, runner, run_dir, writer, evaluate)
        train_s = time.perf_counter() - t0
        params = jax.device_get(runner.train_state.params)
        save_policy(run_dir / "final_model.npz", params, env.obs_dim, env.n_actions)
        # resumed at the end of the budget: the final policy is the only one
        if not (run_dir / "best_model.npz").exists():
            evaluate(params, steps, env.obs_dim, env.n_actions)
        evaluate.finish()  # algo.recheck_days' second stage, if on
        writer.close()
        log.info(
            f"trained {steps - steps0} steps in {train_s:.0f} s ({(steps - steps0) / max(train_s, 1e-9):.0f} steps/s)"
        )
        out = _final_evaluations(cfg, config, eval_env, run_dir, train_s)
    return out


def _logging(
    cfg: DictConfig, config: CGRSPEnvConfig, eval_env: Any, run_dir: Path, total: int, fresh: bool
) -> tuple[Any, Evaluator]:
    """The heuristics' TensorBoard lines, the learner's writer (hyper-parameters on a ``fresh`` run), its evaluator.

    ``eval_env``: the JAX env of the run's regime (``algo.select_days``' days are played there).
    """
    from torch.utils.tensorboard import SummaryWriter

    from gpu_sched_agents.rl.compare import heuristic_runs
    from gpu_sched_agents.rl.train import baselines, with_objective

    eval_seeds = [int(s) for s in cfg.train.eval_seeds]
    heur = with_objective(heuristic_runs(baselines(), eval_seeds, config.day, config.params), config)
    heur_means = {name: {m: float(g[m].mean()) for m in EVAL_METRICS} for name, g in heur.groupby("policy")}
    write_heuristic_runs(run_dir / "tb", heur_means, total)
    writer = SummaryWriter(str(run_dir / "tb" / "learned_1"))
    if fresh:
        from torch.utils.tensorboard.summary import hparams

        for event in hparams(flat_hparams(cfg, config), {"eval/miss_pct": 0.0, "eval/mean_wait_min": 0.0}):
            writer.file_writer.add_summary(event)
    selection = _selector(cfg, config, eval_env)
    return writer, Evaluator(config, eval_seeds, run_dir, heur_means, writer, selection)


def _selector(cfg: DictConfig, config: CGRSPEnvConfig, eval_env: Any) -> Any:
    """``algo.select_days`` > 0: the run's selection on native JAX days, against ``algo.jax_eval_rules[0]``.

    On the run's regime (``eval_env``) lexicographic; with ``algo.select_regimes`` the worst regime's.
    """
    from gpu_sched_agents.rl.ppo_jax.selector import Selector

    n_days = int(cfg.algo.get("select_days", 0))
    if not n_days:
        return None
    regimes = selection_regimes(cfg, config)
    selector = Selector.play_rule(
        regimes or {"": eval_env},
        n_days,
        "worst_regime" if regimes else "lexicographic",
        str(cfg.algo.jax_eval_rules[0]),
        recheck_days=int(cfg.algo.get("recheck_days", 0)),
        recheck_top=int(cfg.algo.recheck_top),
    )
    for name, (wait, miss) in selector.rules.items():
        log.info(
            f"selection on {n_days} native JAX days{f' of {name}' if name else ''}: {selector.rule} waits "
            f"{wait:.2f} min and misses {miss:.4f} % there"
        )
    return selector


def _train_loop(
    cfg: DictConfig, hp: Any, env: Any, update: Any, runner: Any, run_dir: Path, writer: Any, evaluate: Evaluator
) -> tuple[Any, int]:
    """Update until the budget; log each update, checkpoint and evaluate on schedule. Returns the runner and steps."""
    import jax

    total = hp.n_updates * hp.steps_per_update
    eval_freq, ckpt_freq = int(cfg.train.eval_freq), int(cfg.train.checkpoint_freq)
    select_every = cfg.algo.get("select_every")
    select_freq = eval_freq if select_every is None else int(select_every)
    steps = int(runner.update) * hp.steps_per_update
    while steps < total:
        t_upd = time.perf_counter()
        runner, metrics = update(runner)
        metrics = jax.device_get(metrics)
        before, steps = steps, steps + hp.steps_per_update
        _log_update(writer, metrics, steps, hp.steps_per_update / (time.perf_counter() - t_upd))
        params = jax.device_get(runner.train_state.params)
        on_v0 = steps // eval_freq > before // eval_freq or steps >= total
        select = steps // select_freq > before // select_freq or steps >= total
        if on_v0 or (select and evaluate.selection is not None):
            means = evaluate(params, steps, env.obs_dim, env.n_actions, on_v0=on_v0, select=select)
            parts = (
                []
                if "mean_wait_min" not in means
                else [f"eval mean wait {means['mean_wait_min']:.2f} min, miss {means['miss_pct']:.2f} %"]
            )
            parts += [describe(evaluate.selection, means)] if select and evaluate.selection is not None else []
            log.info(f"{steps} steps: {'; '.join(parts)}")
        if steps // ckpt_freq > before // ckpt_freq or steps >= total:  # after the evaluations: their rows are in it
            path = run_dir / "checkpoints" / f"model_{steps}_steps.npz"
            write_state(path, {"timesteps": steps, "evaluator": evaluate.resume_state()})
            save_runner(path, runner)  # last: a runner file means its checkpoint is complete
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


__all__ = ["load_runner", "save_runner", "train_ppo_jax"]
