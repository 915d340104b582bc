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
import pandas as pd
from omegaconf import DictConfig

from gpu_sched_agents.rl.best import best_record, read_best, write_best
from gpu_sched_agents.rl.callbacks import (
    EVAL_METRICS,
    SELECT_ON,
    flat_hparams,
    learning_curve_figure,
    write_heuristic_runs,
)
from gpu_sched_agents.rl.ppo_jax import require_jax
from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy, actor_arrays, load_policy, save_policy
from gpu_sched_agents.rl.resume import read_state, write_state
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.core.io import atomic_write_table

log = logging.getLogger(__name__)
DEVICES = ("cpu", "gpu")


def hyper(cfg: DictConfig) -> Any:
    """:class:`~gpu_sched_agents.rl.ppo_jax.ppo.PPOHyper` of a composed ``algo=ppo_jax`` config (the config's alone)."""
    from gpu_sched_agents.rl.ppo_jax.ppo import PPOHyper

    a, t = cfg.algo, cfg.train
    tau = a.get("tau_s")
    return PPOHyper(
        tau_s=None if tau is None else float(tau),
        n_envs=int(t.n_envs),
        n_steps=int(a.n_steps),
        total_timesteps=int(t.total_timesteps),
        batch_size=int(a.batch_size),
        n_epochs=int(a.n_epochs),
        learning_rate=float(a.learning_rate),
        lr_final_frac=float(a.lr_final_frac),
        gamma=float(a.gamma),
        gae_lambda=float(a.gae_lambda),
        clip_range=float(a.clip_range),
        ent_coef=float(a.ent_coef),
        vf_coef=float(a.vf_coef),
        max_grad_norm=float(a.max_grad_norm),
        net_arch=tuple(int(w) for w in a.net_arch),
        normalize_reward=bool(t.normalize_reward),
        reward_norm=str(a.get("reward_norm", "global")),
    )


def validate_returns(a: DictConfig, config: CGRSPEnvConfig) -> None:
    """The returns settings of ``algo=ppo_jax`` (ConfigError naming field, value and what is allowed)."""
    check_number("algo.gamma", a.gamma, lo=0.0, hi=1.0, lo_open=True)
    if a.tau_s is not None:
        check_number("algo.tau_s", a.tau_s, lo=0.0, lo_open=True)
        if config.shaping != "none":
            raise ConfigError(
                f"algo.tau_s = {a.tau_s!r} with env.shaping = {config.shaping!r}: the shaping term γ·Φ′ − Φ uses one "
                "γ per step; use env.shaping=none with time-aware returns (algo.tau_s=null keeps the per-decision γ)"
            )


def jax_device(name: str) -> Any:
    """The JAX device for ``train.device`` (ConfigError if ``gpu`` is asked and JAX sees none)."""
    import jax

    check_choice("train.device", name, DEVICES)
    try:
        return jax.devices(name)[0]
    except RuntimeError as e:
        raise ConfigError(
            f"train.device = {name!r}: JAX finds no {name} backend here ({e}); use train.device=cpu, or install jax "
            "with its CUDA plugin"
        ) from e


def validate_ppo_jax(cfg: DictConfig, config: CGRSPEnvConfig) -> None:
    """``algo=ppo_jax``'s checks beyond ``train.validate``'s; raises ConfigError before anything is written."""
    require_jax()
    a, t = cfg.algo, cfg.train
    for name in ("n_steps", "batch_size", "n_epochs"):
        check_number(f"algo.{name}", a[name], lo=1, integer=True)
    check_number("algo.gae_lambda", a.gae_lambda, lo=0.0, hi=1.0)
    check_number("algo.clip_range", a.clip_range, lo=0.0, lo_open=True)
    check_number("algo.ent_coef", a.ent_coef, lo=0.0)
    check_number("algo.vf_coef", a.vf_coef, lo=0.0)
    check_number("algo.max_grad_norm", a.max_grad_norm, lo=0.0, lo_open=True)
    check_number("algo.jax_eval_seeds", a.jax_eval_seeds, lo=0, hi=10_000, integer=True)
    check_number("algo.select_days", a.select_days, lo=0, hi=10_000, integer=True)
    if a.select_every is not None:
        if not int(a.select_days):
            raise ConfigError(
                f"algo.select_every = {a.select_every!r} with algo.select_days = 0: it would be ignored; allowed: "
                "algo.select_every=null, or algo.select_days > 0"
            )
        check_number("algo.select_every", a.select_every, lo=1, integer=True)
    _validate_select_regimes(a)
    _validate_recheck(a)
    if int(a.select_days) and not a.jax_eval_rules:
        raise ConfigError(
            f"algo.select_days = {a.select_days} with algo.jax_eval_rules = []: the selection ranks against the "
            "first rule's misses; name a rule, or algo.select_days=0"
        )
    rollout = int(t.n_envs) * int(a.n_steps)
    if rollout % int(a.batch_size):
        raise ConfigError(
            f"algo.batch_size = {a.batch_size}: must divide one rollout, train.n_envs × algo.n_steps = {t.n_envs} × "
            f"{a.n_steps} = {rollout}"
        )
    if int(t.total_timesteps) < rollout:
        raise ConfigError(
            f"train.total_timesteps = {t.total_timesteps}: less than one update (train.n_envs × algo.n_steps = "
            f"{rollout} steps)"
        )
    if t.vec_env != "dummy":
        raise ConfigError(
            f"train.vec_env = {t.vec_env!r}: algo=ppo_jax steps its envs vmapped in one process; use "
            "train.vec_env=dummy"
        )
    jax_device(str(t.device))
    from gpu_sched_env.cgrsp.jax import RULES

    for rule in a.jax_eval_rules:
        check_choice("algo.jax_eval_rules[]", rule, RULES)
    validate_returns(a, config)
    _validate_reward_norm(cfg)

    training_env(cfg, config)  # ConfigError listing what the JAX env implements, or naming a bad stock mix entry


def _validate_reward_norm(cfg: DictConfig) -> None:
    """``algo.reward_norm``: one of REWARD_NORMS; ``regime`` only on a mixed env with the reward scaled."""
    from gpu_sched_agents.rl.ppo_jax.ppo import REWARD_NORMS

    norm = cfg.algo.get("reward_norm", "global")
    check_choice("algo.reward_norm", norm, REWARD_NORMS)
    if norm != "regime":
        return
    if cfg.day.name != "mixed":
        raise ConfigError(
            f"algo.reward_norm = 'regime' with day = {cfg.day.name!r}: one regime has one scale; allowed: day=mixed "
            "(the generalist's day mix × stock models), or algo.reward_norm=global"
        )
    if not cfg.train.normalize_reward:
        raise ConfigError(
            "algo.reward_norm = 'regime' with train.normalize_reward = false: there is no running scale to split; "
            "allowed: train.normalize_reward=true, or algo.reward_norm=global"
        )


def stock_mix(cfg: DictConfig, config: CGRSPEnvConfig) -> list[str]:
    """``day.stock_mix``, or the env's own stock model as the one entry (``fresh`` or its dwell D [s])."""
    given = cfg.day.get("stock_mix")
    if given is not None:
        return [str(x) for x in given]
    p = config.sim_params()
    return ["fresh" if p.stock_process == "fresh" else f"{p.stock_dwell_s:g}"]


def training_env(cfg: DictConfig, config: CGRSPEnvConfig, **kwargs: Any) -> Any:
    """The JAX env trained on: ``config``'s, or for ``day=mixed`` a mixed env (``day.day_mix`` × the stock mix).

    ``config`` is the evaluation env's (for ``day=mixed`` the hectic day, :func:`~gpu_sched_agents.rl.envs.env_config`);
    the mixed env shares every other setting with it.
    """
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    if cfg.day.name == "mixed":
        from gpu_sched_agents.rl.envs import day_mix
        from gpu_sched_env.cgrsp.jax.mix import regimes_of

        days = day_mix(cfg)
        regimes_of(stock_mix(cfg, config), days, field="day.stock_mix")  # the error names the Hydra field
        return JaxCGRSP.mixed(config, stocks=stock_mix(cfg, config), days=days, **kwargs)
    return JaxCGRSP.from_config(config, **kwargs)


def build_trainer(
    cfg: DictConfig, config: CGRSPEnvConfig, env: Any = None, episode_keys: tuple[str, ...] = ()
) -> tuple[Any, Any, Any]:
    """``(env, hyper-parameters, Trainer)`` of a composed ``algo=ppo_jax`` config: what every trainer of it runs.

    ``env``: the JAX env trained on (default: :func:`training_env` without per-job records);
    ``episode_keys``: the per-episode metrics the update reports (``train.py``'s ``episode/*``). One
    place builds the jitted update (:func:`~gpu_sched_agents.rl.ppo_jax.ppo.make_train`) for
    ``train.py``, the studies' multi-seed training and the benchmarks.
    """
    from gpu_sched_agents.rl.ppo_jax.ppo import make_train

    env = training_env(cfg, config, records=False) if env is None else env
    hp = hyper(cfg)
    return env, hp, make_train(hp, env, env.default_params, episode_keys=episode_keys)


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


def _validate_select_regimes(a: DictConfig) -> None:
    """``algo.select_regimes``: regime names (:func:`~gpu_sched_env.cgrsp.stock.parse_regime`), each once, with days."""
    from gpu_sched_env.cgrsp.stock import parse_regime

    regimes = list(a.get("select_regimes") or [])
    for i, name in enumerate(regimes):
        try:
            parse_regime(name)
        except ConfigError as e:
            raise ConfigError(f"algo.select_regimes[{i}]: {e}") from None
    if len(set(regimes)) < len(regimes):
        raise ConfigError(f"algo.select_regimes = {regimes}: a regime named twice; allowed: each regime once")
    if regimes and not int(a.select_days):
        raise ConfigError(
            f"algo.select_regimes = {regimes} with algo.select_days = 0: no days to play them on; allowed: "
            "algo.select_days > 0, or algo.select_regimes=[]"
        )


def _validate_recheck(a: DictConfig) -> None:
    """``algo.recheck_days`` / ``algo.recheck_top``: the second stage of a selection on JAX days (any regimes)."""
    from gpu_sched_agents.rl.ppo_jax.constraint import RECHECK_TOP, check_recheck

    days, top = a.get("recheck_days", 0), a.get("recheck_top", RECHECK_TOP)
    check_number("algo.recheck_days", days, lo=0, integer=True)
    check_number("algo.recheck_top", top, lo=1, integer=True)
    how = None
    if not int(a.select_days):
        how = "algo.select_days = 0 (no selection days: best_model is picked on CGRSP-v0's eval seeds)"
    check_recheck("algo.", int(days), int(top), int(a.select_days), how)


CANDIDATES = "select_candidates.csv"  # the selection's evaluations when algo.recheck_days > 0 (Evaluator.finish)


def _select_means(selector: Any, row: dict[str, float]) -> dict[str, float]:
    """An evaluation's ``select_*`` means (learning curve, TensorBoard's ``select/*``, ``best.json``).

    One regime: ``select_mean_wait_min`` and ``select_miss_pct``; several: ``select_<regime>_wait``
    and ``select_<regime>_miss`` per regime and ``select_worst_excess`` (the worst regime's wait excess
    in units of the margin).
    """
    means = {f"select_{c}": row[c] for c in selector.columns}
    return means if selector.by == "lexicographic" else means | {"select_worst_excess": selector.key(row)[1]}


def _describe(selector: Any, means: dict[str, float]) -> str:
    """The training log's words for an evaluation on the selection days."""
    if selector.by == "lexicographic":
        return f"selection days {means['select_mean_wait_min']:.2f} min, miss {means['select_miss_pct']:.3f} %"
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
        self.candidates = pd.read_csv(path).to_dict("records") if self.recheck and path.exists() else []
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
            if self.recheck:
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
        """The selection's evaluations so far, indexed by ``steps`` (the selector's columns)."""
        return pd.DataFrame(self.candidates, columns=["steps", *self.selection.columns]).set_index("steps")

    def _keep_candidate(self, params: Any, steps: int, row: dict[str, float], obs_dim: int, n_actions: int) -> None:
        """Record an evaluation; keep the actors of the ``recheck_top`` best so far (``candidates/``), drop the rest."""
        row = {c: row[c] for c in self.selection.columns}
        self.candidates = [r for r in self.candidates if r["steps"] != steps] + [{"steps": int(steps), **row}]
        top = set(self.selection.best(self._table(), self.selection.recheck_top))
        folder = self.run_dir / "candidates"
        folder.mkdir(exist_ok=True)
        if steps in top:
            save_policy(folder / f"model_{steps}.npz", params, obs_dim, n_actions)
        atomic_write_table(self.run_dir / CANDIDATES, pd.DataFrame(self.candidates))
        for f in folder.glob("model_*.npz"):
            if int(f.stem.removeprefix("model_")) not in top:
                f.unlink()

    def finish(self) -> None:
        """The second stage (``algo.recheck_days``): replay the kept candidates, pick on both stages pooled.

        ``best_model.npz`` becomes the pick and ``best.json`` says so (``recheck``); the table with
        the second stage's columns replaces ``select_candidates.csv``. Done once: a rerun of a
        finished run finds ``best.json``'s ``recheck`` (made with every evaluation) and leaves it.
        """
        import shutil

        if not self.recheck or not self.candidates:
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


def selection_regimes(cfg: DictConfig, config: CGRSPEnvConfig) -> dict[str, Any] | None:
    """``algo.select_regimes``' JAX envs: the run's design (``config``) on each regime's day and stock model."""
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from gpu_sched_env.cgrsp.stock import regime_config

    names = list(cfg.algo.get("select_regimes") or [])
    return {r: JaxCGRSP.from_config(regime_config(config, r), records=False) for r in names} or None


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
            parts += [_describe(evaluate.selection, means)] if select and evaluate.selection is not None else []
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


__all__ = [
    "build_trainer",
    "hyper",
    "jax_device",
    "load_runner",
    "save_runner",
    "stock_mix",
    "train_ppo_jax",
    "training_env",
    "validate_ppo_jax",
    "validate_returns",
]
