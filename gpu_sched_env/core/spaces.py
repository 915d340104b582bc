"""Gymnasium spaces shared by the environments (the simulators never import this)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class MaskedDiscrete(spaces.Discrete):
    """``Discrete`` whose ``sample()`` without a mask draws the owning env's legal actions.

    Generic tools that sample actions from one env (``check_env``, random rollouts) can then
    drive a strict env (``illegal_action="raise"``); ``contains`` is unchanged, so the space
    still describes every action index, and under the default (``"substitute"``) every index
    is a valid input (the env plays a masked-out one as its substitute).

    Sampling without a mask is masked only where the space can know the right mask: in the
    env that owns it. Elsewhere it samples the whole space, like ``Discrete``:

    * a copy made without its env (a ``pickle``/``deepcopy`` of the space alone, e.g. the
      space SB3's ``SubprocVecEnv`` or gymnasium's ``AsyncVectorEnv`` hands to the parent
      process) is *detached*: it never samples from a stale snapshot of the env;
    * a copy of the whole env (pickling an env mid-episode) keeps its space bound to the
      copy;
    * an explicit ``mask`` or ``probability`` always wins.

    A vectorised learner that samples one env's space for all of its envs (SB3's off-policy
    warm-up and ε-exploration use ``env.action_space`` = sub-env 0's space) draws actions
    legal in sub-env 0 only. The default envs substitute such an action, as they do the greedy
    actions of learners that ignore masks (SB3 DQN, PPO); over strict envs those learners need a
    fallback (``gpu_sched_agents.rl.envs.IllegalActionFallback``). Mask-aware learners
    (``MaskablePPO``, ``gpu_sched_agents.rl.masked_dqn.MaskedDQN``) sample from
    ``obs``/``action_masks()`` per env.
    """

    def __init__(self, n: int, mask_fn: Any, seed: Any = None) -> None:
        super().__init__(n, seed=seed)
        self._mask_fn = mask_fn

    @property
    def attached(self) -> bool:
        """Whether ``sample()`` without a mask draws legal actions of an owning env."""
        return self._mask_fn is not None

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        """Uniform over the owner's legal actions unless a mask or probabilities are given."""
        if mask is None and probability is None and self._mask_fn is not None:
            legal = np.asarray(self._mask_fn(), dtype=np.int8)
            if legal.any():  # before reset / after the end: the whole space
                mask = legal
        return super().sample(mask=mask, probability=probability)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._mask_fn = getattr(self, "_mask_fn", None)  # a plain Discrete's state has none
        owner = getattr(self._mask_fn, "__self__", None)
        # Unpickling (and deepcopy) restore an object's attributes only after everything they
        # reference. Copied with its env, the env is still empty here (its attributes, this
        # space among them, are being restored); copied alone, the env was rebuilt first as
        # part of this space's state: a stale snapshot, so the copy detaches from it.
        if owner is not None and vars(owner):
            self._mask_fn = None
