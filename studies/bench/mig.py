"""Benchmarks for the MIG scenario (figures and ratios against baselines run in the same process).

1. Generator throughput: our vectorised generator vs a bare per-job NumPy draw loop (the
   straightforward port of the Java tool), both on the Java tool's test config, N jobs.
2. Solve time on 50-job data sets: CP-SAT (online, per data set) vs Best-Fit and the
   pausing Best-Fit, median over the first S prime seeds.

    .venv/bin/python -m studies bench scenarios --part mig --jobs 100000 --seeds 20
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from gpu_sched_env.mig.generator import NormalisedFileWarning, generate, load_config, next_primes
from gpu_sched_env.mig.workload import JAVA_TEST_CONFIG


def numpy_loop(n: int, seed: int) -> list[dict]:
    """Baseline: one job at a time with NumPy scalar draws (same rules as the test config)."""
    rng = np.random.default_rng(seed)
    t = 0.0
    jobs = []
    for _ in range(n):
        prio = int(rng.integers(1, 6))
        length = max(1, int(rng.normal(5, 2)))
        mem = [max(0, int(rng.normal(2000, 50)))]
        for _ in range(length - 1):
            mem.append(max(0, int(rng.normal(mem[-1], 50))))
        t += rng.exponential(1 / 10)
        jobs.append(
            {
                "arrivalTime": t,
                "cudaCoresNumber": 100,
                "deadline": 100,
                "isStoppable": True,
                "priority": prio,
                "timeslices": mem,
            }
        )
    return jobs


def best_of(fn, reps: int) -> float:
    """Best wall time of ``reps`` calls of ``fn``."""
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def main(argv: list[str] | None = None) -> int:
    """Print the generator and solve-time figures; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=20, help="data sets for the solve-time comparison")
    ap.add_argument("--time-limit", type=float, default=10.0, help="CP-SAT budget per data set [s]")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalisedFileWarning)
        cfg = load_config(JAVA_TEST_CONFIG)
    n = a.jobs
    t_ours = best_of(lambda: generate(cfg, 41, n), a.reps)
    t_json = best_of(lambda: generate(cfg, 41, n).dumps(), 1)
    t_loop = best_of(lambda: numpy_loop(n, 41), 1)
    print(f"# Generator, {n} jobs (test_config rules), best of {a.reps}")
    print(f"ours (vectorised)      : {t_ours:8.3f} s  {n / t_ours:12,.0f} jobs/s")
    print(f"ours + JSON text       : {t_json:8.3f} s  {n / t_json:12,.0f} jobs/s")
    print(f"bare NumPy draw loop   : {t_loop:8.3f} s  {n / t_loop:12,.0f} jobs/s")
    print(f"speed-up (draws)       : {t_loop / t_ours:8.1f} x")

    from gpu_sched_agents.heuristics.mig import BestFit, BestFitPausing
    from gpu_sched_agents.heuristics.mig.cpsat import run_exact
    from gpu_sched_env.mig.sim import run_policy
    from gpu_sched_env.mig.workload import mig_dataset

    bf_t, pz_t, cp_t, status = [], [], [], []
    for p in next_primes(a.seeds):
        jobs = mig_dataset(p)
        for policy, out in ((BestFit(), bf_t), (BestFitPausing(), pz_t)):
            t0 = time.perf_counter()
            run_policy(jobs, policy)
            out.append(time.perf_counter() - t0)
        r = run_exact(jobs, time_limit=a.time_limit)
        cp_t.append(r.solve_time)
        status.append(r.status)
    mb, mc = statistics.median(bf_t), statistics.median(cp_t)
    print(f"\n# Solve time per 50-job data set, median over the first {a.seeds} prime seeds")
    print(f"Best-Fit (whole online run) : {mb * 1e3:10.3f} ms")
    print(f"pausing Best-Fit (whole run): {statistics.median(pz_t) * 1e3:10.3f} ms")
    print(
        f"CP-SAT (sum of poll solves) : {mc * 1e3:10.1f} ms   (max {max(cp_t):.2f} s, "
        f"{status.count('optimal')}/{len(status)} optimal, limit {a.time_limit:g} s)"
    )
    print(f"ratio CP-SAT / Best-Fit     : {mc / mb:10.0f} x")
    return 0
