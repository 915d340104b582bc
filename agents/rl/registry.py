"""Algorithm registry: name → how to build, load and drive the learner (no if/elif chains)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.base_class import BaseAlgorithm

from agents.rl.masked_dqn import MaskedDQN, MaskedDQNPolicy
from gpu_sched_env.core.errors import check_choice


def _ppo_kwargs(a: Any) -> dict[str, Any]:
    return dict(
        learning_rate=a.learning_rate, n_steps=a.n_steps, batch_size=a.batch_size, n_epochs=a.n_epochs,
        gamma=a.gamma, gae_lambda=a.gae_lambda, clip_range=a.clip_range, ent_coef=a.ent_coef,
        vf_coef=a.vf_coef, max_grad_norm=a.max_grad_norm,
        policy_kwargs={"net_arch": list(a.net_arch)},
    )


def _dqn_kwargs(a: Any) -> dict[str, Any]:
    return dict(
        learning_rate=a.learning_rate, buffer_size=a.buffer_size, learning_starts=a.learning_starts,
        batch_size=a.batch_size, gamma=a.gamma, tau=a.tau, train_freq=a.train_freq,
        gradient_steps=a.gradient_steps, target_update_interval=a.target_update_interval,
        exploration_fraction=a.exploration_fraction, exploration_initial_eps=a.exploration_initial_eps,
        exploration_final_eps=a.exploration_final_eps, max_grad_norm=a.max_grad_norm,
        policy_kwargs={"net_arch": list(a.net_arch)},
    )


@dataclass(frozen=True)
class AlgoSpec:
    """How one algorithm is built and used."""

    cls: type[BaseAlgorithm]
    policy: Any
    kwargs: Callable[[Any], dict[str, Any]]
    masked_env: bool  # True: the env raises on illegal actions and the learner masks them
    save_replay_buffer: bool = False


ALGOS: dict[str, AlgoSpec] = {
    "ppo": AlgoSpec(MaskablePPO, "MultiInputPolicy", _ppo_kwargs, masked_env=True),
    "ppo_unmasked": AlgoSpec(PPO, "MultiInputPolicy", _ppo_kwargs, masked_env=False),
    "dqn": AlgoSpec(MaskedDQN, MaskedDQNPolicy, _dqn_kwargs, masked_env=True, save_replay_buffer=True),
}


def get_algo(name: str) -> AlgoSpec:
    """The spec for ``name`` (ConfigError listing the names otherwise)."""
    check_choice("algo.name", name, ALGOS)
    return ALGOS[name]
