"""A masked toy MDP with JaxCGRSP's signatures, whose optimum is known by dynamic programming.

Four contexts c, a horizon of ``T`` steps; the observation is one-hot(c) ++ one-hot(t) (float32);
``N_ACTIONS`` actions, the last one (the no-op) always legal; ``MASK[c, a]`` says which are
legal. Action a pays ``R[c, a]`` and moves the context to ``(c + a) % 4``; an illegal action
would pay ``ILLEGAL_PAY`` (more than any legal one), so a learner that leaked probability to
masked actions would be pulled there and counted in ``info["illegal"]``. The start context is
uniform. :func:`optimal_return` and :func:`random_return` solve the MDP exactly.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

N_CTX, T, N_ACTIONS = 4, 6, 5
R = np.array(
    [  # R[c, a]: the myopic best is often a trap (it leads to a poor context)
        [0.9, 0.1, 0.3, 0.0, 0.2],
        [0.0, 0.2, 1.0, 0.6, 0.1],
        [0.3, 0.8, 0.0, 0.9, 0.2],
        [0.1, 0.0, 0.5, 0.2, 0.3],
    ],
    np.float32,
)
MASK = np.array(
    [
        [False, True, True, True, True],
        [True, True, False, True, True],
        [True, False, True, False, True],
        [True, True, True, True, True],
    ]
)
ILLEGAL_PAY = 2.0


@struct.dataclass
class ToyState:
    c: jnp.ndarray
    t: jnp.ndarray


@struct.dataclass
class ToyParams:
    reward: jnp.ndarray
    mask: jnp.ndarray


class ToyEnv:
    """gymnax-style env with the calls ``make_train`` makes of :class:`JaxCGRSP`."""

    n_actions = N_ACTIONS
    obs_dim = N_CTX + T
    default_params = ToyParams(jnp.asarray(R), jnp.asarray(MASK))

    def _obs(self, s: ToyState) -> jnp.ndarray:
        return jnp.concatenate([jax.nn.one_hot(s.c, N_CTX), jax.nn.one_hot(s.t, T)]).astype(jnp.float32)

    def reset(self, key, params):
        s = ToyState(jax.random.randint(key, (), 0, N_CTX), jnp.int32(0))
        return self._obs(s), s

    def action_mask(self, s: ToyState, params) -> jnp.ndarray:
        return params.mask[s.c]

    def step(self, key, s: ToyState, action, params):
        legal = params.mask[s.c, action]
        reward = jnp.where(legal, params.reward[s.c, action], ILLEGAL_PAY)
        nxt = ToyState((s.c + action) % N_CTX, s.t + 1)
        done = nxt.t >= T
        return self._obs(nxt), nxt, reward, done, {"illegal": ~legal}

    def step_autoreset(self, key, s: ToyState, action, params):
        k_step, k_reset = jax.random.split(key)
        obs, s2, reward, done, info = self.step(k_step, s, action, params)
        obs_r, s_r = self.reset(k_reset, params)
        s2 = jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), s_r, s2)
        return jnp.where(done, obs_r, obs), s2, reward, done, info

    @staticmethod
    def flatten_obs(obs: dict) -> np.ndarray:
        """The dict form ``{"c": int, "t": int}`` -> the flat vector (NumPy)."""
        return np.concatenate([np.eye(N_CTX, dtype=np.float32)[obs["c"]], np.eye(T, dtype=np.float32)[obs["t"]]])


def _solve(greedy: bool) -> float:
    v = np.zeros(N_CTX)
    for _ in range(T):
        q = np.where(MASK, R + v[(np.arange(N_CTX)[:, None] + np.arange(N_ACTIONS)) % N_CTX], np.nan)
        v = np.nanmax(q, axis=1) if greedy else np.nanmean(q, axis=1)
    return float(v.mean())


def optimal_return() -> float:
    """Expected undiscounted return of the best legal policy (uniform start context)."""
    return _solve(True)


def random_return() -> float:
    """Expected return of the uniform-random legal policy."""
    return _solve(False)
