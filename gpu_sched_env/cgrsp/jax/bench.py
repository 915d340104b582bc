"""The pieces of the JAX env's benchmark that ship with the package.

:func:`joint_heads_config` (the design the JAX env implements), :func:`random_legal` (a uniform
draw over the legal actions, one uniform per env and step, as the references draw theirs) and
:func:`jax_steps_per_s` (steps/s of vmapped envs under random legal play). The benchmark itself,
against CGRSP-v0 and MaskablePPO in one run, is ``python -m studies bench jax`` (checkout only).
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.jax.env import JaxCGRSP
from gpu_sched_env.core.errors import check_number


def joint_heads_config(day: str = "hectic", **params) -> CGRSPEnvConfig:
    """``experiment=joint_heads`` (conf/experiment/joint_heads.yaml as Hydra resolves it)."""
    return CGRSPEnvConfig(
        day=day,
        window=3,
        order="spt",
        window_by="class",
        action_mode="joint",
        reward="capacity",
        reward_weights={"miss": 57600.0},
        shaping_gamma=0.9,
        slot_rows=10,
        features="model",
        params=params,
    )


def random_legal(mask: jnp.ndarray, u: jnp.ndarray) -> jnp.ndarray:
    """The ``⌊u·n⌋``-th of each row's ``n`` legal actions (``u`` uniform in [0, 1)): uniform over them.

    One uniform per env and step, as the references draw theirs (``rng.choice`` over the legal
    actions here, ``legal[int(u · legal.size)]`` in ``studies.bench.jax``).
    ``jax.random.categorical`` over masked logits instead draws a Gumbel variate per action,
    takes two logs of each and an arg-max: a fifth of a benchmark step of the JAX env on the
    CPU (profiled 2026-11-27, 1 024 envs), work the references' draws do not do.
    """
    n = mask.sum(axis=-1)
    k = jnp.minimum(jnp.floor(u * n).astype(jnp.int32), n - 1)  # u·n may round up to n in float32
    return jnp.sum(jnp.cumsum(mask, axis=-1) <= k[..., None], axis=-1).astype(jnp.int32)


def jax_steps_per_s(env: JaxCGRSP, n_envs: int, n_steps: int, seed: int = 0, autoreset: bool = True) -> float:
    """Env steps per second of ``n_envs`` vmapped envs over ``n_steps`` steps (random legal actions).

    Days come from a pool of ``n_envs`` native days (:meth:`JaxCGRSP.with_pool`), as in training.
    """
    check_number("n_envs", n_envs, lo=1, integer=True)
    check_number("n_steps", n_steps, lo=1, integer=True)
    p = env.with_pool(jax.random.PRNGKey(seed + 3), env.default_params, n_envs)
    step = env._step_autoreset if autoreset else env._step

    def one(carry, key):
        obs, st = carry
        k1, k2 = jax.random.split(key)
        a = random_legal(env._action_mask(st, p), jax.random.uniform(k1))
        obs, st, r, d, _ = step(k2, st, a, p)
        return (obs, st), r

    @jax.jit
    def run(obs, st, key):
        keys = jax.random.split(key, n_steps * n_envs).reshape(n_steps, n_envs, -1)
        (obs, st), r = jax.lax.scan(
            lambda c, k: jax.vmap(lambda o, s, kk: one((o, s), kk))(c[0], c[1], k), (obs, st), keys
        )
        return obs, st, r.sum()

    obs, st = jax.jit(jax.vmap(env._reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(seed), n_envs), p)
    jax.block_until_ready(run(obs, st, jax.random.PRNGKey(seed + 1)))  # compile
    t0 = time.perf_counter()
    jax.block_until_ready(run(obs, st, jax.random.PRNGKey(seed + 2)))
    return n_envs * n_steps / (time.perf_counter() - t0)
