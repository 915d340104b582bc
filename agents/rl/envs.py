"""Environment construction for training: vectorised CGRSP envs and the unmasked-PPO wrapper."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

from gpu_sched_env.core.errors import check_choice

VEC_ENVS = {"dummy": DummyVecEnv, "subproc": SubprocVecEnv}


class IllegalActionFallback(gym.Wrapper):
    """Fallback for learners that cannot mask (plain PPO), used by ``ppo_unmasked`` only.

    An illegal action becomes *wait* (or, when waiting is illegal, the first legal action),
    costs ``penalty`` reward, and is counted in ``info["illegal_action"]``. The env itself
    never replaces an action.
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


def env_kwargs(cfg: Any) -> dict[str, Any]:
    """``CGRSPEnv`` keyword arguments from the Hydra config."""
    return {
        "day": cfg.day.name,
        "window": int(cfg.env.window),
        "order": str(cfg.env.order),
        "reward_scale": float(cfg.env.reward_scale),
        "reward_weights": {k: float(v) for k, v in cfg.env.reward_weights.items()},
        **dict(cfg.env.params),
    }


def _make(kwargs: dict[str, Any], seed: int, masked: bool):
    def thunk() -> gym.Env:
        from gpu_sched_env.cgrsp.env import CGRSPEnv

        env: gym.Env = CGRSPEnv(**kwargs)
        if not masked:
            env = IllegalActionFallback(env)
        env = Monitor(env, info_keywords=())
        env.reset(seed=seed)
        return env

    return thunk


def make_vec_env(kwargs: dict[str, Any], n_envs: int, seed: int, kind: str = "dummy", masked: bool = True) -> VecEnv:
    """``n_envs`` training envs (SB3 ``VecEnv``).

    Env i's first day uses seed ``seed·1000 + i``; later days draw their seeds from the env's
    own ``np_random`` (disjoint from the evaluation seeds ≥ 10 000 with overwhelming
    probability).
    """
    check_choice("train.vec_env", kind, VEC_ENVS)
    fns = [_make(kwargs, seed * 1000 + i, masked) for i in range(n_envs)]
    venv = VEC_ENVS[kind](fns)
    venv.seed(seed * 1000)
    return venv
