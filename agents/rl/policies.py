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

import torch as th
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy


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


__all__ = ["FactoredMaskableCategorical", "FactoredMaskablePolicy", "factored_mode"]
