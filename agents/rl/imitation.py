"""Behaviour-cloning warm start: imitate a heuristic agent before reinforcement learning.

Episodes of a heuristic driven through the same env (``HeuristicAgent``) give
(observation, mask, action) triples; the policy network is trained with the masked
cross-entropy (negative log-likelihood of the teacher's action under the masked
distribution), then PPO continues from there. Seeds for the teacher's days start at 30 000,
away from the training, evaluation and final-test seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th

from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig

TEACHER_SEED0 = 30_000


def collect(
    teacher: str, config: CGRSPEnvConfig, episodes: int
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """``(observations, masks, actions)`` from ``episodes`` days of ``teacher``."""
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    env = CGRSPEnv(config)
    agent = HeuristicAgent(teacher, env)
    obs_buf: dict[str, list[np.ndarray]] = {}
    masks, actions = [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=TEACHER_SEED0 + ep)
        done = False
        while not done:
            a, _ = agent.predict(obs)
            for k, v in obs.items():
                obs_buf.setdefault(k, []).append(v)
            masks.append(env.action_masks().copy())
            actions.append(int(a))
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    env.close()
    return {k: np.stack(v) for k, v in obs_buf.items()}, np.stack(masks), np.asarray(actions, np.int64)


def pretrain(
    model: Any,
    teacher: str,
    config: CGRSPEnvConfig,
    episodes: int,
    epochs: int,
    batch_size: int = 256,
    lr: float = 1e-3,
    seed: int = 0,
) -> dict[str, float]:
    """Fit ``model.policy`` (MaskablePPO) to the teacher's actions; returns accuracy and loss."""
    obs, masks, actions = collect(teacher, config, episodes)
    policy = model.policy
    opt = th.optim.Adam(policy.parameters(), lr=lr)
    n = actions.size
    rng = np.random.default_rng(seed)
    loss_v = float("nan")
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = rng.permutation(n)
        for i in range(0, n, batch_size):
            idx = order[i : i + batch_size]
            ob = {k: th.as_tensor(v[idx], device=policy.device) for k, v in obs.items()}
            dist = policy.get_distribution(ob, action_masks=masks[idx])
            loss = -dist.log_prob(th.as_tensor(actions[idx], device=policy.device)).mean()
            opt.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            opt.step()
            loss_v = float(loss.item())
    policy.set_training_mode(False)
    with th.no_grad():
        hits = 0
        for i in range(0, n, 4096):
            ob = {k: th.as_tensor(v[i : i + 4096], device=policy.device) for k, v in obs.items()}
            dist = policy.get_distribution(ob, action_masks=masks[i : i + 4096])
            hits += int((dist.get_actions(deterministic=True).cpu().numpy() == actions[i : i + 4096]).sum())
    return {"bc_samples": float(n), "bc_accuracy": hits / n, "bc_final_loss": loss_v}
