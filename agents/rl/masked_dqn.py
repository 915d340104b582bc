"""DQN that respects the action mask (Stable-Baselines3's DQN cannot).

The mask travels inside the observation (``obs["action_mask"]``, part of ``CGRSP-v0``'s Dict
observation), so it is stored in the replay buffer with every transition and three places
use it:

* **action selection** (evaluation and the greedy part of ε-greedy): Q-values of illegal
  actions are replaced by a very low value before the argmax;
* **exploration**: the ε-random action, and the uniform actions before ``learning_starts``,
  are drawn among the legal actions only;
* **target maximisation**: ``max_a' Q_target(s', a')`` runs over the legal actions of s'
  (terminal transitions are zeroed by ``(1 − done)`` as usual; their all-zero mask gives
  the finite low value, never NaN).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.dqn.policies import MultiInputPolicy, QNetwork

from gpu_sched_env.core.errors import ConfigError

MASK_KEY = "action_mask"
_LOW = -1e9  # "minus infinity" that keeps arithmetic finite


def apply_mask(q: th.Tensor, mask: th.Tensor) -> th.Tensor:
    """Q-values with illegal actions set to a very low value."""
    return th.where(mask > 0.5, q, th.full_like(q, _LOW))


class MaskedQNetwork(QNetwork):
    """Q-network whose ``forward`` masks illegal actions with the observation's mask."""

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:  # type: ignore[override]
        return apply_mask(super().forward(obs), obs[MASK_KEY])


class MaskedDQNPolicy(MultiInputPolicy):
    """``MultiInputPolicy`` with :class:`MaskedQNetwork` for both online and target nets."""

    def make_q_net(self) -> MaskedQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return MaskedQNetwork(**net_args).to(self.device)


def _random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` (n_envs × n_actions)."""
    mask = np.asarray(mask) > 0.5
    if mask.ndim == 1:
        mask = mask[None]
    out = np.empty(mask.shape[0], np.int64)
    for i, row in enumerate(mask):
        legal = np.flatnonzero(row)
        if legal.size == 0:
            raise ValueError("observation has no legal action: the action mask is all zero")
        out[i] = rng.choice(legal)
    return out


class MaskedDQN(DQN):
    """DQN whose exploration, targets and predictions use ``obs["action_mask"]``.

    ``policy`` must be :class:`MaskedDQNPolicy` (or a subclass, or its name): SB3's own
    ``"MlpPolicy"``/``"MultiInputPolicy"`` would take greedy actions without the mask, so
    they raise :class:`~gpu_sched_env.core.errors.ConfigError`, as does an env whose
    observation space is not a ``Dict`` with an ``action_mask`` entry.
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {"MaskedDQNPolicy": MaskedDQNPolicy}

    def __init__(self, policy: Any = MaskedDQNPolicy, env: Any = None, **kwargs: Any) -> None:
        cls = self.policy_aliases.get(policy) if isinstance(policy, str) else policy
        if not (isinstance(cls, type) and issubclass(cls, MaskedDQNPolicy)):
            raise ConfigError(
                f"policy = {policy!r} is not allowed for MaskedDQN: it would ignore the action mask; "
                "allowed: MaskedDQNPolicy (the default), its name 'MaskedDQNPolicy', or a subclass of it"
            )
        space = getattr(env, "observation_space", None)  # gym env or VecEnv; None for an env id or no env
        if space is not None and not (isinstance(space, spaces.Dict) and MASK_KEY in space.spaces):
            what = f"Dict with keys {list(space.spaces)}" if isinstance(space, spaces.Dict) else type(space).__name__
            raise ConfigError(
                f"MaskedDQN env observation space = {what} is not allowed; allowed: a Dict space with "
                f"an {MASK_KEY!r} entry (e.g. CGRSP-v0's observation)"
            )
        super().__init__(policy, env, **kwargs)
        seed = kwargs.get("seed")
        self._mask_rng = np.random.default_rng(None if seed is None else seed + 7919)

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False):
        """ε-greedy over legal actions (greedy when ``deterministic``)."""
        if not deterministic and self._mask_rng.random() < self.exploration_rate:
            mask = observation[MASK_KEY]
            actions = _random_legal(mask, self._mask_rng)
            vectorised = np.asarray(mask).ndim > 1
            return (actions if vectorised else actions[0]), state
        return self.policy.predict(observation, state, episode_start, deterministic=True)

    def _sample_action(self, learning_starts: int, action_noise: Any = None, n_envs: int = 1):
        """Warm-up actions are uniform over the *legal* actions (SB3 samples the whole space)."""
        if self.num_timesteps < learning_starts:
            action = _random_legal(self._last_obs[MASK_KEY], self._mask_rng)
        else:
            action, _ = self.predict(self._last_obs, deterministic=False)
            action = np.asarray(action).reshape(n_envs)
        return action, action
