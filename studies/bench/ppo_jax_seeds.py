"""Frames/s of several ppo_jax seeds trained side by side (``jax.vmap`` over their keys) against the same seeds in turn.

    python -m studies bench jax --part seeds [--budget 32768] [--seeds 4]

``experiment=ppo_jax_joint``'s settings on hectic fresh stock (``studies.cgrsp.learning.parity``'s
``regime_config``), ``--budget`` steps per seed; both programs are compiled first (compile
seconds printed), then timed twice, alternately. One JSON object per timing round.
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv: list[str] | None = None) -> int:
    """Compile both programs, then time them alternately twice."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=32768, help="steps per seed")
    ap.add_argument("--seeds", type=int, default=4)
    a = ap.parse_args(argv)
    import jax
    import jax.numpy as jnp

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.config import build_trainer, hyper
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from studies.cgrsp.learning.parity import regime_config

    cfg = regime_config("hectic_fresh", a.budget)
    hp = hyper(cfg)
    if hp.n_updates < 1 or a.seeds < 1:
        ap.error(f"--budget {a.budget} is under one update ({hp.steps_per_update} steps) or --seeds {a.seeds} < 1")
    config = env_config(cfg)
    _, hp, trainer = build_trainer(cfg, config, JaxCGRSP.from_config(config, records=False))
    keys = jnp.stack([jax.random.PRNGKey(s) for s in range(a.seeds)])
    out = {"budget": a.budget, "seeds": a.seeds, "n_envs": hp.n_envs, "n_steps": hp.n_steps, "updates": hp.n_updates}
    t0 = time.perf_counter()
    together = jax.jit(jax.vmap(trainer.train)).lower(keys).compile()
    out["vmap_compile_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    alone = jax.jit(trainer.train).lower(keys[0]).compile()
    out["single_compile_s"] = time.perf_counter() - t0
    frames = a.seeds * hp.n_updates * hp.steps_per_update
    for rep in range(2):
        t0 = time.perf_counter()
        jax.block_until_ready(together(keys))
        out[f"vmap_fps_{rep}"] = frames / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i in range(a.seeds):
            jax.block_until_ready(alone(keys[i]))
        out[f"in_turn_fps_{rep}"] = frames / (time.perf_counter() - t0)
        print(json.dumps(out), flush=True)
    return 0
