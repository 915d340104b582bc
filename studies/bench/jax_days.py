"""Evaluating policies on many native JAX days: one batch of all days against batches of ``--chunk`` days.

    python -m studies bench jax --part days [--day hectic] [--days 1000] [--chunks 100 1000] [--reps 2]

``agents.rl.ppo_jax.jax_eval.per_day`` plays its days ``DAY_CHUNK`` (100) at a time, padded to one
shape, so the selection's 100 days and the final test's 1000 run one compiled program per policy
(a first run on a new machine compiles it once instead of once per number of days). This measures
both sides of that choice in one process, on the shipped ``algo=ppo_jax`` design: per chunk size,
the first call (tracing and compiling the program, or loading it from JAX's compile cache, plus
one evaluation) and the best of ``--reps`` timed evaluations of ``--days`` days, for
``spt_rescue_defer_exp`` and an untrained 64×64 actor; the ratio is against the largest chunk
(one batch of all days) measured in the same run. The rule's days are played, not read from the
user's store. Prints a table; one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Time each policy at each chunk size; print the table (one JSON object last)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--day", default="hectic", choices=["quiet", "normal", "hectic", "surge"])
    ap.add_argument("--days", type=int, default=1000, help="days evaluated per timed call")
    ap.add_argument("--chunks", type=int, nargs="+", default=[100, 1000], help="days per compiled batch, each")
    ap.add_argument("--reps", type=int, default=2, help="timed evaluations per chunk size (best kept)")
    args = ap.parse_args(argv)
    for name in ("days", "reps"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} = {getattr(args, name)}: give a whole number ≥ 1")
    if any(c < 1 for c in args.chunks):
        ap.error(f"--chunks = {args.chunks}: each a whole number ≥ 1")

    os.environ["GPU_SCHED_REFERENCE_CACHE"] = "0"  # the rule's days are played, never read from the user's cache
    from gpu_sched_env.core.jaxcache import use_compile_cache

    use_compile_cache()
    import jax
    import jax.numpy as jnp

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy, actor_arrays
    from gpu_sched_agents.rl.ppo_jax.jax_eval import learned_rule, per_day, test_keys
    from gpu_sched_agents.rl.ppo_jax.network import ActorCritic
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP
    from studies.conf import compose_config

    env = JaxCGRSP.from_config(env_config(compose_config("algo=ppo_jax", f"day={args.day}")), records=False)
    net = ActorCritic(n_actions=env.n_actions, net_arch=(64, 64))
    actor = NumpyPolicy(actor_arrays(net.init(jax.random.PRNGKey(0), jnp.zeros((1, env.obs_dim)))))
    policies = {"spt_rescue_defer_exp": RULES["spt_rescue_defer_exp"], "actor_64x64": learned_rule(env, actor)}
    keys = test_keys(args.days)
    rows = []
    for label, policy in policies.items():
        for chunk in sorted(set(args.chunks)):
            t0 = time.perf_counter()
            per_day(env, {label: policy}, keys[: min(chunk, args.days)], chunk=chunk)  # compile (or load) + one batch
            first = time.perf_counter() - t0
            best = float("inf")
            for _ in range(args.reps):
                t0 = time.perf_counter()
                per_day(env, {label: policy}, keys, chunk=chunk)
                best = min(best, time.perf_counter() - t0)
            rows.append({"policy": label, "chunk": chunk, "first_call_s": first, "days_s": best})
    base = {r["policy"]: r["days_s"] for r in rows if r["chunk"] == max(args.chunks)}
    print(f"{args.days} {args.day} days per call, best of {args.reps}; jax {jax.__version__}, {jax.devices()[0]}")
    print(f"{'policy':22s} {'chunk':>6s} {'first call [s]':>15s} {'days [s]':>9s} {'vs one batch':>13s}")
    for r in rows:
        r["ratio"] = r["days_s"] / base[r["policy"]]
        print(f"{r['policy']:22s} {r['chunk']:6d} {r['first_call_s']:15.1f} {r['days_s']:9.1f} {r['ratio']:12.2f}×")
    print(json.dumps({"day": args.day, "days": args.days, "reps": args.reps, "rows": rows}))
    return 0
