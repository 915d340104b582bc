"""A PureJaxRL-style PPO (``make_train(config)`` → one jittable ``train(rng)``), masked, for a gymnax env.

The loop of PureJaxRL's ``ppo.py`` (flax ActorCritic, optax, ``lax.scan`` over steps, GAE,
epochs of shuffled minibatches), with one change a masked env needs: the policy's logits
are masked by ``obs.action_mask`` of the observation it acts on (the adapter's observation
carries the mask of its own state, across auto-resets). Handles gymnax's 5-tuple step
(0.0.x) and 6-tuple step (≥ 1.0).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training.train_state import TrainState


def gymnax_step(env, key, state, action, params) -> tuple:
    """``(obs, state, reward, done, info)`` of either gymnax API (≥ 1.0 returns terminated and truncated)."""
    out = env.step(key, state, action, params)
    if len(out) == 6:
        obs, state, reward, term, trunc, info = out
        return obs, state, reward, jnp.logical_or(term, trunc), info
    return out


class ActorCritic(nn.Module):
    """Two tanh MLPs; logits of masked-out actions at −1e9 (a masked categorical)."""

    action_dim: int

    @nn.compact
    def __call__(self, x: jnp.ndarray, mask: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        ortho = nn.initializers.orthogonal
        a = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)))(x))
        a = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)))(a))
        logits = nn.Dense(self.action_dim, kernel_init=ortho(0.01))(a)
        c = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)))(x))
        c = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)))(c))
        value = nn.Dense(1, kernel_init=ortho(1.0))(c)
        return jnp.where(mask, logits, -1e9), jnp.squeeze(value, -1)


class Transition(NamedTuple):
    """One step of the batch."""

    done: jnp.ndarray
    action: jnp.ndarray
    value: jnp.ndarray
    reward: jnp.ndarray
    log_prob: jnp.ndarray
    obs: Any
    legal: jnp.ndarray  # whether the sampled action was in the mask (must always be)


def make_train(config: dict) -> Any:
    """PureJaxRL's ``make_train``: ``config`` holds ENV, ENV_PARAMS and the PPO settings; returns ``train(rng)``."""
    env, env_params = config["ENV"], config["ENV_PARAMS"]
    n_envs, n_steps = config["NUM_ENVS"], config["NUM_STEPS"]
    n_updates = config["TOTAL_TIMESTEPS"] // n_steps // n_envs
    mb_size = n_envs * n_steps // config["NUM_MINIBATCHES"]
    network = ActorCritic(env.action_space(env_params).n)

    def train(rng: jax.Array) -> dict:
        rng, k_init, k_reset = jax.random.split(rng, 3)
        obs, env_state = jax.vmap(env.reset, (0, None))(jax.random.split(k_reset, n_envs), env_params)
        params = network.init(k_init, obs.vector[0], obs.action_mask[0])
        tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]), optax.adam(config["LR"], eps=1e-5))
        ts = TrainState.create(apply_fn=network.apply, params=params, tx=tx)

        def env_step(runner, _):
            ts, env_state, last_obs, rng = runner
            rng, k_a, k_s = jax.random.split(rng, 3)
            logits, value = network.apply(ts.params, last_obs.vector, last_obs.action_mask)
            action = jax.random.categorical(k_a, logits)
            log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            obs, env_state, reward, done, _ = jax.vmap(gymnax_step, (None, 0, 0, 0, None))(
                env, jax.random.split(k_s, n_envs), env_state, action, env_params
            )
            legal = jnp.take_along_axis(last_obs.action_mask, action[:, None], 1)[:, 0]
            tr = Transition(done, action, value, reward.astype(jnp.float32), log_prob, last_obs, legal)
            return (ts, env_state, obs, rng), tr

        def gae(traj: Transition, last_val: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
            def back(carry, tr):
                adv, next_val = carry
                delta = tr.reward + config["GAMMA"] * next_val * (1 - tr.done) - tr.value
                adv = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - tr.done) * adv
                return (adv, tr.value), adv

            _, adv = jax.lax.scan(back, (jnp.zeros_like(last_val), last_val), traj, reverse=True)
            return adv, adv + traj.value

        def loss_fn(params, tr: Transition, adv: jnp.ndarray, targets: jnp.ndarray):
            logits, value = network.apply(params, tr.obs.vector, tr.obs.action_mask)
            logp_all = jax.nn.log_softmax(logits)
            log_prob = jnp.take_along_axis(logp_all, tr.action[:, None], 1)[:, 0]
            v_clip = tr.value + (value - tr.value).clip(-config["CLIP_EPS"], config["CLIP_EPS"])
            v_loss = 0.5 * jnp.maximum((value - targets) ** 2, (v_clip - targets) ** 2).mean()
            ratio = jnp.exp(log_prob - tr.log_prob)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            clip = jnp.clip(ratio, 1 - config["CLIP_EPS"], 1 + config["CLIP_EPS"])
            pi_loss = -jnp.minimum(ratio * adv, clip * adv).mean()
            entropy = -(jnp.exp(logp_all) * jnp.where(tr.obs.action_mask, logp_all, 0.0)).sum(-1).mean()
            total = pi_loss + config["VF_COEF"] * v_loss - config["ENT_COEF"] * entropy
            return total, (v_loss, pi_loss, entropy)

        def update_step(runner, _):
            runner, traj = jax.lax.scan(env_step, runner, None, n_steps)
            ts, env_state, last_obs, rng = runner
            _, last_val = network.apply(ts.params, last_obs.vector, last_obs.action_mask)
            adv, targets = gae(traj, last_val)

            def epoch(carry, _):
                ts, rng = carry
                rng, k_perm = jax.random.split(rng)
                perm = jax.random.permutation(k_perm, n_envs * n_steps)
                flat = lambda x: x.reshape((n_envs * n_steps,) + x.shape[2:])  # noqa: E731
                batch = jax.tree_util.tree_map(flat, (traj, adv, targets))
                mbs = jax.tree_util.tree_map(lambda x: x[perm].reshape((-1, mb_size) + x.shape[1:]), batch)

                def minibatch(ts, mb):
                    (loss, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(ts.params, *mb)
                    return ts.apply_gradients(grads=grads), (loss, *aux)

                ts, losses = jax.lax.scan(minibatch, ts, mbs)
                return (ts, rng), losses

            (ts, rng), losses = jax.lax.scan(epoch, (ts, rng), None, config["UPDATE_EPOCHS"])
            metric = {
                "loss": losses[0],
                "entropy": losses[3],
                "reward": traj.reward.sum(0),
                "illegal": (~traj.legal).sum(),
            }
            return (ts, env_state, last_obs, rng), metric

        runner = (ts, env_state, obs, rng)
        runner, metrics = jax.lax.scan(update_step, runner, None, n_updates)
        return {"runner_state": runner, "metrics": metrics, "init_params": params}

    return train
