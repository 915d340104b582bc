"""Actor-critic MLP for ``algo=ppo_jax`` (flax linen) and its masked categorical.

Two separate tanh MLPs of widths ``net_arch`` (policy and value, as SB3's ``MlpPolicy`` builds
them for ``algo=ppo``), orthogonal initialisation (gain √2 hidden, 0.01 policy head, 1 value
head). Illegal actions get the logit :data:`MASKED_LOGIT` so their probability is exactly 0
in float32 and a log-probability times that probability is 0, not NaN.

Training builds the ``flat`` policy head: one softmax over every legal action (the output layer
``pi_out``). :func:`policy_logits` also reads the ``factored`` head an exported actor may carry
(the layer ``pi_factored``; every CGRSP design's last action is its *wait*): p(wait) = σ(z), z the
last output, and the other legal actions share 1 − σ(z) by the softmax of their outputs. The
layer's name tells an exported actor's head (:mod:`.export`), and :mod:`.jax_eval` plays either.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from gpu_sched_agents.rl.ppo_jax.export import OUT_LAYER  # the policy's output layer, by head (export reads it)

MASKED_LOGIT = -1e9  # exp(-1e9 - max) underflows to 0 in float32; finite, so 0 × logit = 0


class ActorCritic(nn.Module):
    """``obs [.., obs_dim] -> (logits [.., n_actions], value [..])`` (logits unmasked)."""

    n_actions: int
    net_arch: Sequence[int] = (128, 128)

    @nn.compact
    def __call__(self, obs: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
        hidden = nn.initializers.orthogonal(np.sqrt(2.0))
        pi, vf = obs, obs
        for i, width in enumerate(self.net_arch):
            pi = nn.tanh(nn.Dense(width, kernel_init=hidden, name=f"pi_{i}")(pi))
            vf = nn.tanh(nn.Dense(width, kernel_init=hidden, name=f"vf_{i}")(vf))
        logits = nn.Dense(self.n_actions, kernel_init=nn.initializers.orthogonal(0.01), name=OUT_LAYER["flat"])(pi)
        value = nn.Dense(1, kernel_init=nn.initializers.orthogonal(1.0), name="vf_out")(vf)
        return logits, value[..., 0]


def masked_logits(logits: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """``logits`` with illegal actions (``mask`` False) set to :data:`MASKED_LOGIT`."""
    return jnp.where(mask, logits, MASKED_LOGIT)


def policy_logits(logits: jnp.ndarray, mask: jnp.ndarray, head: str = "flat") -> jnp.ndarray:
    """Masked logits whose softmax is the policy of an exported actor's ``head`` (module docstring) on ``mask``.

    ``flat``: :func:`masked_logits`. ``factored``: the two-level distribution's log-probabilities,
    log σ(z) for the wait and log(1 − σ(z)) + log softmax (over the legal others) for the rest;
    where only the wait or only the others are legal, the softmax of the result renormalises to
    them (all of the wait, or the others' softmax).
    """
    if head == "flat":
        return masked_logits(logits, mask)
    z = logits[..., -1]
    act = jax.nn.log_softmax(masked_logits(logits[..., :-1], mask[..., :-1]), axis=-1)
    two_level = jnp.concatenate([act + jax.nn.log_sigmoid(-z)[..., None], jax.nn.log_sigmoid(z)[..., None]], -1)
    return masked_logits(two_level, mask)


def factored_mode(logits: jnp.ndarray) -> jnp.ndarray:
    """Deterministic action of masked ``logits``: the two-level mode ``algo=ppo`` uses.

    First the likelier of the no-op (the last action) and *dispatch* (p(no-op) > 0.5 or not),
    then the likeliest dispatch action (gpu_sched_agents.rl.policies.factored_mode, in JAX).
    """
    p = nn.softmax(logits, axis=-1)
    dispatch = jnp.argmax(logits[..., :-1], axis=-1)
    return jnp.where(p[..., -1] > 0.5, logits.shape[-1] - 1, dispatch)


__all__ = ["MASKED_LOGIT", "OUT_LAYER", "ActorCritic", "factored_mode", "masked_logits", "policy_logits"]
