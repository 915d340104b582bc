"""``make_train(hp, env, env_params)``: rollout + PPO update as one jitted program (PureJaxRL).

One *update* collects ``n_steps`` transitions from each of ``n_envs`` vmapped envs (auto-reset),
computes GAE(λ) advantages, and runs ``n_epochs`` passes of clipped-objective minibatch SGD
(minibatches of ``batch_size`` transitions, advantages normalised per minibatch, gradient norm
clipped, Adam with a linear learning-rate decay to ``learning_rate × lr_final_frac``): the
update SB3's PPO/MaskablePPO runs for ``algo=ppo``, written as pure functions so ``jax.jit``
compiles rollout and update together and ``jax.vmap(trainer.train)(keys)`` trains many seeds.

Resets are drawn once per update, not per step: a native CGRSP day costs far more to draw (every
job of the day, sorted) than a step, and a vmapped ``step_autoreset`` draws one for every env at
every step (under ``vmap`` both branches of a ``where`` run), which made the step ~16× slower
(measured 2026-11-27, hectic, 256 envs). So each update draws one fresh day per env up front
and an env whose day ends switches to it (``env.step`` + a select). An env that ends a second
day within the same update replays that update's fresh day; ``rollout/replayed_days`` counts
those (0 whenever ``n_steps`` is below the decisions of a day: ~1 300 on a hectic day).

Rewards may be scaled as SB3's ``VecNormalize(norm_reward=True)`` scales them (``normalize_reward``):
divided by the running standard deviation of the discounted return, clipped to ±10. On a mixed env
(the generalist's day mix × stock models) ``reward_norm="regime"`` keeps one such statistic per
regime and scales each step by its day's regime's: a surge day's waits (~0.3 min a job) are two
orders below a hectic day's (~44 min), so under one scale a surge day's returns spread ~1/350 as
much as a hectic day's (``python -m studies reward --part regimes``) and so does its share of every
gradient (the per-task return scaling of multi-task
RL; PopArt, Hessel et al. 2019, adapts the value head's output to it as well, here the critic simply
learns the scaled returns).

Returns (:mod:`.returns`): per decision (γ per step, the default) or time-aware (γ^(Δt/τ) with Δt
the step's simulated seconds, ``info["dt"]``). Per decision, the program is the one this module
compiled before time-aware returns existed (same numbers, same seed).

The env follows the gymnax convention of :class:`gpu_sched_env.cgrsp.jax.JaxCGRSP`:
``reset(key, params) -> (obs, state)``, ``step(key, state, action, params) ->
(obs, state, reward, done, info)``, ``action_mask(state, params)``, ``obs_dim``, ``n_actions``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax.training.train_state import TrainState

from gpu_sched_agents.rl.ppo_jax import returns
from gpu_sched_agents.rl.ppo_jax.hyper import REWARD_NORMS, PPOHyper
from gpu_sched_agents.rl.ppo_jax.network import ActorCritic, masked_logits
from gpu_sched_env.core.errors import ConfigError

REWARD_CLIP = 10.0  # VecNormalize's clip_reward


class RewardStats(NamedTuple):
    """Running mean/variance of the discounted return (VecNormalize's ``ret_rms``) and the returns.

    ``mean``, ``var`` and ``count`` are scalars, or [R] (one per regime) under ``reward_norm="regime"``.
    """

    mean: jnp.ndarray
    var: jnp.ndarray
    count: jnp.ndarray
    ret: jnp.ndarray  # [n_envs] discounted return of the running episodes


class Runner(NamedTuple):
    """Everything that carries from one update to the next (what a checkpoint holds)."""

    train_state: TrainState
    env_state: Any
    obs: jnp.ndarray
    key: jnp.ndarray
    rstats: RewardStats
    ep_return: jnp.ndarray  # [n_envs] raw return of the running episodes
    update: jnp.ndarray  # updates done


class Transition(NamedTuple):
    """One step of the rollout, batched over envs (and stacked over steps by the scan)."""

    obs: jnp.ndarray
    mask: jnp.ndarray
    action: jnp.ndarray
    log_prob: jnp.ndarray
    value: jnp.ndarray
    reward: jnp.ndarray  # the (scaled) reward learned from
    done: jnp.ndarray
    dt: jnp.ndarray | None = None  # [s] simulated time of the step (time-aware returns)


class Trainer(NamedTuple):
    """The functions of one configuration (all pure; ``update``, ``run`` and ``train`` jit-able)."""

    network: ActorCritic
    init: Any  # key -> Runner
    update: Any  # Runner -> (Runner, metrics): one rollout + PPO update
    run: Any  # (Runner, n) -> (Runner, metrics stacked over n updates); n static
    train: Any  # key -> (Runner, metrics): init + every update of the budget


def _update_stats(
    s: RewardStats, reward: jnp.ndarray, done: jnp.ndarray, gamma: float
) -> tuple[RewardStats, jnp.ndarray]:
    """VecNormalize's reward step: update the return statistics, return the scaled reward."""
    ret = s.ret * gamma + reward
    mean, var, tot = _merge_moments(s, ret.mean(), ret.var(), ret.shape[0])
    scaled = jnp.clip(reward / jnp.sqrt(var + 1e-8), -REWARD_CLIP, REWARD_CLIP)
    return RewardStats(mean, var, tot, jnp.where(done, 0.0, ret)), scaled


def _merge_moments(s: RewardStats, b_mean, b_var, b_n) -> tuple:
    """``(mean, var, count)`` of ``s``'s running moments merged with a batch's (Chan et al.; RunningMeanStd's)."""
    delta, tot = b_mean - s.mean, s.count + b_n
    mean = s.mean + delta * b_n / tot
    var = (s.var * s.count + b_var * b_n + delta**2 * s.count * b_n / tot) / tot
    return mean, var, tot


def _update_stats_by_regime(
    s: RewardStats, reward: jnp.ndarray, done: jnp.ndarray, gamma: float, regime: jnp.ndarray
) -> tuple[RewardStats, jnp.ndarray]:
    """:func:`_update_stats` with one statistic per regime (``regime``: each env's, [E]).

    Each env's return updates its regime's statistic and its reward is scaled by it; a regime no
    env is in at this step keeps its statistic.
    """
    ret = s.ret * gamma + reward
    member = (regime[:, None] == jnp.arange(s.mean.shape[0])[None, :]).astype(ret.dtype)  # [E, R]
    b_n = member.sum(0)
    b_mean = (member * ret[:, None]).sum(0) / jnp.maximum(b_n, 1.0)
    b_var = (member * (ret[:, None] - b_mean) ** 2).sum(0) / jnp.maximum(b_n, 1.0)
    mean, var, tot = _merge_moments(s, b_mean, b_var, b_n)  # b_n = 0: the regime's moments unchanged
    scaled = jnp.clip(reward / jnp.sqrt(var[regime] + 1e-8), -REWARD_CLIP, REWARD_CLIP)
    return RewardStats(mean, var, tot, jnp.where(done, 0.0, ret)), scaled


def gae(
    traj: Transition, last_value: jnp.ndarray, gamma: float | jnp.ndarray, lam: float
) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``(advantages, returns)`` [n_steps, n_envs]; ``done`` ends the bootstrap (auto-reset).

    ``gamma``: one discount per step (a float), or an array [n_steps, n_envs] of each step's
    discount (time-aware returns: γ^(Δt/τ); the λ-trace decays with it, as SB3's semi-MDP buffer).
    """
    if not isinstance(gamma, (int, float)):
        return _gae_per_step(traj, last_value, gamma, lam)

    def back(carry, t):
        adv, next_value = carry
        nonterminal = 1.0 - t.done
        delta = t.reward + gamma * next_value * nonterminal - t.value
        adv = delta + gamma * lam * nonterminal * adv
        return (adv, t.value), adv

    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
    return adv, adv + traj.value


def _gae_per_step(traj: Transition, last_value: jnp.ndarray, gammas: jnp.ndarray, lam: float) -> tuple:
    def back(carry, x):
        adv, next_value = carry
        t, g = x
        nonterminal = 1.0 - t.done
        delta = t.reward + g * next_value * nonterminal - t.value
        adv = delta + g * lam * nonterminal * adv
        return (adv, t.value), adv

    xs = (traj._replace(dt=None), jnp.asarray(gammas, traj.reward.dtype))
    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), xs, reverse=True)
    return adv, adv + traj.value


def network_init(net: ActorCritic, obs_dim: int) -> Any:
    """``key -> net.init(key, zero observation)``; under ``vmap`` the keys are taken one after another.

    Why: the orthogonal initialiser runs a QR decomposition (LAPACK on the CPU). A *batched* QR
    splits its batch over XLA's intra-op thread pool from inside a task of that same pool; once
    every pool thread (2 on a 2-core machine) is inside such a QR, each waits for tasks that no
    thread is left to run. ``jax.vmap(trainer.train)(keys)`` hung there (2026-11-27, jax
    0.10.2, CPU, 128-wide layers; gdb: both ``tf_XLAEigen`` threads in ``lapack_sorgqr_ffi`` ->
    ``ParallelBatchMap`` -> ``BlockingCounter::Wait``, no CPU used). Under ``vmap`` this
    initialiser runs ``lax.map`` (a loop: each QR unbatched, the weights a lone seed's).
    """

    def one(key: jnp.ndarray) -> Any:
        return net.init(key, jnp.zeros((1, obs_dim), jnp.float32))

    init = jax.custom_batching.custom_vmap(one)

    @init.def_vmap
    def _(axis_size: int, in_batched: list, key: jnp.ndarray) -> tuple:
        keys = key if in_batched[0] else jnp.broadcast_to(key, (axis_size, *key.shape))
        out = jax.lax.map(one, keys)
        return out, jax.tree_util.tree_map(lambda _: True, out)

    return init


def make_train(hp: PPOHyper, env: Any, env_params: Any, episode_keys: tuple[str, ...] = ()) -> Trainer:
    """The jit-able functions of PPO on ``env`` under ``hp`` (see the module docstring).

    ``episode_keys``: scalar ``info`` entries the env reports at the end of a day (e.g.
    ``mean_wait_min``); each update's metrics hold their mean over the days that ended in it as
    ``episode/<key>`` (NaN when none ended).

    Long by design: ``init``, ``env_step``, ``loss_fn`` and ``update`` are closures over one set of
    vmapped env functions, network and optimiser that ``jax.jit`` traces as one program (PureJaxRL's
    layout); the shipped run's numbers are pinned bit for bit, so its traced body stays in one place.
    """
    hp.check()  # a bad setting is a ConfigError naming its field, not a failure inside the traced program
    by_regime = hp.reward_norm == "regime"
    if by_regime and not (hp.normalize_reward and env.is_mixed):
        raise ConfigError(
            f"algo.reward_norm = 'regime' with normalize_reward = {hp.normalize_reward} on a "
            f"{'mixed' if env.is_mixed else 'single-regime'} env: it needs a mixed env (day=mixed) and "
            "train.normalize_reward=true; allowed otherwise: algo.reward_norm=global"
        )
    n_stats = int(env.n_regimes) if by_regime else None
    net = ActorCritic(int(env.n_actions), tuple(int(w) for w in hp.net_arch))
    init_params = network_init(net, int(env.obs_dim))
    n_sgd = max(1, hp.n_updates) * hp.n_epochs * hp.n_minibatches
    lr = optax.linear_schedule(hp.learning_rate, hp.learning_rate * hp.lr_final_frac, n_sgd)
    tx = optax.chain(optax.clip_by_global_norm(hp.max_grad_norm), optax.adam(lr, eps=1e-5))
    v_reset = jax.vmap(env.reset, in_axes=(0, None))
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_mask = jax.vmap(env.action_mask, in_axes=(0, None))
    v_regime = jax.vmap(env.regime_of, in_axes=(0, None)) if by_regime else None

    def init(key: jnp.ndarray) -> Runner:
        key, k_net, k_env = jax.random.split(key, 3)
        params = init_params(k_net)
        obs, state = v_reset(jax.random.split(k_env, hp.n_envs), env_params)
        zeros = jnp.zeros(hp.n_envs, jnp.float32)
        if n_stats is None:
            rstats = RewardStats(jnp.float32(0.0), jnp.float32(1.0), jnp.float32(1e-4), zeros)
        else:
            ones = jnp.ones(n_stats, jnp.float32)
            rstats = RewardStats(0.0 * ones, ones, 1e-4 * ones, zeros)
        ts = TrainState.create(apply_fn=net.apply, params=params, tx=tx)
        return Runner(ts, state, obs, key, rstats, zeros, jnp.int32(0))

    def env_step(carry, _):
        r, fresh_obs, fresh_state, used = carry
        key, k_act, k_env = jax.random.split(r.key, 3)
        mask = v_mask(r.env_state, env_params)
        regime = v_regime(r.env_state, env_params) if by_regime else None  # the day this step belongs to
        logits, value = net.apply(r.train_state.params, r.obs)
        logits = masked_logits(logits, mask)
        action = jax.random.categorical(k_act, logits)
        log_prob = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[:, 0]
        obs, state, reward, done, info = v_step(jax.random.split(k_env, hp.n_envs), r.env_state, action, env_params)
        ended = done.astype(bool)  # the day ended: continue on this update's fresh day (module docstring)
        state = jax.tree_util.tree_map(
            lambda f, x: jnp.where(ended.reshape((-1,) + (1,) * (x.ndim - 1)), f, x), fresh_state, state
        )
        obs = jnp.where(ended[:, None], fresh_obs, obs)
        replayed = (ended & used).sum()
        used = used | ended
        reward = reward.astype(jnp.float32)
        done = done.astype(jnp.float32)
        dt = info["dt"].astype(jnp.float32) if hp.time_aware else None
        learn_r = reward
        if hp.normalize_reward:
            # the return whose running std scales the reward: the learner's own
            scale_gamma = returns.step_discounts(hp.gamma, dt, hp.tau_s) if hp.time_aware else hp.gamma
            if by_regime:
                rstats, learn_r = _update_stats_by_regime(r.rstats, learn_r, done, scale_gamma, regime)
            else:
                rstats, learn_r = _update_stats(r.rstats, learn_r, done, scale_gamma)
        else:
            rstats = r.rstats
        ep_ret = r.ep_return + reward
        t = Transition(r.obs, mask, action, log_prob, value, learn_r, done, dt)
        episode = (done, ep_ret, {k: info[k].astype(jnp.float32) for k in episode_keys}, replayed)  # for logging
        r = r._replace(env_state=state, obs=obs, key=key, rstats=rstats, ep_return=jnp.where(done > 0, 0.0, ep_ret))
        return (r, fresh_obs, fresh_state, used), (t, episode)

    def loss_fn(params, t: Transition, adv, ret):
        logits, value = net.apply(params, t.obs)
        logp_all = jax.nn.log_softmax(masked_logits(logits, t.mask))
        logp = jnp.take_along_axis(logp_all, t.action[:, None], axis=1)[:, 0]
        ratio = jnp.exp(logp - t.log_prob)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - hp.clip_range, 1 + hp.clip_range) * adv).mean()
        vf = ((ret - value) ** 2).mean()
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        total = pg + hp.vf_coef * vf - hp.ent_coef * entropy
        approx_kl = ((ratio - 1) - (logp - t.log_prob)).mean()
        clip_frac = (jnp.abs(ratio - 1) > hp.clip_range).mean()
        return total, {
            "policy_loss": pg,
            "value_loss": vf,
            "entropy": entropy,
            "approx_kl": approx_kl,
            "clip_fraction": clip_frac,
        }

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def update(r: Runner):
        key, k_days = jax.random.split(r.key)
        fresh_obs, fresh_state = v_reset(jax.random.split(k_days, hp.n_envs), env_params)
        carry = (r._replace(key=key), fresh_obs, fresh_state, jnp.zeros(hp.n_envs, bool))
        (r, *_), (traj, (dones, ep_rets, ep_info, replayed)) = jax.lax.scan(env_step, carry, None, hp.n_steps)
        _, last_value = net.apply(r.train_state.params, r.obs)
        gammas = returns.step_discounts(hp.gamma, traj.dt, hp.tau_s) if hp.time_aware else hp.gamma
        adv, ret = gae(traj, last_value, gammas, hp.gae_lambda)
        flat = jax.tree_util.tree_map(lambda x: x.reshape((hp.steps_per_update, *x.shape[2:])), (traj, adv, ret))

        def epoch(carry, _):
            ts, key = carry
            key, k_perm = jax.random.split(key)
            perm = jax.random.permutation(k_perm, hp.steps_per_update)
            batches = jax.tree_util.tree_map(
                lambda x: x[perm].reshape((hp.n_minibatches, hp.batch_size, *x.shape[1:])), flat
            )

            def minibatch(ts, b):
                (_, aux), grads = grad_fn(ts.params, *b)
                return ts.apply_gradients(grads=grads), aux

            ts, aux = jax.lax.scan(minibatch, ts, batches)
            return (ts, key), aux

        (ts, key), aux = jax.lax.scan(epoch, (r.train_state, r.key), None, hp.n_epochs)
        n_done = dones.sum()

        def over_done(x):
            return jnp.where(n_done > 0, (x * dones).sum() / jnp.maximum(n_done, 1), jnp.nan)

        metrics = {k: v.mean() for k, v in aux.items()}
        metrics.update({f"episode/{k}": over_done(v) for k, v in ep_info.items()})
        metrics.update(
            episodes=n_done,
            replayed_days=replayed.sum(),
            episode_return=over_done(ep_rets),
            reward_mean=traj.reward.mean(),
            explained_variance=1 - jnp.var(ret - traj.value) / (jnp.var(ret) + 1e-8),
        )
        return r._replace(train_state=ts, key=key, update=r.update + 1), metrics

    def run(r: Runner, n: int):
        return jax.lax.scan(lambda c, _: update(c), r, None, n)

    def train(key: jnp.ndarray):
        return run(init(key), hp.n_updates)

    return Trainer(net, init, update, run, train)


__all__ = [
    "REWARD_NORMS",
    "PPOHyper",
    "RewardStats",
    "Runner",
    "Trainer",
    "Transition",
    "gae",
    "make_train",
    "network_init",
]
