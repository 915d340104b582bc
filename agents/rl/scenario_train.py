"""``train(cfg)`` for the scenarios besides CGRSP: MaskablePPO on HGSP-v0, LLMServe-v0, MIG-v0, EdgeBatch-v0.

``python train.py scenario=hgsp algo=ppo`` (``llm``, ``mig``, ``edge``). The run folder, its files
(``config.yaml``, ``command.txt``, ``checkpoints/``, ``best_model.zip`` + ``best.json``,
``learning_curve.*``, ``final_model.zip``, ``final_eval.*``), the TensorBoard tags (``tb/learned_1``,
``tb/heuristic_<name>``, ``eval/*``, ``episode/*``, ``hparams``), the seed spaces and the resume
rules are CGRSP's (:mod:`gpu_sched_agents.rl.train`). Model selection and the final table judge
the env's objective (−return: the reward's weighted parts summed) and the scenario's metrics
against the scenario's heuristics (:mod:`gpu_sched_agents.rl.scenarios`) on the same seeds.
What is CGRSP's alone (the day and env groups, algo=ppo_jax / dqn / ppo_unmasked, behaviour
cloning from a CGRSP rule, semi-MDP discounting, the month protocol) is refused with a ConfigError.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch as th
from omegaconf import DictConfig, OmegaConf
from sb3_contrib import MaskablePPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecEnv

from gpu_sched_agents.rl import train as tr
from gpu_sched_agents.rl.callbacks import SELECT_ON, EpisodeMetricsCallback, EvalCallback
from gpu_sched_agents.rl.compare import write_comparison
from gpu_sched_agents.rl.envs import TrainingDays, strict, vec_env
from gpu_sched_agents.rl.policies import PlaceFirstMaskablePolicy, SignedLog1p
from gpu_sched_agents.rl.registry import _sb3_kwargs, get_algo
from gpu_sched_agents.rl.resume import read_state
from gpu_sched_agents.rl.scenarios import (
    ScenarioSpec,
    env_config,
    heuristic_runs,
    model_runs,
    scenario_of,
    spec_of,
)
from gpu_sched_env.core.errors import ConfigError, check_choice

log = logging.getLogger(__name__)
ALGO = "ppo"  # MaskablePPO with sb3-contrib's MLP policy (the observations are flat boxes)
CGRSP_ONLY_ALGO_KEYS = ("bc_teacher", "time_halflife_s")  # a CGRSP rule as teacher; info["dt"] of CGRSP-v0
FEATURES = ("flat", "log1p")  # algo.features: the observation as given, or SignedLog1p of it


def validate_scenario(cfg: DictConfig) -> tuple[ScenarioSpec, Any]:
    """Check a non-CGRSP config before anything is written; return the spec and the env config."""
    name = scenario_of(cfg)
    spec = spec_of(name)
    tr.check_learner(cfg)
    if cfg.algo.name != ALGO:
        raise ConfigError(
            f"algo = {cfg.algo.name!r} with scenario={name}: dqn, ppo_unmasked and ppo_jax are CGRSP-only; "
            f"allowed: {ALGO} (MaskablePPO)"
        )
    for key in CGRSP_ONLY_ALGO_KEYS:
        if cfg.algo.get(key) is not None:
            raise ConfigError(f"algo.{key} = {cfg.algo[key]!r} is CGRSP-only; allowed with scenario={name}: null")
    for group in ("day", "env"):  # the scenario option drops both groups; a day=/env=/experiment= brings one back
        if group in cfg and not OmegaConf.is_missing(cfg, group):
            shown = cfg.day.get("name") if group == "day" else "{...}"
            raise ConfigError(
                f"{group} = {shown!r} with scenario={name}: the {group} group (and experiment=, which sets it) is "
                f"CGRSP-only; allowed: none; {spec.env_id}'s settings are scenario.env.<field>, fields "
                + ", ".join(cfg.scenario.env.keys())
            )
    check_choice("algo.features", cfg.algo.features, FEATURES)
    tr.check_budget(cfg)
    tr.check_evaluation(cfg, get_algo(ALGO))
    config = strict(env_config(cfg))  # the scenario's config object checks every value; the agents' envs raise
    spec.make_env(config).close()
    return spec, config


class EpisodeSummary(gym.Wrapper):
    """At an episode's end, ``info["summary"]``: the scenario's metrics and ``objective`` (−return)."""

    def __init__(self, env: gym.Env, spec: ScenarioSpec) -> None:
        super().__init__(env)
        self.scenario = spec
        self._return = 0.0

    def reset(self, **kwargs: Any):
        self._return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += float(reward)
        if terminated or truncated:
            info = {**info, "summary": {**self.scenario.summary(self.env.unwrapped, info), "objective": -self._return}}
        return obs, reward, terminated, truncated, info


def make_vec_env(spec: ScenarioSpec, config: Any, n_envs: int, seed: int, kind: str = "dummy") -> VecEnv:
    """``n_envs`` training envs; env i plays the days of :func:`~gpu_sched_agents.rl.envs.training_seeds`."""

    def thunk(i: int):
        return lambda: Monitor(
            EpisodeSummary(TrainingDays(spec.make_env(strict(config)), seed, i), spec), info_keywords=()
        )

    return vec_env(kind, [thunk(i) for i in range(n_envs)])


def train_scenario(cfg: DictConfig) -> dict[str, float]:
    """Train MaskablePPO on ``cfg.scenario``'s env, evaluate it and write the run folder; return the final means."""
    try:
        spec, config = validate_scenario(cfg)
        run_dir, ckpt = tr.resolve_run_dir(cfg)  # a refused resume is a rejected config too
    except ConfigError:
        tr.remove_unused_run_dir(Path(cfg.run_dir))
        raise
    tr.write_run_files(cfg, run_dir, ckpt)
    th.set_num_threads(int(cfg.train.torch_threads))
    venv = tr.normalized(
        make_vec_env(spec, config, int(cfg.train.n_envs), int(cfg.seed), str(cfg.train.vec_env)), cfg, ckpt
    )
    state = read_state(ckpt) if ckpt is not None else None  # None: a fresh run, or an old checkpoint (warned)
    if ckpt is not None:  # with its state the model keeps its last observation: the state restores the envs
        model = MaskablePPO.load(ckpt, env=venv, device=cfg.train.device, force_reset=state is None)
        how = "exactly" if state is not None else "inexactly"
        log.info(f"resuming {run_dir} from {ckpt.name} at {model.num_timesteps} steps ({how})")
    else:
        kwargs = _sb3_kwargs(cfg.algo)
        if cfg.algo.features == "log1p":
            kwargs["policy_kwargs"]["features_extractor_class"] = SignedLog1p
        model = MaskablePPO(
            PlaceFirstMaskablePolicy if cfg.algo.place_first else "MlpPolicy",
            venv,
            seed=int(cfg.seed),
            tensorboard_log=str(run_dir / "tb"),
            device=cfg.train.device,
            verbose=0,
            **kwargs,
        )
    model.action_space = tr.plain_action_space(model.action_space)
    metrics = (SELECT_ON, *spec.metrics)
    eval_seeds = [int(s) for s in cfg.train.eval_seeds]
    heur = heuristic_runs(spec, config, eval_seeds)
    heur_means = {name: {m: float(g[m].mean()) for m in metrics} for name, g in heur.groupby("policy")}
    total = int(cfg.train.total_timesteps)
    episodes = EpisodeMetricsCallback(metrics)
    evaluation = EvalCallback(
        lambda m: model_runs(m, spec, config, eval_seeds),
        int(cfg.train.eval_freq),
        run_dir,
        heur_means,
        total,
        hparams(cfg),
        metrics=metrics,
        plot=panels(spec),
    )
    callbacks = [
        episodes,
        evaluation,
        tr.checkpointer(cfg, run_dir, {"episode_metrics": episodes, "eval": evaluation}, state),
        *tr._extra_callbacks(),
    ]
    train_s = tr.learn_and_save(cfg, model, venv, callbacks, total, ckpt, run_dir, f"ppo on {spec.env_id}")
    return final_evaluation(cfg, spec, config, run_dir, train_s)


def panels(spec: ScenarioSpec) -> tuple[tuple[str, str], ...]:
    """The two metrics drawn in the figures: the objective and the scenario's first metric."""
    return ((SELECT_ON, "objective (−return)"), (spec.metrics[0], spec.labels[0]))


def final_evaluation(cfg: DictConfig, spec: ScenarioSpec, config: Any, run_dir: Path, train_s: float) -> dict:
    """Best model (else final) vs the scenario's heuristics on the test seeds: ``final_eval.*``."""
    n = int(cfg.train.final_eval_seeds)
    if n == 0:
        return {}
    best = run_dir / "best_model.zip"
    model = MaskablePPO.load(best if best.exists() else run_dir / "final_model.zip", device=cfg.train.device)
    seeds = list(range(tr.FINAL_SEED0, tr.FINAL_SEED0 + n))
    log.info(f"final evaluation: the learned policy and {len(spec.heuristics)} heuristics on {n} held-out seeds")
    learned = model_runs(model, spec, config, seeds)
    heur = heuristic_runs(spec, config, seeds)
    metrics = (SELECT_ON, *spec.metrics)
    left_out = "".join(f" {k}: {why}." for k, why in spec.left_out.items())
    table = write_comparison(
        learned,
        heur,
        ALGO,
        run_dir,
        "final_eval",
        f"{ALGO} on {spec.env_id}: {n} held-out seeds ({seeds[0]}…{seeds[-1]})",
        f"{ALGO} vs heuristics, {spec.env_id}, {n} seeds (95 % CI)",
        f"Training wall time this invocation: {train_s:.0f} s. Objective: −return (the env's reward weights); "
        f"lower is better for every column.{left_out}",
        table_metrics=metrics,
        test_metrics=metrics[:2],
        panels=panels(spec),
    )
    return {m: float(table.loc[ALGO, m]) for m in metrics}


def hparams(cfg: DictConfig) -> dict[str, Any]:
    """Scalar settings for TensorBoard's HParams tab: the algorithm's and the env's (``scenario.env``)."""
    out: dict[str, Any] = {"algo": cfg.algo.name, "scenario": scenario_of(cfg), "seed": int(cfg.seed)}
    for k, v in cfg.algo.items():
        if isinstance(v, (int, float, str, bool)) and k != "name":
            out[f"algo.{k}"] = v
        elif k == "net_arch":
            out["algo.net_arch"] = "x".join(str(x) for x in v)
    env = OmegaConf.to_container(cfg.scenario.env, resolve=True)
    for k, v in env.items():  # type: ignore[union-attr]
        out[f"env.{k}"] = "none" if v is None else v if isinstance(v, (int, float, str, bool)) else str(v)
    out.update({"train.total_timesteps": int(cfg.train.total_timesteps), "train.n_envs": int(cfg.train.n_envs)})
    return out


__all__ = ["EpisodeSummary", "final_evaluation", "make_vec_env", "train_scenario", "validate_scenario"]
