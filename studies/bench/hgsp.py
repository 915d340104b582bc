"""HGSP benchmark: FIFO / Greedy tasks scheduled per second and SAGreedy's wall time.

Usage: .venv/bin/python -m studies bench scenarios --part hgsp [--tasks tasks2] [--cluster small] [--repeats 5]
All figures are measured in this run; ratios are against this run's FIFO time.
"""

from __future__ import annotations

import argparse
import statistics
import time

from gpu_sched_env.hgsp import generate_tasks, run
from gpu_sched_env.hgsp.model import CLUSTER_PRESETS
from gpu_sched_env.hgsp.workload import PRESETS


def best_of(fn, repeats: int) -> tuple[float, float]:
    """Best and median wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Print the HGSP timing table; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="tasks2", choices=sorted(PRESETS))
    ap.add_argument("--cluster", default="small", choices=list(CLUSTER_PRESETS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sa-iters", type=int, default=100)
    args = ap.parse_args(argv)
    ts = generate_tasks(args.tasks, 0)
    n = ts.n
    print(f"{ts.name}: {n} tasks, {args.cluster} cluster, best / median of {args.repeats}")
    rows = {}
    for pol in ("fifo", "greedy"):
        rows[pol] = best_of(lambda p=pol: run(p, ts, args.cluster), args.repeats)
    sa_repeats = max(1, args.repeats // 2)
    for label, kw in (
        ("sagreedy (list decoder)", {"decoder": "list"}),
        ("sagreedy (release-aware)", {"decoder": "release"}),
    ):
        rows[label] = best_of(lambda k=kw: run("sagreedy", ts, args.cluster, iters=args.sa_iters, **k), sa_repeats)
    fifo = rows["fifo"][0]
    print(f"{'policy':28s} {'best [s]':>10s} {'median [s]':>11s} {'tasks/s':>11s} {'x FIFO':>8s}")
    for k, (best, med) in rows.items():
        print(f"{k:28s} {best:10.4f} {med:11.4f} {n / best:11.0f} {best / fifo:8.1f}")
    for label, dec in (("sagreedy (list decoder)", "list"), ("sagreedy (release-aware)", "release")):
        r = run("sagreedy", ts, args.cluster, iters=args.sa_iters, decoder=dec)
        k = max(1, len(r.extra["trace"]))
        print(
            f"{label}, K = {args.sa_iters}: {len(r.extra['trace'])} iterations run; "
            f"per decode {rows[label][0] / k * 1e3:.1f} ms"
        )
    return 0
