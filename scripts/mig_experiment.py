"""MIG experiment: Best-Fit vs CP-SAT on data sets with successive prime seeds.

Resumable: each seed's rows go to ``OUT/seeds/seed_<p>.json`` (atomic); a rerun skips
seeds already done with the same settings. Then writes results.csv, summary.csv,
summary.md and figures (PNG) under OUT.

    .venv/bin/python scripts/mig_experiment.py --n-sets 100 --time-limit 10
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_json, atomic_write_table, atomic_write_text
from gpu_sched_env.mig.generator import next_primes
from gpu_sched_env.mig.report import (
    COLUMNS,
    figures,
    gantt_figure,
    markdown_table,
    paired,
    run_seed,
    summary,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-sets", type=int, default=100, help="number of data sets (default 100)")
    ap.add_argument("--first-seed", type=int, default=2, help="seeds are the primes >= this (default 2)")
    ap.add_argument("--n-jobs", type=int, default=50, help="jobs per data set (default 50)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="CP-SAT budget per data set [s] (default 10)")
    ap.add_argument("--workers", type=int, default=1, help="CP-SAT search workers (default 1)")
    ap.add_argument("--poll-interval", type=int, default=1, help="polling interval [min] (default 1)")
    ap.add_argument("--out", type=Path, default=Path("runs/mig_experiment"))
    ap.add_argument("--no-figures", action="store_true")
    a = ap.parse_args(argv)
    for name in ("n_sets", "n_jobs", "workers", "poll_interval"):
        if getattr(a, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} = {getattr(a, name)}: allowed: >= 1")
    if a.time_limit <= 0:
        raise ConfigError(f"--time-limit = {a.time_limit}: allowed: > 0")
    settings = {"n_jobs": a.n_jobs, "time_limit": a.time_limit, "workers": a.workers,
                "poll_interval": a.poll_interval}
    seeds = next_primes(a.n_sets, a.first_seed)
    atomic_write_json(a.out / "config.json", {**settings, "seeds": seeds, "argv": sys.argv})
    rows = []
    todo = []
    for p in seeds:
        f = a.out / "seeds" / f"seed_{p}.json"
        if f.is_file():
            rec = json.loads(f.read_text())
            if rec.get("settings") == settings:
                rows += rec["rows"]
                continue
        todo.append(p)
    print(f"{len(seeds) - len(todo)} of {len(seeds)} data sets already done; running {len(todo)}")
    for p in tqdm(todo, desc="data sets", unit="set"):
        r = run_seed(p, **settings)
        atomic_write_json(a.out / "seeds" / f"seed_{p}.json", {"settings": settings, "rows": r})
        rows += r
    df = pd.DataFrame(rows, columns=list(COLUMNS)).sort_values(["seed", "method"]).reset_index(drop=True)
    atomic_write_table(a.out / "results.csv", df)
    summ = summary(df)
    atomic_write_table(a.out / "summary.csv", summ)
    pc = paired(df)
    md = ["# MIG experiment", "", f"Command: `{' '.join(sys.argv)}`", "",
          markdown_table(summ), "",
          "Paired makespan difference Best-Fit − CP-SAT: "
          + ", ".join(f"{k} = {v:.4g}" for k, v in pc.items()), ""]
    atomic_write_text(a.out / "summary.md", "\n".join(md))
    print("\n".join(md))
    if not a.no_figures:
        for path in figures(df, a.out):
            print("figure:", path)
        print("figure:", gantt_figure(seeds[0], a.out / "gantt_first_seed.png", a.time_limit, a.n_jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
