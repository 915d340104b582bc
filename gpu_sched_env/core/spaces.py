"""Gymnasium spaces shared by the environments (the simulators never import this)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class MaskedDiscrete(spaces.Discrete):
    """``Discrete`` whose ``sample()`` without a mask draws only currently legal actions.

    Generic tools that sample actions (``check_env``, random rollouts) can then drive an env
    that raises on illegal actions; ``contains`` is unchanged, so the space still describes
    every action index.
    """

    def __init__(self, n: int, mask_fn: Any, seed: Any = None) -> None:
        super().__init__(n, seed=seed)
        self._mask_fn = mask_fn

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        """Uniform over the legal actions unless a mask or probabilities are given."""
        if mask is None and probability is None:
            legal = self._mask_fn().astype(np.int8)
            if legal.any():
                mask = legal
        return super().sample(mask=mask, probability=probability)
