"""CGRSP command-line tools: ``gpu-sched compare`` and ``gpu-sched trace``.

``compare`` runs CGRSP policies over seeds on a day type, or on a job log::

    gpu-sched compare                       # all 11 policies, hectic, seeds 0-29
    gpu-sched compare --day surge --seeds 10 --policies fifo rh cadr
    gpu-sched compare --param c_max=7 --param theta=300
    gpu-sched compare --trace jobs.csv --day normal --seeds 5   # heuristics on a studio's own jobs

It prints mean wait (95 % CI), miss %, tardiness and cost per policy; for the hectic day with
default parameters also the published values (spec §4), the differences and the §6
calibration checks. It writes the tidy per-seed table and the summary under ``--out``. With
``--trace`` the trace's jobs replace each seed's generated day (run times, stock and delays
still come from the seed; see :mod:`gpu_sched_env.cgrsp.trace`). The trace is read and checked
once, before any day runs, and every policy and seed (every worker process too) plays those
parsed jobs: the table's header and ``trace.json`` beside it give the file's SHA-256 and rows.

``trace`` writes a simulated day or month as a trace that ``simulate(trace=...)`` and
``compare --trace`` replay::

    gpu-sched trace --day hectic --seed 3 --out runs/traces/hectic_3.csv
    gpu-sched trace --day surge --seed 0 --param tight_fraction=0.5 --out surge.parquet
    gpu-sched trace --month 0 --out runs/traces/month_0.csv

A day is written as generated (``simulate(p, day, seed)`` and ``simulate(p, day, seed,
trace=FILE)`` give identical results). A month is the 30 days of the ``month`` experiment's
replication REP (same day plan and run seeds) back to back: day d's times are shifted by
d·86 400 s and its job ids prefixed ``dDD-``. Replayed as one trace, a day's backlog runs on
into the next day, unlike the ``month`` experiment, which simulates each day on its own. It
prints the written file's SHA-256 (what ``compare --trace`` reports for the file it plays).

Both check their output paths before they compute anything: an unwritable ``--out`` is a
one-line error (exit status 2) and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.batch import run_grid, summarise
from gpu_sched_env.cgrsp.params import DAY_TYPES, PARAM_NAMES, make_params
from gpu_sched_env.cgrsp.policies import param_names_help, per_policy_kwargs, policy_names
from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC, check_contract
from gpu_sched_env.cgrsp.trace import Trace, day_trace, month_trace, write_trace
from gpu_sched_env.cgrsp.workload import WORKLOAD_PARAMS
from gpu_sched_env.core.cliargs import check_flag_int, parse_params
from gpu_sched_env.core.errors import ConfigError, check_keys
from gpu_sched_env.core.fanout import EXECUTORS, default_workers
from gpu_sched_env.core.io import (
    atomic_write_json,
    atomic_write_table,
    atomic_write_text,
    check_output_dir,
    check_output_file,
    file_sha256,
)

# what compare writes into its output folder
COMPARE_FILES = ("per_seed.csv", "summary.csv", "contract.csv", "table.txt", "trace.json")


def table(summary: pd.DataFrame, published: bool) -> pd.DataFrame:
    """The printed comparison: one row per policy (and the published values when ``published``)."""
    rows = []
    for pol, r in summary.iterrows():
        row = {
            "policy": pol,
            "wait min (95% CI)": f"{r.mean_wait_min:7.2f} ± {r.mean_wait_min_ci:5.2f}",
            "miss %": f"{r.miss_pct:6.2f} ± {r.miss_pct_ci:4.2f}",
            "tardiness min": f"{r.mean_tardiness_min:6.2f}",
            "cost $": f"{r.cost_usd:5.2f}",
        }
        if published and pol in PUBLISHED_HECTIC.index:
            p = PUBLISHED_HECTIC.loc[pol]
            row.update(
                {
                    "pub wait": p.mean_wait_min,
                    "Δwait %": f"{100 * (r.mean_wait_min / p.mean_wait_min - 1):+6.1f}",
                    "pub miss": p.miss_pct,
                    "Δmiss pp": f"{r.miss_pct - p.miss_pct:+6.2f}",
                    "pub tard": p.mean_tardiness_min,
                    "pub cost": "—" if pd.isna(p.cost_usd) else f"{p.cost_usd:.2f}",
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def compare_main(argv: list[str] | None = None) -> int:
    """``gpu-sched compare``: returns the exit status."""
    from gpu_sched_env.core.outdir import claim

    args, params, trace, plan = _compare_args(argv)
    try:
        with claim(plan):  # created or compare's own, locked while the days run and the tables are written
            t0 = time.perf_counter()
            df = run_grid(
                args.policies,
                range(args.seeds),
                day=args.day,
                params=params,
                trace=trace,  # parsed once in _compare_args: no run reads the file again
                executor=args.executor,
                workers=args.workers,
                desc=f"{args.day} × {args.seeds} seeds",
                progress=not args.no_progress,
            )
            _compare_report(args, params, df, trace, wall=time.perf_counter() - t0)
    except ConfigError as e:  # another writer holds the folder
        print(f"gpu-sched compare: {e}", file=sys.stderr)
        return 2
    return 0


COMPARE = "gpu-sched compare"


def _compare_legacy(path: Path) -> dict[str, Any] | None:
    """A folder compare wrote before it kept a manifest: nothing in it but compare's own files."""
    from gpu_sched_env.core.outdir import OURS

    names = sorted(f.relative_to(path).as_posix() for f in path.rglob("*") if f.is_file() and f.name not in OURS)
    if names and set(names) <= set(COMPARE_FILES):
        return {"command": COMPARE, "owner": {}, "files": names, "source": "its files (" + ", ".join(names) + ")"}
    return None


def _compare_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="gpu-sched compare", description="Compare CGRSP policies over seeds on a day type or a trace."
    )
    ap.add_argument("--day", default="hectic", choices=list(DAY_TYPES))
    ap.add_argument("--seeds", type=int, default=30, help="seeds 0..N-1 (default 30)")
    ap.add_argument(
        "--policies",
        nargs="+",
        default=list(POLICY_NAMES),
        choices=list(policy_names(published_only=False)),
        metavar="POLICY",
        help="the published ten and CADR-OO by default; the deferring rules (e.g. spt_rescue_defer_exp) and the "
        "planner by name",
    )
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="simulator/policy parameter override (repeatable)",
    )
    ap.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FILE",
        help="job log (CSV/Parquet) replacing each seed's generated jobs; --day still sets the model",
    )
    ap.add_argument("--executor", default="process", choices=EXECUTORS)
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes for --executor process (at least 1; default: the usable cores)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("runs/compare"),
        help="output folder (default runs/compare); the tables go into a subfolder named after the day or trace",
    )
    ap.add_argument(
        "--no-progress", action="store_true", help="no progress bar (it is off anyway when stderr is not a terminal)"
    )
    ap.add_argument(
        "--force",
        action="store_true",
        help="write the tables beside files compare did not write in their folder (none of those is replaced)",
    )
    return ap


def _compare_args(argv: list[str] | None) -> tuple[argparse.Namespace, dict[str, Any], Trace | None, Any]:
    """The parsed command line, its ``--param`` overrides, the loaded trace and the tables' folder, checked first.

    The folder (:mod:`gpu_sched_env.core.outdir`) is one compare made (its ``.gpu-sched.json``),
    a new or empty one, or with ``--force`` one with other files, none of which is replaced.
    """
    from gpu_sched_env.core.outdir import check

    ap = _compare_parser()
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds {args.seeds}: must be at least 1")
    if args.workers is not None and args.workers < 1:
        ap.error(
            f"--workers {args.workers}: must be at least 1 (leave it out for the default: the {default_workers()} "
            "usable cores)"
        )
    try:
        params = parse_params(args.param, param_names_help)
        kw = per_policy_kwargs(args.day, params, args.policies)  # validate before fanning out
        check_output_dir("--out", args.out)  # the folder given, then the subfolder the tables go to
        check_output_dir("--out", _out_dir(args, params), COMPARE_FILES)
        plan = check(_out_dir(args, params), COMPARE, {}, files=COMPARE_FILES, force=args.force, legacy=_compare_legacy)
        trace = None
        if args.trace is not None:  # read once: a missing, unreadable or malformed file fails here
            sim = make_params(args.day, **{k: v for k, v in kw[args.policies[0]].items() if k in PARAM_NAMES})
            trace = Trace.load(args.trace, sim)
            trace.params(sim)  # the model with the trace's n_jobs: refused here, not in every worker
    except ConfigError as e:
        ap.error(str(e))
    return args, params, trace, plan


def _out_dir(args: argparse.Namespace, params: dict[str, Any]) -> Path:
    """The folder under ``--out`` that gets the tables: named after the day (or trace) and the overrides."""
    stem = args.day if args.trace is None else f"trace_{args.trace.stem}_{args.day}"
    return args.out / (stem + ("" if not params else "_" + "_".join(f"{k}={v}" for k, v in params.items())))


def _compare_report(
    args: argparse.Namespace, params: dict[str, Any], df: pd.DataFrame, trace: Trace | None, wall: float
) -> None:
    """Write the per-seed table, the summary (and the §6 checks) under ``--out``; print them."""
    summary = summarise(df)
    published = args.day == "hectic" and not params and trace is None
    out = _out_dir(args, params)
    atomic_write_table(out / "per_seed.csv", df)
    atomic_write_table(out / "summary.csv", summary.reset_index())

    tab = table(summary, published)
    pd.set_option("display.width", 200)
    what = f"{args.day} day" if trace is None else f"trace {args.trace} ({args.day} model)"
    print(
        f"\nCGRSP {what}, {args.seeds} seeds, {len(args.policies)} policies "
        f"({len(df)} simulated days in {wall:.1f} s wall, executor={args.executor})"
    )
    if trace is not None:  # what every run played: the bytes read once, before the first
        print(f"trace {trace.source}: {trace.n_jobs} jobs, sha256 {trace.sha256}")
        atomic_write_json(out / "trace.json", trace.provenance())
    print(tab.to_string(index=False))
    if published:
        checks = check_contract(summary)
        print("\nCalibration contract (spec §6):")
        print(checks.to_string(index=False))
        atomic_write_table(out / "contract.csv", checks)
        print(f"\n{int(checks.holds.sum())} of {len(checks)} checks hold.")
    atomic_write_text(out / "table.txt", tab.to_string(index=False) + "\n")
    print(f"Tables written to {out}/")


def trace_main(argv: list[str] | None = None) -> int:
    """``gpu-sched trace``: returns the exit status."""
    ap = argparse.ArgumentParser(prog="gpu-sched trace", description="Write a simulated CGRSP day or month as a trace.")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--day", choices=list(DAY_TYPES))
    what.add_argument("--month", type=int, metavar="REP", help="replication seed of the month experiment")
    ap.add_argument("--seed", type=int, default=0, help="run seed of the day (default 0)")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"workload parameter override (repeatable): {', '.join(WORKLOAD_PARAMS)}",
    )
    ap.add_argument("--out", type=Path, required=True, help="output .csv or .parquet")
    args = ap.parse_args(argv)
    try:
        check_flag_int("--seed", args.seed)
        if args.month is not None:
            check_flag_int("--month", args.month)
        params = parse_params(args.param, lambda: "a workload parameter: " + ", ".join(WORKLOAD_PARAMS))
        # a trace holds the jobs only: a fleet or stock parameter would change nothing in it
        check_keys(params, WORKLOAD_PARAMS, section="trace --param (workload parameters)")
        check_output_file("--out", args.out, (".csv", ".parquet"))
        df = day_trace(args.day, args.seed, **params) if args.day else month_trace(args.month, **params)
        path = write_trace(df, args.out)
    except ConfigError as e:
        ap.error(str(e))
    print(
        f"{len(df)} jobs, submit 0-{df['submit_s'].max() / 3600:.1f} h, written to {path} (sha256 {file_sha256(path)})"
    )
    return 0


__all__ = ["compare_main", "table", "trace_main"]
