"""Benchmark: scheduler runtime on 100 tasks for MemBatch, baseline ILP and FCFS-LLF.

    .venv/bin/python -m studies bench scenarios --part edge [--tasks 100] [--repeats 5] [--time-limit 1.0]

Prints the median wall time of each scheduler over the repeats (same workload, seed 0) and
its ratio to FCFS-LLF measured in the same run, plus the ILP solve statuses.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Sequence

from gpu_sched_agents.heuristics.edge import LLF_STREAM, BaselineILP, FcfsLLF, MemBatchILP
from gpu_sched_agents.heuristics.edge.ilp import SolverConfig
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.model import EdgeProblem, jetson_cluster
from gpu_sched_env.edge.profiles import default_profiles
from gpu_sched_env.edge.sim import simulate
from gpu_sched_env.edge.workload import random_workloads, tasks_from_workloads


def main(argv: Sequence[str] | None = None) -> int:
    """Time each scheduler on one workload and print the table; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=1.0, help="CP-SAT deterministic limit per solve")
    args = ap.parse_args(argv)
    if args.tasks < 1 or args.repeats < 1:
        ap.error("--tasks and --repeats must be >= 1")
    cluster = jetson_cluster()
    tasks = tasks_from_workloads(random_workloads(args.tasks, stream(args.seed, "tasks")), default_profiles(), cluster)
    problem = EdgeProblem(tuple(tasks), cluster)
    solver = SolverConfig(time_limit_s=args.time_limit)
    scheds = {"fcfs_llf": FcfsLLF(), "membatch": MemBatchILP(solver), "baseline_ilp": BaselineILP(solver)}
    print(
        f"# bench_edge: {args.tasks} tasks, seed {args.seed}, {args.repeats} repeats, "
        f"CP-SAT limit {args.time_limit} (deterministic), 1 worker; {platform.processor() or platform.machine()}"
    )
    res = {}
    for name, s in scheds.items():
        times, plan = [], None
        for _ in range(args.repeats):
            rng = stream(args.seed, LLF_STREAM)
            t0 = time.perf_counter()
            plan = s.plan(problem, rng)
            times.append(time.perf_counter() - t0)
        sim = simulate(plan, cluster)
        st = {}
        for r in plan.reports:
            st[r.status] = st.get(r.status, 0) + 1
        res[name] = (statistics.median(times), min(times), max(times), sim.makespan_s / 3600, st)
    base = res["fcfs_llf"][0]
    print(f"{'scheduler':<14}{'median s':>11}{'min s':>10}{'max s':>10}{'x FCFS-LLF':>12}{'makespan h':>12}  solves")
    for name, (med, lo, hi, mk, st) in res.items():
        print(f"{name:<14}{med:>11.4f}{lo:>10.4f}{hi:>10.4f}{med / base:>12.0f}{mk:>12.2f}  {st or '-'}")
    return 0
