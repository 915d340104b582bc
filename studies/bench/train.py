"""Training throughput of MaskablePPO on CGRSP-v0 against a reference env.

The reference is MaskablePPO on sb3-contrib's ``InvalidActionEnvDiscrete`` with the same
hyper-parameters, in the same process and run.

    python -m studies bench env --part train [--steps 16384] [--n-envs 2]

Prints frames per second of ``model.learn`` for both and the ratio (target ≥ 0.7).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.envs import InvalidActionEnvDiscrete
from stable_baselines3.common.vec_env import DummyVecEnv

from gpu_sched_agents.rl.envs import make_vec_env
from gpu_sched_agents.rl.policies import FactoredMaskablePolicy
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from studies.conf import composed_env


def fps(model, steps: int) -> float:
    """Frames per second of ``model.learn`` over ``steps`` after a warm-up rollout."""
    model.learn(min(2048, steps))  # warm-up: first rollout, allocations
    t0 = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - t0)


def main(argv: Sequence[str] | None = None) -> int:
    """Print training frames/s for the reference and each env design; returns the exit status."""
    ap = argparse.ArgumentParser(
        description="MaskablePPO training fps: CGRSP-v0 vs InvalidActionEnvDiscrete",
    )
    ap.add_argument("--steps", type=int, default=16_384)
    ap.add_argument("--n-envs", type=int, default=2)
    ap.add_argument("--day", default="hectic")
    args = ap.parse_args(argv)
    th.set_num_threads(1)
    hp = dict(
        n_steps=1024,
        batch_size=256,
        n_epochs=5,
        policy_kwargs={"net_arch": [128, 128]},
        seed=0,
        device="cpu",
        verbose=0,
    )
    ref_env = DummyVecEnv([lambda: InvalidActionEnvDiscrete(dim=80, n_invalid_actions=60) for _ in range(args.n_envs)])
    ref = fps(MaskablePPO("MlpPolicy", ref_env, **hp), args.steps)
    print(
        f"MaskablePPO, {args.n_envs} envs, {args.steps} steps, n_steps=1024, batch 256, 5 epochs, net 128x128, 1 torch "
        "thread"
    )
    print(f"InvalidActionEnvDiscrete(dim=80, 60 invalid): {ref:8.0f} frames/s")
    # the main job's design and conf/env/markov.yaml's, composed as train.py composes them, and job–slot pairs
    settings = {
        "slot mode, K=1 (main job)": composed_env(args.day, "env=default"),
        "slot mode, class heads (experiment=markov)": composed_env(args.day, "experiment=markov"),
        "joint mode, K=16": CGRSPEnvConfig(day=args.day, action_mode="joint", window=16),
    }
    for label, config in settings.items():
        venv = make_vec_env(config, args.n_envs, 0)
        ours = fps(MaskablePPO(FactoredMaskablePolicy, venv, **hp), args.steps)
        print(
            f"CGRSP-v0 ({args.day}, {label}, {venv.action_space.n} actions): {ours:8.0f} frames/s, ratio "
            f"{ours / ref:.2f} (target ≥ 0.70)"
        )
    return 0
