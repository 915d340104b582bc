"""Gymnasium spaces and the wrapper shared by the environments (the simulators never import this)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gpu_sched_env.core.errors import check_options, check_seed


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


class CheckedReset(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """The outermost wrapper of every id ``gym.make`` builds: a reset's arguments are checked before any wrapper runs.

    Why it exists: gymnasium's ``PassiveEnvChecker`` (the innermost wrapper of ``gym.make``)
    marks its first ``reset`` as checked *before* calling the env and keeps what that call
    returns, which its first ``step`` then unpacks. A first reset the env refuses
    (``reset(seed=-1)``, an unknown option: ``ConfigError``) left the flag set and nothing kept,
    so every later ``step`` raised ``TypeError: cannot unpack non-iterable NoneType``. Refusing
    such arguments here, before the checker is reached, leaves every wrapper as it was; the env
    checks them again itself (a bare env, or one built with ``gym.make(..., disable_env_checker=True)``,
    refuses them alike). A refused ``step`` needs no such care: the checker's first step keeps the
    reset's data until a step succeeds.

    The arguments are checked by the env's ``check_reset_args(seed, options)`` where it has one
    (EdgeBatch-v0's ``workloads`` option), else by :func:`~gpu_sched_env.core.errors.check_seed`
    and :func:`~gpu_sched_env.core.errors.check_options` with no option allowed, which is what
    every other env of the package checks.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        """Check ``seed`` and ``options`` (ConfigError, nothing changed), then reset the wrapped env."""
        check = getattr(self.env.unwrapped, "check_reset_args", None)
        if check is not None:
            check(seed, options)
        else:
            check_options(options)
            check_seed(seed)
        return self.env.reset(seed=seed, options=options)
