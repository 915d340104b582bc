"""MIG experiment: Best-Fit, the pausing Best-Fit and CP-SAT on data sets with successive prime seeds.

Every row carries the data set's makespan lower bound (docs/mig.md, "Lower bound").
Resumable: each seed's rows are one cell of the shared resume store (``gpu_sched_env/core/store.py``)
under ``OUT/cells/``, keyed by the seed, the settings and the code version (package version +
hash of the MIG simulator's and heuristics' sources); a rerun runs only the seeds not stored
under the current key. Then writes results.csv, summary.csv,
summary.md (results beside the bound + the published-vs-ours table) and figures (PNG)
under OUT; ``--doc docs/mig.md`` also writes that block into the doc between its
``<!-- mig-results:start -->`` / ``:end`` markers.

    .venv/bin/python -m studies mig-experiment --n-sets 100 --time-limit 10 --doc docs/mig.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import (
    atomic_write_json,
    atomic_write_table,
    atomic_write_text,
    replace_doc_section,
)
from gpu_sched_env.core.store import CellStore
from gpu_sched_env.mig.generator import next_primes
from studies.mig.published import DOC_KEY, dataset_stats, doc_block
from studies.mig.report import COLUMNS, HEURISTICS, figures, gantt_figure, run_seed, summary

PUBLISHED = Path(__file__).resolve().parents[2] / "../shared/data/job-generator/test_jobs.json"

# the code that decides a data set's rows: the MIG model, simulator, solvers and heuristics
MIG_SOURCES = (
    "gpu_sched_env/mig/*.py",
    "gpu_sched_env/mig/generator/*.py",
    "gpu_sched_env/core/rng.py",
    "agents/heuristics/mig/*.py",
    "studies/mig/report.py",
)


def main(argv: list[str] | None = None) -> int:
    """Run the data sets not yet stored, then write the tables, figures and doc block; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-sets", type=int, default=100, help="number of data sets (default 100)")
    ap.add_argument("--first-seed", type=int, default=2, help="seeds are the primes >= this (default 2)")
    ap.add_argument("--n-jobs", type=int, default=50, help="jobs per data set (default 50)")
    ap.add_argument("--time-limit", type=float, default=10.0, help="CP-SAT budget per data set [s] (default 10)")
    ap.add_argument("--workers", type=int, default=1, help="CP-SAT search workers (default 1)")
    ap.add_argument("--poll-interval", type=int, default=1, help="polling interval [min] (default 1)")
    ap.add_argument("--out", type=Path, default=Path("runs/mig_experiment"))
    ap.add_argument("--no-figures", action="store_true")
    ap.add_argument("--doc", type=Path, help="also write the results block into this Markdown file (between markers)")
    ap.add_argument("--published", type=Path, default=PUBLISHED, help="the Java tool's test_jobs.json (optional)")
    a = ap.parse_args(argv)
    given = list(sys.argv[1:] if argv is None else argv)  # the command line, for the record
    for name in ("n_sets", "n_jobs", "workers", "poll_interval"):
        if getattr(a, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} = {getattr(a, name)}: allowed: >= 1")
    if a.time_limit <= 0:
        raise ConfigError(f"--time-limit = {a.time_limit}: allowed: > 0")
    settings = {"n_jobs": a.n_jobs, "time_limit": a.time_limit, "workers": a.workers, "poll_interval": a.poll_interval}
    # what a cached seed file must match: the settings, the methods and the row layout
    cache_key = {**settings, "methods": [*HEURISTICS, "cpsat"], "columns": list(COLUMNS)}
    seeds = next_primes(a.n_sets, a.first_seed)
    atomic_write_json(
        a.out / "config.json", {**settings, "seeds": seeds, "argv": ["python -m studies mig-experiment", *given]}
    )
    store = CellStore(a.out / "cells", MIG_SOURCES)
    keys = {p: store.key({"seed": p, **cache_key}) for p in seeds}
    have = store.keys()
    todo = [p for p in seeds if keys[p] not in have]
    print(f"{len(seeds) - len(todo)} of {len(seeds)} data sets already done; running {len(todo)}")
    with store.writer(flush_every=1) as w:  # one chunk per data set: each is minutes of CP-SAT at full size
        for p in tqdm(todo, desc="data sets", unit="set"):
            w.add(keys[p], run_seed(p, **settings))
    rows = store.rows([keys[p] for p in seeds]).drop(columns="key").to_dict("records")
    df = pd.DataFrame(rows, columns=list(COLUMNS)).sort_values(["seed", "method"]).reset_index(drop=True)
    atomic_write_table(a.out / "results.csv", df)
    summ = summary(df)
    atomic_write_table(a.out / "summary.csv", summ)
    command = " ".join(["python -m studies mig-experiment", *given])
    block = doc_block(df, dataset_stats(seeds, a.n_jobs), settings, command, a.published)
    atomic_write_text(a.out / "summary.md", f"# MIG experiment\n\n{block}\n")
    print(block)
    if a.doc is not None:
        print("doc:", replace_doc_section(a.doc, DOC_KEY, block))
    if not a.no_figures:
        for path in figures(df, a.out):
            print("figure:", path)
        print("figure:", gantt_figure(seeds[0], a.out / "gantt_first_seed.png", a.time_limit, a.n_jobs))
    return 0
