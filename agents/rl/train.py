"""``train(cfg)``: learn a CGRSP scheduler, log it beside the heuristics, evaluate it.

Called by the thin root ``train.py`` (Hydra). Each run directory holds ``config.yaml``
(resolved), ``command.txt``, ``checkpoints/``, ``best_model.zip`` + ``best.json``,
``final_model.zip``, ``tb/`` (TensorBoard: ``learned_1`` and ``heuristic_<name>`` runs) and
``final_eval.{csv,md,png}``. ``resume=true`` continues the latest run of the same
algo/day/seed (or ``resume_from=DIR``) from its last checkpoint, exactly: the checkpoint holds
everything the rest of the run depends on (:mod:`gpu_sched_agents.rl.resume`). ``scenario=hgsp|llm|mig|edge``
trains on another scenario's env with the same folder, files and rules
(:mod:`gpu_sched_agents.rl.scenario_train`).
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import torch as th
from omegaconf import DictConfig, OmegaConf
from stable_baselines3.common.vec_env import VecNormalize

from gpu_sched_agents.heuristics.cgrsp import ALL_POLICY_NAMES, EXTENSIONS
from gpu_sched_agents.rl.callbacks import (
    EVAL_METRICS,
    EpisodeMetricsCallback,
    EvalCallback,
    flat_hparams,
)
from gpu_sched_agents.rl.compare import heuristic_runs, write_comparison
from gpu_sched_agents.rl.config import ALGO_RANGES
from gpu_sched_agents.rl.envs import (
    MIXED,
    SELECTION_SEEDS,
    TEST_SEED0,
    TEST_SEEDS,
    VEC_ENVS,
    day_mix,
    env_config,
    evaluate_model,
    make_vec_env,
)
from gpu_sched_agents.rl.registry import get_algo, load_model
from gpu_sched_agents.rl.resume import ExactCheckpoint, read_state
from gpu_sched_agents.rl.rundir import remove_unused_run_dir
from gpu_sched_agents.rl.scenarios import CGRSP, scenario_of
from gpu_sched_agents.rl.smdp import StepDurations
from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number
from gpu_sched_env.core.io import atomic_write_text

log = logging.getLogger(__name__)  # Hydra sends it to the console and the run's train.log
FINAL_SEED0 = TEST_SEED0  # final evaluation seeds: 20 000 … (disjoint from training and selection days)
_CKPT = re.compile(r"model_(\d+)_steps\.(?:zip|npz)$")  # SB3 models; algo=ppo_jax's runner state


# MaskablePPO settings of the scenarios' learners (agents/rl/scenario_train.py), with their plain values
SCENARIO_ONLY_ALGO_KEYS = {"features": "flat", "place_first": False}


def check_scenario(cfg: DictConfig, what: str) -> None:
    """ConfigError unless ``cfg`` is a CGRSP config (another scenario goes through :mod:`.entry`)."""
    if scenario_of(cfg) != CGRSP:
        raise ConfigError(
            f"scenario = {scenario_of(cfg)!r}: gpu_sched_agents.rl.train.{what} is CGRSP's; use "
            f"gpu_sched_agents.rl.entry.{what}, which takes every scenario"
        )


def validate(cfg: DictConfig) -> CGRSPEnvConfig:
    """Check what the schemas cannot (ranges, names, the env config); return the env config.

    Runs before anything is written, so a bad value leaves no run directory behind. CGRSP's
    config only: :func:`gpu_sched_agents.rl.entry.validate` chooses by ``cfg.scenario``.
    """
    check_scenario(cfg, "validate")
    check_learner(cfg)
    for key, plain in SCENARIO_ONLY_ALGO_KEYS.items():
        if cfg.algo.get(key, plain) != plain:
            raise ConfigError(
                f"algo.{key} = {cfg.algo[key]!r} is for the scenarios' box observations (scenario=hgsp|llm|mig|"
                f"edge); allowed with CGRSP: {plain!r}"
            )
    teacher = cfg.algo.get("bc_teacher")
    if teacher:
        if cfg.algo.name != "ppo":
            raise ConfigError(
                f"algo.bc_teacher = {teacher!r}: behaviour cloning is implemented for algo=ppo only (got "
                f"algo={cfg.algo.name})"
            )
        check_choice("algo.bc_teacher", teacher, ALL_POLICY_NAMES)
    halflife = cfg.algo.get("time_halflife_s")
    if halflife is not None:
        if cfg.algo.name != "ppo":
            raise ConfigError(
                f"algo.time_halflife_s = {halflife!r}: semi-MDP discounting is implemented for algo=ppo only (got "
                f"algo={cfg.algo.name})"
            )
        check_number("algo.time_halflife_s", halflife, lo=0.0, lo_open=True)
    check_budget(cfg)
    stock_mix = cfg.day.get("stock_mix")
    if stock_mix is not None and (cfg.day.name != MIXED or cfg.algo.name != "ppo_jax"):
        raise ConfigError(
            f"day.stock_mix = {list(stock_mix)!r} with day={cfg.day.name}, algo={cfg.algo.name}: a stock mix is "
            "implemented for day=mixed with algo=ppo_jax only (the JAX env draws the stock model per day); allowed "
            "otherwise: day.stock_mix=null (the env's stock model, env.stock_process / env.stock_dwell_s)"
        )
    day_mix(cfg)  # ConfigError naming day.day_mix
    spec = get_algo(cfg.algo.name)
    check_evaluation(cfg, spec)
    if halflife is not None and cfg.env.shaping != "none":
        raise ConfigError(
            f"algo.time_halflife_s = {halflife!r} with env.shaping = {cfg.env.shaping!r}: the shaping term γ·Φ′ − Φ "
            "needs one γ per step; use shaping=none with semi-MDP discounting"
        )
    config = env_config(cfg)  # raises ConfigError naming a bad env key or simulator parameter
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    CGRSPEnv(config).close()  # the trace-free env builds (spaces, encoder)
    if spec.validate is not None:  # the algorithm's own checks (ppo_jax: batch shapes, device, the JAX env's design)
        spec.validate(cfg, config)
    return config


def check_learner(cfg: DictConfig) -> None:
    """The algorithm's name and numeric settings, and the seed (every scenario)."""
    get_algo(cfg.algo.name)  # raises ConfigError for an unknown algorithm
    check_number("seed", cfg.seed, lo=0, hi=2**32 - 1, integer=True)
    check_number("algo.gamma", cfg.algo.gamma, lo=0.0, hi=1.0, lo_open=True)
    check_number("algo.learning_rate", cfg.algo.learning_rate, lo=0.0, lo_open=True)
    if "lr_final_frac" in cfg.algo:
        check_number("algo.lr_final_frac", cfg.algo.lr_final_frac, lo=0.0, hi=1.0, lo_open=True)
    for i, width in enumerate(cfg.algo.net_arch):
        check_number(f"algo.net_arch[{i}]", width, lo=1, integer=True)
    for key, rng in ALGO_RANGES.items():  # SB3/torch would fail after the run folder is made, or accept nonsense
        if key in cfg.algo:
            check_number(f"algo.{key}", cfg.algo[key], **rng)


def check_budget(cfg: DictConfig) -> None:
    """The ``train`` group's budget, rollout, evaluation and checkpoint settings (every scenario)."""
    check_number("train.total_timesteps", cfg.train.total_timesteps, lo=1, integer=True)
    check_number("train.n_envs", cfg.train.n_envs, lo=1, integer=True)
    if "n_steps" in cfg.algo and int(cfg.algo.n_steps) * int(cfg.train.n_envs) < 2:
        raise ConfigError(
            f"algo.n_steps = {cfg.algo.n_steps} with train.n_envs = {cfg.train.n_envs}: a rollout must hold at least 2 "
            "steps (SB3 normalises advantages over it)"
        )
    check_number("train.eval_freq", cfg.train.eval_freq, lo=1, integer=True)
    check_number("train.checkpoint_freq", cfg.train.checkpoint_freq, lo=1, integer=True)
    check_number("train.final_eval_seeds", cfg.train.final_eval_seeds, lo=0, hi=len(TEST_SEEDS), integer=True)
    check_choice("train.vec_env", cfg.train.vec_env, VEC_ENVS)
    check_seeds(cfg)


def check_seeds(cfg: DictConfig) -> list[int] | None:
    """``train.seeds``: null (one run of ``seed``), or distinct seeds, each a valid ``seed``; the list or None.

    ``seed`` beside a list is each seed's own (:mod:`.multiseed` sets it); set by hand to a seed
    the list lacks, it would be ignored, so it is refused.
    """
    seeds = cfg.train.get("seeds")
    if seeds is None:
        return None
    seeds = list(seeds)
    if not seeds:
        raise ConfigError("train.seeds = []: give at least one seed, or train.seeds=null (one run of `seed`)")
    for i, s in enumerate(seeds):
        check_number(f"train.seeds[{i}]", s, lo=0, hi=2**32 - 1, integer=True)
    twice = sorted({int(s) for s in seeds if seeds.count(s) > 1})
    if twice:
        raise ConfigError(
            f"train.seeds = {seeds}: seed(s) {twice} named twice; allowed: each seed once (each its own run folder)"
        )
    if int(cfg.seed) != 0 and int(cfg.seed) not in seeds:
        raise ConfigError(
            f"seed = {cfg.seed} with train.seeds = {seeds}: the list gives each run its seed, so seed would be "
            "ignored; allowed: drop seed=, or put it in train.seeds"
        )
    return [int(s) for s in seeds]


def check_evaluation(cfg: DictConfig, spec: Any) -> None:
    """The torch device of an SB3 learner and the held-out selection seeds (every scenario)."""
    if spec.trainer is None:  # torch (SB3) learners; an algorithm with its own trainer checks its device in validate
        check_device(cfg.train.device)
    if not cfg.train.eval_seeds:
        raise ConfigError("train.eval_seeds = []: give at least one held-out seed")
    for s in cfg.train.eval_seeds:
        check_number("train.eval_seeds[]", s, lo=SELECTION_SEEDS.start, hi=SELECTION_SEEDS.stop - 1, integer=True)


def check_device(device: str) -> str:
    """Refuse a torch device this torch cannot use (a CPU-only build would train on the CPU silently)."""
    try:
        dev = th.device("cuda" if device == "auto" else device)
    except (RuntimeError, TypeError) as e:
        raise ConfigError(
            f"train.device = {device!r} is not a torch device ({e}); allowed: cpu, cuda, cuda:N, mps, auto"
        ) from None
    if device != "auto" and dev.type == "cuda":
        if not th.cuda.is_available():
            raise ConfigError(
                f"train.device = {device!r} but this torch ({th.__version__}) sees no CUDA device "
                "(torch.cuda.is_available() is False); use train.device=cpu, or train.device=auto to take a GPU when "
                "there is one"
            )
        if dev.index is not None and dev.index >= th.cuda.device_count():
            raise ConfigError(f"train.device = {device!r}: this machine has {th.cuda.device_count()} CUDA device(s)")
    if dev.type == "mps" and not th.backends.mps.is_available():
        raise ConfigError(f"train.device = {device!r} but MPS is not available here; use train.device=cpu")
    return device


def with_objective(runs: pd.DataFrame, config: CGRSPEnvConfig) -> pd.DataFrame:
    """``runs`` (simulate summaries) with the env's objective column, as evaluation rows have it."""
    from gpu_sched_env.cgrsp.rewards import summary_objective, weights_of

    w = weights_of(config, config.sim_params())[1]
    return runs.assign(objective=[summary_objective(r, w) for r in runs.to_dict("records")])


def plain_action_space(space: Any) -> Any:
    """A plain ``Discrete`` copy of the env's ``MaskedDiscrete`` for the model to keep.

    ``MaskedDiscrete`` holds the env's ``action_masks`` method, so a model that kept it would
    pickle the whole env into every checkpoint (and fail to load once the env's internals
    change). Masks reach the learner through ``action_masks()`` and ``obs["action_mask"]``.
    """
    from gymnasium import spaces

    return spaces.Discrete(int(space.n), start=int(space.start)) if isinstance(space, spaces.Discrete) else space


def checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """``(steps, model file)`` of each checkpoint in ``run_dir/checkpoints``, fewest steps first."""
    files = (run_dir / "checkpoints").glob("model_*_steps.*")
    return sorted((int(m.group(1)), p) for p in files if (m := _CKPT.search(p.name)))


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most steps in ``run_dir/checkpoints``."""
    found = checkpoints(run_dir)
    return found[-1][1] if found else None


def resolve_run_dir(cfg: DictConfig) -> tuple[Path, Path | None]:
    """``(run_dir, checkpoint to resume from or None)``: ``resume=true`` or ``resume_from=DIR`` resumes."""
    here = Path(cfg.run_dir)
    if not cfg.resume and not cfg.resume_from:
        return here, None
    if cfg.resume_from:
        target = Path(cfg.resume_from)
        if not target.is_dir():
            raise ConfigError(f"resume_from = {cfg.resume_from!r} is not a directory")
    else:
        family = here.parent  # runs/train/<algo>_<day>_seed<seed>/
        candidates = [d for d in family.glob("*") if d.is_dir() and d != here and latest_checkpoint(d)]
        if not candidates:
            raise ConfigError(
                f"resume=true but no earlier run with checkpoints under {family}/; start without resume or pass "
                "resume_from=DIR"
            )
        target = max(candidates, key=lambda d: latest_checkpoint(d).stat().st_mtime)  # type: ignore[union-attr]
    ckpt = latest_checkpoint(target)
    if ckpt is None:
        raise ConfigError(f"resume: {target}/checkpoints holds no model_*_steps.zip to resume from")
    check_same_run(cfg, target)
    return target, ckpt


# Settings a resumed run may change: the budget and how it is reported, not what is learned.
RESUMABLE_CHANGES = (
    "resume",
    "resume_from",
    "run_dir",
    "train.total_timesteps",
    "train.progress_bar",
    "train.final_eval_seeds",
    "hparams_search",
)
# Keys a later version added, with the value a run written before them was trained under.
ADDED_KEYS = {"scenario.name": "cgrsp"}


def check_same_run(cfg: DictConfig, target: Path) -> None:
    """Refuse to resume ``target`` under a config that differs in what is learned.

    The run's ``config.yaml`` and ``cfg`` are compared key by key (everything but
    :data:`RESUMABLE_CHANGES`); a difference is a ConfigError listing the keys and both values.
    """
    saved_path = target / "config.yaml"
    if not saved_path.exists():
        raise ConfigError(f"resume: {target} holds no config.yaml, so it cannot be checked against this run's config")
    saved = _flat(OmegaConf.to_container(OmegaConf.load(saved_path), resolve=False))
    here = _flat(OmegaConf.to_container(cfg, resolve=True))
    keys = sorted(
        k for k in set(saved) | set(here) if not any(k == r or k.startswith(r + ".") for r in RESUMABLE_CHANGES)
    )
    # a key a later schema added with the default None (unset), or with the value older runs were trained
    # under (ADDED_KEYS), matches its absence in an older run
    diff = [
        f"{k}: {saved.get(k, '<absent>')!r} in the run, {here.get(k, '<absent>')!r} now"
        for k in keys
        if saved.get(k, "<absent>") != here.get(k, "<absent>")
        and not (k not in saved and here.get(k) == ADDED_KEYS.get(k))
    ]
    if diff:
        raise ConfigError(
            f"resume: {target} was trained under another config; differing keys: "
            + "; ".join(diff)
            + " (start a new run, or resume with the run's own settings)"
        )


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out or {prefix[:-1]: {}}
    return {prefix[:-1]: d}


def train(cfg: DictConfig) -> dict[str, float]:
    """Train on CGRSP, evaluate and write the run directory; return the final evaluation means.

    CGRSP's config only: :func:`gpu_sched_agents.rl.entry.train` chooses by ``cfg.scenario``.
    """
    check_scenario(cfg, "train")
    try:
        config = validate(cfg)
        run_dir, ckpt = resolve_run_dir(cfg)  # a refused resume is a rejected config too
    except ConfigError:
        remove_unused_run_dir(Path(cfg.run_dir))  # a rejected config leaves no run directory behind
        raise
    spec = get_algo(cfg.algo.name)
    write_run_files(cfg, run_dir, ckpt)
    if spec.trainer is not None:  # a training loop of its own (algo=ppo_jax): same folder, files and tags
        return spec.trainer(cfg, config, run_dir, ckpt)
    assert spec.cls is not None
    th.set_num_threads(int(cfg.train.torch_threads))

    venv = make_vec_env(
        config,
        int(cfg.train.n_envs),
        int(cfg.seed),
        str(cfg.train.vec_env),
        masked=spec.masked_env,
        mixed=cfg.day.name == MIXED,
        days=day_mix(cfg),
    )
    venv = normalized(venv, cfg, ckpt)
    state = read_state(ckpt) if ckpt is not None else None  # None: a fresh run, or an old checkpoint (warned)
    model = _model(cfg, spec, config, venv, run_dir, ckpt, exact=state is not None)
    model.action_space = plain_action_space(model.action_space)
    total = int(cfg.train.total_timesteps)
    callbacks = _callbacks(cfg, spec, config, run_dir, ckpt, total, state)
    train_s = learn_and_save(cfg, model, venv, callbacks, total, ckpt, run_dir, f"{cfg.algo.name} on {config.day}")
    return final_evaluation(cfg, spec, config, run_dir, train_s)


def _model(
    cfg: DictConfig, spec: Any, config: CGRSPEnvConfig, venv, run_dir: Path, ckpt: Path | None, exact: bool = False
):
    """The SB3 model: resumed from ``ckpt`` (and its replay buffer), or new (behaviour-cloned if asked).

    ``exact``: the checkpoint has its state, so the model keeps its last observation (SB3's
    ``force_reset`` would reset the envs, which the state restores as they were).
    """
    if ckpt is not None:
        model = load_model(cfg.algo.name, ckpt, env=venv, device=cfg.train.device, force_reset=not exact)
        buf = ckpt.with_name(ckpt.name.replace("model_", "model_replay_buffer_").replace(".zip", ".pkl"))
        if spec.save_replay_buffer and buf.exists():
            model.load_replay_buffer(buf)
        how = "exactly" if exact else "inexactly"
        log.info(f"resuming {run_dir} from {ckpt.name} at {model.num_timesteps} steps ({how})")
    else:
        model = spec.cls(
            spec.policy,
            venv,
            seed=int(cfg.seed),
            tensorboard_log=str(run_dir / "tb"),
            device=cfg.train.device,
            verbose=0,
            **spec.kwargs(cfg.algo),
        )
        teacher = cfg.algo.get("bc_teacher")
        if teacher:
            from gpu_sched_agents.rl.imitation import pretrain

            bc = pretrain(
                model, teacher, config, int(cfg.algo.bc_episodes), int(cfg.algo.bc_epochs), seed=int(cfg.seed)
            )
            atomic_write_text(run_dir / "bc.json", json.dumps({"teacher": teacher, **bc}, indent=2) + "\n")
            log.info(f"behaviour cloning from {teacher}: {bc}")
    return model


def _callbacks(
    cfg: DictConfig,
    spec: Any,
    config: CGRSPEnvConfig,
    run_dir: Path,
    ckpt: Path | None,
    total: int,
    state: dict[str, Any] | None = None,
) -> list:
    """Episode metrics, evaluations against the heuristics (run here on the eval seeds) and checkpoints.

    ``state``: the resumed checkpoint's (:func:`~gpu_sched_agents.rl.resume.read_state`), put back
    when training starts.
    """
    eval_seeds = [int(s) for s in cfg.train.eval_seeds]
    heur = with_objective(heuristic_runs(baselines(), eval_seeds, config.day, config.params), config)
    heur_means = {name: {m: float(g[m].mean()) for m in EVAL_METRICS} for name, g in heur.groupby("policy")}
    metrics = EpisodeMetricsCallback()
    evaluation = EvalCallback(
        lambda m: evaluate_model(m, config, eval_seeds, spec.masked_env),
        int(cfg.train.eval_freq),
        run_dir,
        heur_means,
        total,
        flat_hparams(cfg, config),
        eval_at_start=ckpt is None and bool(cfg.algo.get("bc_teacher")),
    )
    return [
        metrics,
        *([StepDurations()] if cfg.algo.get("time_halflife_s") else []),  # info["dt"] → semi-MDP buffer
        evaluation,
        checkpointer(cfg, run_dir, {"episode_metrics": metrics, "eval": evaluation}, state, spec.save_replay_buffer),
        *_extra_callbacks(),
    ]


def checkpointer(
    cfg: DictConfig, run_dir: Path, parts: dict[str, Any], state: dict[str, Any] | None, replay_buffer: bool = False
) -> ExactCheckpoint:
    """The checkpoints of an SB3 run (every ``train.checkpoint_freq`` steps), restoring ``state`` on resume.

    Placed after the callbacks in ``parts``: at the end of training the final evaluation's row is
    in the last checkpoint, and on resume their state is put back after they set themselves up.
    """
    return ExactCheckpoint(int(cfg.train.checkpoint_freq), run_dir / "checkpoints", parts, replay_buffer, state)


def learn_and_save(cfg: DictConfig, model, venv, callbacks: list, total: int, ckpt, run_dir: Path, what: str) -> float:
    """Train ``model`` up to ``total`` steps (a resumed run: what is left), save ``final_model``; the seconds it took.

    Shared by every scenario's trainer (CGRSP here, the others in :mod:`.scenario_train`).
    """
    remaining = total - int(model.num_timesteps)
    log.info(f"training {what} for {remaining} steps ({int(model.num_timesteps)} done) in {run_dir}")
    t0 = time.perf_counter()
    if remaining > 0:
        model.learn(
            remaining,
            callback=callbacks,
            tb_log_name="learned",
            reset_num_timesteps=ckpt is None,
            progress_bar=bool(cfg.train.progress_bar),
        )
    train_s = time.perf_counter() - t0
    model.save(run_dir / "final_model")
    venv.close()
    return train_s


def write_run_files(cfg: DictConfig, run_dir: Path, ckpt: Path | None) -> None:
    """Make the run folder; write ``config.yaml`` (resolved) and append the command to ``command.txt``.

    A resumed run writes into the run it continues; the new Hydra folder says where (``resumed_into.txt``).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    if ckpt is not None and run_dir != Path(cfg.run_dir):
        Path(cfg.run_dir).mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(cfg.run_dir) / "resumed_into.txt", f"{run_dir}\n")
    atomic_write_text(run_dir / "config.yaml", OmegaConf.to_yaml(cfg, resolve=True))
    args = " ".join(shlex.quote(a) for a in sys.argv[1:])
    if Path(sys.argv[0]).name == "train.py":
        cmd = f"python train.py {args}"
    else:  # called from a study or a test: its own command line, which config.yaml's settings complete
        cmd = f"# {Path(sys.argv[0]).name} {args} (trained through gpu_sched_agents.rl; config.yaml holds the settings)"
    prev = (run_dir / "command.txt").read_text() if (run_dir / "command.txt").exists() else ""
    atomic_write_text(run_dir / "command.txt", prev + cmd + ("  # resumed from " + ckpt.name if ckpt else "") + "\n")


def normalized(venv: Any, cfg: DictConfig, ckpt: Path | None) -> Any:
    """``venv`` behind VecNormalize (rewards only) when ``train.normalize_reward``; a resumed run takes its stats."""
    if not cfg.train.normalize_reward:
        return venv
    stats = ckpt.with_name(ckpt.name.replace("model_", "model_vecnormalize_").replace(".zip", ".pkl")) if ckpt else None
    if stats is not None and stats.exists():
        return VecNormalize.load(str(stats), venv)
    return VecNormalize(venv, norm_obs=False, norm_reward=True, gamma=float(cfg.algo.gamma))


def _extra_callbacks() -> list:
    """Hook for tests (e.g. to interrupt a run); none in normal use."""
    return []


def final_evaluation(
    cfg: DictConfig, spec: Any, config: CGRSPEnvConfig, run_dir: Path, train_s: float
) -> dict[str, float]:
    """Best model (else final) vs the 21 baselines (:func:`baselines`) on fresh seeds; table, tests, figure."""
    n = int(cfg.train.final_eval_seeds)
    if n == 0:
        return {}
    best = [p for p in (run_dir / "best_model.zip", run_dir / "best_model.npz") if p.exists()]  # SB3; ppo_jax's export
    path = best[0] if best else run_dir / "final_model.zip"
    model = load_model(cfg.algo.name, path, **({} if spec.load else {"device": cfg.train.device}))
    seeds = list(range(FINAL_SEED0, FINAL_SEED0 + n))
    note = f"Training wall time this invocation: {train_s:.0f} s."
    return compare_model(
        model,
        spec,
        config,
        seeds,
        cfg.algo.name,
        run_dir,
        "final_eval",
        note,
        baselines(),
        progress=bool(cfg.train.progress_bar),
    )


def baselines() -> tuple[str, ...]:
    """The eleven published heuristics and our deferring rules (``EXTENSIONS``).

    The rules include ``spt_rescue_defer_exp`` (the strongest, ``STRONG_RULES``) and
    ``edf_defer_low``. Every learned policy is compared with the best known rule too, not only the published
    ones. The rollout planner (``PLANNERS``) is left out: it costs seconds per day.
    """
    return POLICY_NAMES + tuple(EXTENSIONS)


def compare_model(
    model: Any,
    spec: Any,
    config: CGRSPEnvConfig,
    seeds: list[int],
    label: str,
    out_dir: Path,
    stem: str,
    note: str = "",
    names: tuple[str, ...] = POLICY_NAMES,
    progress: bool = False,
) -> dict[str, float]:
    """Evaluate ``model`` and the heuristics on ``seeds`` and write the comparison.

    Writes ``<stem>.{csv,md,png}``, ``<stem>_per_seed.csv`` and ``<stem>_tests.csv`` into
    ``out_dir``; prints the table and tests and returns the learned policy's means.
    """
    day = config.day
    log.info(f"final evaluation: the learned policy and {len(names)} heuristics on {len(seeds)} held-out seeds")
    learned = evaluate_model(model, config, seeds, spec.masked_env, progress=progress).assign(seed=seeds)
    heur = heuristic_runs(names, seeds, day, config.params, progress=progress)
    table = write_comparison(
        learned,
        heur,
        label,
        out_dir,
        stem,
        f"{label} on the {day} day: {len(seeds)} held-out seeds ({seeds[0]}…{seeds[-1]})",
        f"{label} vs heuristics, {day} day, {len(seeds)} seeds (95 % CI)",
        note,
    )
    return {m: float(table.loc[label, m]) for m in ("miss_pct", "mean_wait_min", "mean_tardiness_min", "cost_usd")}
