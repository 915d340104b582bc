"""Environment construction for training: vectorised CGRSP envs and the unmasked-PPO wrapper.

Stable-Baselines3 is imported where a vectorised env is built, not with the module: reading a
run's env config (``gpu-sched evaluate`` on an ``algo=ppo_jax`` run) needs no PyTorch.

The envs the agents build to train and evaluate are strict (:func:`strict`:
``illegal_action="raise"``, whatever the config's ``illegal_action`` says): their learners mask
(MaskablePPO, MaskedDQN), follow the mask (the heuristics) or go through
:class:`IllegalActionFallback` (``ppo_unmasked``), so an illegal action that reaches the env is
a bug to be seen, not a move for the env to substitute.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig, env_config_of
from gpu_sched_env.core.errors import check_choice

if TYPE_CHECKING:
    from stable_baselines3.common.vec_env import VecEnv

VEC_ENVS = ("dummy", "subproc")  # train.vec_env: SB3's DummyVecEnv (in this process) or SubprocVecEnv
STRICT = "raise"  # the illegal_action of every env the agents build (module docstring)


def strict(config: Any) -> Any:
    """``config`` (any scenario's env config object) with ``illegal_action="raise"``: an illegal action raises."""
    return config.replace(illegal_action=STRICT)


def vec_env(kind: str, fns: Sequence[Callable[[], gym.Env]]) -> VecEnv:
    """SB3's vectorised env of ``kind`` (:data:`VEC_ENVS`) over the env factories ``fns``."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    check_choice("train.vec_env", kind, VEC_ENVS)
    return DummyVecEnv(list(fns)) if kind == "dummy" else SubprocVecEnv(list(fns), start_method="forkserver")


class IllegalActionFallback(gym.Wrapper):
    """Fallback for learners that cannot mask (plain PPO), used by ``ppo_unmasked`` only.

    An illegal action becomes *wait* (or, when waiting is illegal, the first legal action),
    costs ``penalty`` reward, and is counted in ``info["illegal_action"]``. It wraps a strict
    env (:func:`strict`), so the env never sees, and never replaces, an illegal action: only
    this wrapper does, with its penalty.
    """

    def __init__(self, env: gym.Env, penalty: float = 0.01) -> None:
        super().__init__(env)
        self.penalty = float(penalty)
        self.n_illegal = 0  # illegal actions replaced since the last reset

    def reset(self, **kwargs: Any):
        self.n_illegal = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any):
        mask = self.env.unwrapped.action_masks()
        a = int(action)
        illegal = not (0 <= a < mask.size and mask[a])
        self.n_illegal += illegal
        if illegal:
            wait = mask.size - 1
            a = wait if mask[wait] else int(np.flatnonzero(mask)[0])
        obs, reward, terminated, truncated, info = self.env.step(a)
        info["illegal_action"] = illegal
        return obs, reward - (self.penalty if illegal else 0.0), terminated, truncated, info


# Seed spaces of a run, disjoint by construction (a day's seed is its simulator run seed):
SELECTION_SEEDS = range(10_000, 20_000)  # train.eval_seeds (model selection) must lie here
TEST_SEED0 = 20_000  # final evaluation: 20 000 … 20 000 + train.final_eval_seeds − 1 (< 30 000)
TEST_SEEDS = range(TEST_SEED0, 30_000)
TRAIN_SEEDS = range(1 << 20, (1 << 31) - 1)  # training days: drawn here, above every held-out seed
_TRAIN_KEY = 0x7E41  # spawn key of the training-day stream (other purposes use other keys)


def training_seeds(seed: int, n: int, env_index: int = 0) -> list[int]:
    """The first ``n`` day seeds that training env ``env_index`` of a run with ``seed`` plays.

    Each env draws its days from its own ``numpy.random.SeedSequence(seed, spawn_key=(key,
    env_index))`` stream inside :data:`TRAIN_SEEDS`, so training days never coincide with a
    selection or test seed, for any ``seed``.
    """
    ss = np.random.SeedSequence(int(seed), spawn_key=(_TRAIN_KEY, int(env_index)))
    return np.random.default_rng(ss).integers(TRAIN_SEEDS.start, TRAIN_SEEDS.stop, size=int(n)).tolist()


class TrainingDays(gym.Wrapper):
    """Resets without a seed play the next day of :func:`training_seeds` (``env_index``'s stream)."""

    def __init__(self, env: gym.Env, seed: int, env_index: int) -> None:
        super().__init__(env)
        ss = np.random.SeedSequence(int(seed), spawn_key=(_TRAIN_KEY, int(env_index)))
        self._rng = np.random.default_rng(ss)
        self.days_played = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is None:
            seed = int(self._rng.integers(TRAIN_SEEDS.start, TRAIN_SEEDS.stop))
            self.days_played += 1
        return self.env.reset(seed=seed, options=options)


MIXED = "mixed"  # day=mixed: train on the month's day mix, select and test on the hectic day
MIXED_EVAL_DAY = "hectic"


class MixedDays(gym.Wrapper):
    """Each training day's type drawn from the month mix, its seed from :class:`TrainingDays`.

    The mix is ``days`` (day type → weight, ``day.day_mix``) or by default ``DEFAULT_MONTH_MIX`` (4 hectic, 3 surge,
    18 normal, 5 quiet days of 30). One ``CGRSPEnv`` per day type; their spaces are identical (they differ in
    ``n_jobs`` and the arrival rate only), so the learner sees one env.
    """

    def __init__(
        self, config: CGRSPEnvConfig, seed: int, env_index: int, days: Mapping[str, float] | None = None
    ) -> None:
        from gpu_sched_env.cgrsp.env import CGRSPEnv
        from gpu_sched_env.cgrsp.workload import day_weights

        weights = day_weights(days, "day.day_mix")
        self._envs = {d: CGRSPEnv(strict(config).replace(day=d)) for d in (*weights, MIXED_EVAL_DAY)}
        self._days, self._p = list(weights), np.asarray(list(weights.values()), float)
        super().__init__(self._envs[MIXED_EVAL_DAY])
        ss = np.random.SeedSequence(int(seed), spawn_key=(_TRAIN_KEY + 1, int(env_index)))
        self._rng = np.random.default_rng(ss)  # day types: their own stream, beside the day seeds

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.env = self._envs[self._days[int(self._rng.choice(len(self._days), p=self._p))]]
        return self.env.reset(seed=seed, options=options)

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def evaluate_model(model: Any, config: CGRSPEnvConfig, seeds: list[int], masked: bool, progress: bool = False) -> Any:
    """Per-seed summaries of a trained model (deterministic actions), a DataFrame.

    A model that cannot mask runs behind :class:`IllegalActionFallback`; its replaced
    actions are counted in ``illegal_actions``.
    """
    import pandas as pd
    from tqdm import tqdm

    from gpu_sched_env.cgrsp.env import CGRSPEnv
    from gpu_sched_env.cgrsp.evaluation import evaluate, run_episode

    if masked:
        return evaluate(model, strict(config), seeds, progress=progress)
    env = IllegalActionFallback(CGRSPEnv(strict(config)))
    days = tqdm(seeds, desc="learned") if progress else seeds
    rows = [{**run_episode(model, env, s), "illegal_actions": env.n_illegal} for s in days]
    env.close()
    return pd.DataFrame(rows)


def env_config(cfg: Any) -> CGRSPEnvConfig:
    """The env's :class:`CGRSPEnvConfig` from the Hydra config (validated; raises ConfigError).

    For ``day=mixed`` it is the evaluation env's (the hectic day); training envs mix the day
    types (:class:`MixedDays`). Run configs written by older versions are read through the
    env's one migration (:func:`~gpu_sched_env.cgrsp.config.migrate_env_section`).
    """
    day = MIXED_EVAL_DAY if cfg.day.name == MIXED else cfg.day.name
    return env_config_of(cfg.env, day)


def day_mix(cfg: Any) -> dict[str, float] | None:
    """``day.day_mix`` as day type → probability (checked: ConfigError naming the field), None when unset.

    A mix with ``day`` other than ``mixed`` is a ConfigError: only ``day=mixed`` draws its days' types.
    """
    from omegaconf import DictConfig, OmegaConf

    from gpu_sched_env.cgrsp.workload import day_weights
    from gpu_sched_env.core.errors import ConfigError

    given = cfg.day.get("day_mix")
    if given is None:  # unset (also in run configs older than the field): the month's mix
        return None
    if cfg.day.name != MIXED:
        raise ConfigError(
            f"day.day_mix = {given!r} with day={cfg.day.name}: a day mix is for day=mixed only (its training days' "
            "types are drawn from it); allowed otherwise: day.day_mix=null"
        )
    return day_weights(OmegaConf.to_container(given) if isinstance(given, DictConfig) else given, "day.day_mix")


def _make(
    config: CGRSPEnvConfig,
    seed: int,
    env_index: int,
    masked: bool,
    mixed: bool = False,
    days: Mapping[str, float] | None = None,
):
    def thunk() -> gym.Env:
        from gpu_sched_env.cgrsp.env import CGRSPEnv

        base = MixedDays(config, seed, env_index, days) if mixed else CGRSPEnv(strict(config))
        env: gym.Env = TrainingDays(base, seed, env_index)
        if not masked:
            env = IllegalActionFallback(env)
        from stable_baselines3.common.monitor import Monitor

        return Monitor(env, info_keywords=())

    return thunk


def make_vec_env(
    config: CGRSPEnvConfig,
    n_envs: int,
    seed: int,
    kind: str = "dummy",
    masked: bool = True,
    mixed: bool = False,
    days: Mapping[str, float] | None = None,
) -> VecEnv:
    """``n_envs`` training envs (SB3 ``VecEnv``); env i plays ``training_seeds(seed, ·, i)``.

    ``mixed``: each day's type is drawn from ``days`` (day type → weight; default the month mix, :class:`MixedDays`).
    """
    return vec_env(kind, [_make(config, seed, i, masked, mixed, days) for i in range(n_envs)])
