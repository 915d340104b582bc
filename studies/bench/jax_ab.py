"""A/B of the JAX env's speed: an older commit's ``gpu_sched_env.cgrsp.jax`` against the checkout's, in one process.

    python -m studies bench jax --part ab --old 74da848 [--envs 1024] [--steps 200] [--reps 7] [--design when]

On a shared machine two runs of ``python -m studies bench jax`` spread more than a speed change
(docs/performance.md); here both versions are imported side by side (the old one extracted with
``git archive`` into a temporary folder and renamed ``old_cgrsp_jax``), and their jitted scans of
``--steps`` steps × ``--envs`` days (auto-reset from a pool, random legal actions) are timed
alternately ``--reps`` times. Three variants: the old env with ``jax.random.categorical`` over
the masked logits (the old benchmark's draw), the old env and the new env with
:func:`gpu_sched_env.cgrsp.jax.bench.random_legal` (the reference's draw). Prints per variant the
best and median steps/s, by wall clock and by this process's CPU time; one JSON object last.
``--design`` names the action design (``experiment=joint_heads``' ``joint`` by default; ``when``,
``joint_hold``): both versions must implement it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout (git archive reads its history)


def old_package(ref: str, into: Path) -> None:
    """``gpu_sched_env/cgrsp/jax`` of commit ``ref`` as the top-level package ``old_cgrsp_jax`` under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "gpu_sched_env/cgrsp/jax"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    pkg = into / "old_cgrsp_jax"
    (into / "gpu_sched_env/cgrsp/jax").rename(pkg)
    for f in pkg.glob("*.py"):
        f.write_text(f.read_text().replace("gpu_sched_env.cgrsp.jax", "old_cgrsp_jax"))


def import_old(pkg: Path):
    """Import the folder ``pkg`` as the top-level package ``old_cgrsp_jax`` (no ``sys.path`` edit)."""
    spec = importlib.util.spec_from_file_location(
        "old_cgrsp_jax", pkg / "__init__.py", submodule_search_locations=[str(pkg)]
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_cgrsp_jax"] = mod  # its own absolute imports (old_cgrsp_jax.types, ...) find it here
    spec.loader.exec_module(mod)
    return mod


def scan(env_cls, n: int, steps: int, sampler: str, design: str = "joint"):
    """``(jitted scan, state, key)`` after a compiled warm-up call."""
    import jax
    import jax.numpy as jnp

    from gpu_sched_env.cgrsp.jax.bench import joint_heads_config, random_legal

    env = env_cls.from_config(joint_heads_config("hectic").replace(action_mode=design), records=False)
    params = env.with_pool(jax.random.fold_in(jax.random.PRNGKey(0), 1), env.default_params, n)
    v_step = jax.vmap(env.step_autoreset, in_axes=(0, 0, 0, None))
    v_mask = jax.vmap(env.action_mask, in_axes=(0, None))

    def body(carry, _):
        state, key = carry
        key, k_act, k_env = jax.random.split(key, 3)
        mask = v_mask(state, params)
        if sampler == "categorical":
            action = jax.random.categorical(k_act, jnp.where(mask, 0.0, -jnp.inf))
        else:
            action = random_legal(mask, jax.random.uniform(k_act, (n,)))
        _, state, reward, _, _ = v_step(jax.random.split(k_env, n), state, action, params)
        return (state, key), reward.sum()

    run = jax.jit(lambda st, k: jax.lax.scan(body, (st, k), None, steps))
    _, st = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(jax.random.PRNGKey(0), n), params)
    (st, k), r = run(st, jax.random.PRNGKey(0))
    jax.block_until_ready(r)
    return run, st, k


def main(argv: list[str] | None = None) -> int:
    """Time the three variants alternately; print the figures (one JSON object last)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="git commit of the old version")
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--design", default="joint", help="the action design timed (CGRSPEnvConfig.action_mode)")
    a = ap.parse_args(argv)
    for name in ("envs", "steps", "reps"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} = {getattr(a, name)}: must be ≥ 1")
    import jax

    from gpu_sched_env.cgrsp.jax import JaxCGRSP

    with tempfile.TemporaryDirectory() as tmp:
        old_package(a.old, Path(tmp))
        OldJaxCGRSP = import_old(Path(tmp) / "old_cgrsp_jax").JaxCGRSP

        variants = {
            "old env, categorical": scan(OldJaxCGRSP, a.envs, a.steps, "categorical", a.design),
            "old env, random_legal": scan(OldJaxCGRSP, a.envs, a.steps, "legal", a.design),
            "new env, random_legal": scan(JaxCGRSP, a.envs, a.steps, "legal", a.design),
        }
    wall: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(a.reps):
        for name, (run, st, k) in variants.items():
            w0, c0 = time.perf_counter(), time.process_time()
            (st, k), r = run(st, k)
            jax.block_until_ready(r)
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
            variants[name] = (run, st, k)
    work = a.envs * a.steps
    out = {"old": a.old, "design": a.design, "envs": a.envs, "steps": a.steps, "reps": a.reps}
    for name in variants:
        fig = {
            "wall_best": work / min(wall[name]),
            "wall_median": work / statistics.median(wall[name]),
            "cpu_best": work / min(cpu[name]),
            "cpu_median": work / statistics.median(cpu[name]),
        }
        out[name] = {k: round(v) for k, v in fig.items()}
        print(f"{name:22s} " + "  ".join(f"{k} {v:>9,.0f}" for k, v in fig.items()) + "  steps/s", flush=True)
    print(json.dumps(out))
    return 0
