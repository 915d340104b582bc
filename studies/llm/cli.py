"""LLM-serving report: FIFO vs WSRPT on the discriminating and mixed workloads, both engines.

Usage: .venv/bin/python -m studies llm-report [--workloads discriminating mixed] [--out runs/llm]
Writes results.csv/.md and one folder per workload (Gantt charts, comparison, utilisation).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpu_sched_env.core.io import atomic_write_json, atomic_write_table, atomic_write_text
from gpu_sched_env.llm.model import WORKLOADS
from studies.hgsp.report import markdown_table
from studies.llm.report import run_grid, write_folder

COLUMNS = [
    "workload",
    "engine",
    "policy",
    "weighted_wait",
    "avg_wait",
    "avg_queue_wait",
    "makespan",
    "completed",
    "skipped",
    "gpu_util_pct",
    "weighted_wait_vs_fifo_pct",
    "avg_wait_vs_fifo_pct",
]


def main(argv: list[str] | None = None) -> int:
    """Run the LLM-serving report; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--seed", type=int, default=0, help="seed of the mixed workload")
    ap.add_argument("--dt", type=float, default=0.01, help="discrete step [s]")
    ap.add_argument("--out", type=Path, default=Path("runs/llm"))
    args = ap.parse_args(argv)
    atomic_write_json(args.out / "config.json", {**vars(args), "argv": sys.argv})
    table, res = run_grid(args.workloads, seed=args.seed, dt=args.dt)
    atomic_write_table(args.out / "results.csv", table)
    md = markdown_table(table, COLUMNS)
    atomic_write_text(args.out / "results.md", "# LLM serving results\n\n" + md + "\n")
    print(md)
    for wl in args.workloads:
        sub = table[(table.workload == wl) & (table.engine == "discrete")]
        write_folder({p: res[wl, "discrete", p] for p in sub.policy}, sub, args.out / wl)
    print(f"\nwrote {args.out}")
    return 0
