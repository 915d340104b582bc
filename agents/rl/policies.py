"""MaskablePPO policy whose deterministic action is the mode of a two-level decision.

CGRSP-v0's last action is the no-op (*wait*, or *leave the offered slot idle*); every other
action dispatches a job. A categorical policy spreads the probability of dispatching over
many near-equivalent job–slot actions, so the joint argmax picks the single no-op action
even when the policy dispatches with probability 0.9 (measured on the old main job: argmax
waited at 57 % of the decisions where a dispatch was legal while the mean p(wait) there was
0.06; ``python -m studies versus-rule --part policy`` reproduces this). :class:`FactoredMaskableCategorical`
keeps the distribution (sampling, log-probabilities and entropy are unchanged, so training
is identical) and only changes :meth:`mode`: first the likelier of *no-op* and *dispatch*
(p(no-op) against 1 − p(no-op)), then, when dispatching, the likeliest dispatch action.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy, MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor


def factored_mode(probs: th.Tensor) -> th.Tensor:
    """Two-level mode of ``probs`` (batch × n, last column = the no-op)."""
    p_noop = probs[:, -1]
    dispatch = th.argmax(probs[:, :-1], dim=1)
    noop = th.full_like(dispatch, probs.shape[1] - 1)
    return th.where(p_noop > 0.5, noop, dispatch)


class FactoredMaskableCategorical(MaskableCategoricalDistribution):
    """Masked categorical whose :meth:`mode` is :func:`factored_mode`."""

    def mode(self) -> th.Tensor:
        return factored_mode(self.distribution.probs)


class FactoredMaskablePolicy(MaskableMultiInputActorCriticPolicy):
    """``MultiInputPolicy`` for MaskablePPO with the two-level deterministic action."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.action_dist = FactoredMaskableCategorical(int(self.action_space.n))


def place_first(masks: Any, n: int) -> th.Tensor | None:
    """``masks`` (batch × n, or n) without the last action (the no-op) wherever another action is legal."""
    if masks is None:
        return None
    m = th.as_tensor(np.asarray(masks) if not isinstance(masks, th.Tensor) else masks, dtype=th.bool)
    m = m.reshape(-1, n).clone()
    m[m[:, :-1].any(dim=1), -1] = False
    return m


class PlaceFirstMaskablePolicy(MaskableActorCriticPolicy):
    """``MlpPolicy`` for MaskablePPO that plays its no-op (the last action) only where nothing else is legal.

    The masks it is given are narrowed (:func:`place_first`) in every call that reads them (acting,
    the rollout's log-probabilities, the update's evaluation), so training and every later use of
    the saved model play the same narrower action set; the env is unchanged.
    """

    def forward(self, obs: th.Tensor, deterministic: bool = False, action_masks: Any = None):
        return super().forward(obs, deterministic, place_first(action_masks, int(self.action_space.n)))

    def get_distribution(self, obs: Any, action_masks: Any = None):
        return super().get_distribution(obs, place_first(action_masks, int(self.action_space.n)))

    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor, action_masks: Any = None):
        return super().evaluate_actions(obs, actions, place_first(action_masks, int(self.action_space.n)))


class SignedLog1p(BaseFeaturesExtractor):
    """The flattened observation through ``sign(x) · log(1 + |x|)``: raw minutes, megabytes and counts on one scale.

    An observation of physical units (MIG-v0's: times in minutes, memory up to thousands of MB, job
    counts) saturates an MLP's first layer, and every checkpoint plays the same actions; the
    transform keeps order and sign and needs no statistics, so the saved model carries it.
    """

    def __init__(self, observation_space: Any) -> None:
        super().__init__(observation_space, int(np.prod(observation_space.shape)))

    def forward(self, observations: th.Tensor) -> th.Tensor:
        x = th.flatten(observations, start_dim=1)
        return th.sign(x) * th.log1p(th.abs(x))


__all__ = [
    "FactoredMaskableCategorical",
    "FactoredMaskablePolicy",
    "PlaceFirstMaskablePolicy",
    "SignedLog1p",
    "factored_mode",
    "place_first",
]
