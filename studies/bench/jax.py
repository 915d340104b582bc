"""The JAX fast path against the reference, in one run on the machine at hand.

    python -m studies bench jax [--day hectic] [--batch 1024 [4096 …]] [--json]

Four figures, all on experiment=joint_heads' design (the one the JAX env implements):

* ``env_steps_per_s``: :class:`~gpu_sched_env.cgrsp.jax.JaxCGRSP` (``records=False``, a pool of
  ``--batch`` native days for the auto-resets, as for training) stepped by uniformly random legal
  actions, ``--batch`` days vmapped, ``--env-steps`` steps scanned in one jitted call (compile
  time excluded, a warm-up call first; :func:`gpu_sched_env.cgrsp.jax.bench.jax_steps_per_s`).
  Several ``--batch`` sizes (e.g. 1024 … 65536 on a GPU) give ``env_steps_per_s_<batch>`` each,
  and ``env_steps_per_s`` is the best of them;
* ``ref_env_steps_per_s``: CGRSP-v0 under the same random masked actions, one env in a Python
  loop (as ``python -m studies bench env`` times it);
* ``ppo_fps``: ``algo=ppo_jax`` training frames/s (rollout + update, ``--ppo-updates`` updates of
  ``--ppo-envs`` × n_steps after a compiled warm-up update), ``experiment=ppo_jax_joint``'s settings;
* ``sb3_ppo_fps``: MaskablePPO's training frames/s on CGRSP-v0 (``experiment=joint_heads``'s
  settings, ``train.n_envs`` envs, ``--sb3-steps`` steps after a warm-up rollout, 1 torch thread).

With ``--json`` the last line is one JSON object with those keys (and the ratios and sizes).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Sequence

import numpy as np


def ref_env_steps_per_s(config, steps: int, seed: int = 0) -> float:
    """Steps/s of CGRSP-v0 (``config``) under random legal actions, resetting at the end of a day."""
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    env = CGRSPEnv(config)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        legal = np.flatnonzero(env.action_masks())
        _, _, term, trunc, _ = env.step(int(legal[int(rng.random() * legal.size)]))
        if term or trunc:
            env.reset()
    out = steps / (time.perf_counter() - t0)
    env.close()
    return out


def ppo_jax_fps(cfg, updates: int) -> float:
    """Training frames/s of ``algo=ppo_jax`` under the composed ``cfg`` (a compiled warm-up update first)."""
    import jax

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.config import build_trainer
    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    config = env_config(cfg)
    _, hp, trainer = build_trainer(cfg, config, JaxCGRSP.from_config(config, records=False))
    run = jax.jit(trainer.run, static_argnums=1)
    runner = jax.jit(trainer.init)(jax.random.PRNGKey(0))
    runner, m = run(runner, 1)  # warm-up: compile (n is static: the timed call compiles its own length too)
    runner, m = run(runner, updates)
    jax.block_until_ready(m)
    t0 = time.perf_counter()
    runner, m = run(runner, updates)
    jax.block_until_ready(m)
    return updates * hp.steps_per_update / (time.perf_counter() - t0)


def sb3_ppo_fps(cfg, steps: int) -> float:
    """MaskablePPO's training frames/s on CGRSP-v0 under the composed ``cfg`` (experiment=joint_heads)."""
    import torch as th
    from sb3_contrib import MaskablePPO

    from gpu_sched_agents.rl.envs import env_config, make_vec_env
    from gpu_sched_agents.rl.policies import FactoredMaskablePolicy
    from gpu_sched_agents.rl.registry import get_algo
    from studies.bench.train import fps

    th.set_num_threads(1)
    venv = make_vec_env(env_config(cfg), int(cfg.train.n_envs), 0)
    model = MaskablePPO(
        FactoredMaskablePolicy, venv, seed=0, device="cpu", verbose=0, **get_algo("ppo").kwargs(cfg.algo)
    )
    out = fps(model, steps)
    venv.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the four figures; returns the exit status."""
    ap = argparse.ArgumentParser(
        description="JAX env and ppo_jax vs CGRSP-v0 and MaskablePPO (one run, this machine)",
    )
    ap.add_argument("--day", default="hectic", choices=["quiet", "normal", "hectic", "surge"])
    ap.add_argument("--batch", type=int, nargs="+", default=[1024], help="JAX days stepped together (vmap), each")
    ap.add_argument("--env-steps", type=int, default=200, help="steps per JAX day in the timed call")
    ap.add_argument("--ref-steps", type=int, default=5000, help="CGRSP-v0 steps timed")
    ap.add_argument("--ppo-updates", type=int, default=4, help="ppo_jax updates timed")
    ap.add_argument("--ppo-envs", type=int, default=None, help="ppo_jax envs (default: the shipped train.n_envs)")
    ap.add_argument("--ppo-n-steps", type=int, default=None, help="ppo_jax n_steps (default: the shipped algo.n_steps)")
    ap.add_argument("--sb3-steps", type=int, default=8192, help="MaskablePPO steps timed")
    ap.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    args = ap.parse_args(argv)
    for name in ("batch", "env_steps", "ref_steps", "ppo_updates", "sb3_steps"):
        for v in np.atleast_1d(getattr(args, name)):
            if v < 1:
                ap.error(f"--{name.replace('_', '-')} = {v}: must be ≥ 1")
    import jax

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from studies.conf import compose_config

    jax_over = [f"train.n_envs={args.ppo_envs}"] if args.ppo_envs else []
    jax_over += [f"algo.n_steps={args.ppo_n_steps}"] if args.ppo_n_steps else []
    if jax_over:  # the minibatch must divide the smaller rollout: one minibatch per 1/8 rollout, as shipped
        n_envs = args.ppo_envs or int(compose_config("experiment=ppo_jax_joint", "run_dir=/tmp/x").train.n_envs)
        n_steps = args.ppo_n_steps or int(compose_config("experiment=ppo_jax_joint", "run_dir=/tmp/x").algo.n_steps)
        jax_over.append(f"algo.batch_size={max(1, n_envs * n_steps // 8)}")
    jcfg = compose_config("experiment=ppo_jax_joint", f"day={args.day}", "run_dir=/tmp/x", *jax_over)
    scfg = compose_config("experiment=joint_heads", f"day={args.day}", "run_dir=/tmp/x")
    config = env_config(jcfg)
    env = JaxCGRSP.from_config(config, records=False)
    device = jax.devices()[0]
    print(
        f"bench jax on {platform.processor() or platform.machine()} ({jax.device_count()} JAX device(s), "
        f"{device.platform}); day {args.day}, design experiment=joint_heads"
    )
    from gpu_sched_env.cgrsp.jax.bench import jax_steps_per_s

    figures = {}
    for batch in args.batch:
        figures[f"env_steps_per_s_{batch}"] = jax_steps_per_s(env, batch, args.env_steps)
        print(f"JAX env, {batch} days vmapped: {figures[f'env_steps_per_s_{batch}']:12.0f} steps/s")
    figures["env_steps_per_s"] = max(figures[f"env_steps_per_s_{b}"] for b in args.batch)
    figures["ref_env_steps_per_s"] = ref_env_steps_per_s(config, args.ref_steps)
    print(
        f"CGRSP-v0, random masked actions: {figures['ref_env_steps_per_s']:12.0f} steps/s   ratio "
        f"{figures['env_steps_per_s'] / figures['ref_env_steps_per_s']:.1f}x"
    )
    figures["ppo_fps"] = ppo_jax_fps(jcfg, args.ppo_updates)
    figures["sb3_ppo_fps"] = sb3_ppo_fps(scfg, args.sb3_steps)
    print(f"ppo_jax, {jcfg.train.n_envs} envs x {jcfg.algo.n_steps} steps: {figures['ppo_fps']:12.0f} frames/s")
    print(
        f"MaskablePPO, {scfg.train.n_envs} envs: {figures['sb3_ppo_fps']:12.0f} frames/s   ratio "
        f"{figures['ppo_fps'] / figures['sb3_ppo_fps']:.1f}x"
    )
    if args.json:
        sizes = {
            "day": args.day,
            "batch": args.batch if len(args.batch) > 1 else args.batch[0],
            "ppo_n_envs": int(jcfg.train.n_envs),
            "ppo_n_steps": int(jcfg.algo.n_steps),
            "sb3_n_envs": int(scfg.train.n_envs),
            "device": device.platform,
        }
        ratios = {
            "env_ratio": figures["env_steps_per_s"] / figures["ref_env_steps_per_s"],
            "ppo_ratio": figures["ppo_fps"] / figures["sb3_ppo_fps"],
        }
        print(
            json.dumps(
                {**{k: round(v, 1) for k, v in figures.items()}, **{k: round(v, 2) for k, v in ratios.items()}, **sizes}
            )
        )
    return 0
