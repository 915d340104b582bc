"""Command line of the experiment programme: ``python -m studies experiments``.

    python -m studies experiments list
    python -m studies experiments validation [--seeds 0-29] [--policies rh cadr spt]
    python -m studies experiments tight --values 0.1 0.5 0.9 --executor ray
    python -m studies experiments all            # everything + timing + docs/results.md
    python -m studies experiments report         # re-render docs/results.md (runs missing cells)

Results go to ``--out`` (default ``runs/experiments``): a shared cell store ``cells/``, and
per experiment ``<name>/results.parquet``, ``config.json``, ``report.md`` and figures.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.params import DAY_TYPES
from gpu_sched_env.cgrsp.policies import param_names_help
from gpu_sched_env.core.cliargs import literal, parse_params
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.fanout import EXECUTORS, default_workers
from gpu_sched_env.core.io import atomic_write_table
from gpu_sched_env.core.store import CellStore
from studies.cgrsp.programme.grids import (
    EXPERIMENT_NAMES,
    EXPERIMENTS,
    Experiment,
    all_policy_names,
    configure,
    parse_seeds,
)
from studies.cgrsp.programme.report import write_experiment_report, write_results_page
from studies.cgrsp.programme.runner import RunReport, cell_store, run_experiment
from studies.cgrsp.programme.tables import MAIN_METRICS, cell_means


def parse_mix(text: str) -> dict[str, float]:
    """``hectic=4,surge=3,normal=18,quiet=5`` → dict."""
    out = {}
    for part in text.split(","):
        if "=" not in part:
            raise ConfigError(f"--mix {text!r}: expected DAY=COUNT pairs separated by commas, days {list(DAY_TYPES)}")
        k, v = part.split("=", 1)
        out[k.strip()] = float(v)
    return out


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser (subcommand = experiment name, ``all``, ``report`` or ``list``)."""
    ap = argparse.ArgumentParser(description="CGRSP experiment programme (spec §5).")
    ap.add_argument(
        "command",
        choices=[*EXPERIMENT_NAMES, "all", "report", "list"],
        metavar="COMMAND",
        help=f"one of: {', '.join(EXPERIMENT_NAMES)}, all, report, list",
    )
    ap.add_argument(
        "--seeds",
        nargs="+",
        default=None,
        metavar="S",
        help="run seeds (replication seeds for month): integers or ranges like 0-29",
    )
    ap.add_argument(
        "--policies",
        nargs="+",
        default=None,
        choices=list(all_policy_names()),
        metavar="POLICY",
        help="published policies or extension heuristics (edf_defer_low)",
    )
    ap.add_argument("--days", nargs="+", default=None, choices=list(DAY_TYPES), metavar="DAY")
    ap.add_argument("--values", nargs="+", default=None, metavar="V", help="values of the swept parameter")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="fixed simulator parameter or policy knob (repeatable)",
    )
    ap.add_argument("--w-cost", nargs="+", type=float, default=None, help="objective: cost weights")
    ap.add_argument("--ratios", nargs="+", type=float, default=None, help="objective: α2/α1 ratios")
    ap.add_argument("--mix", default=None, help="month: DAY=COUNT,... (or probabilities with --mix-mode probs)")
    ap.add_argument("--mix-mode", default=None, choices=["counts", "probs"])
    ap.add_argument("--n-days", type=int, default=None, help="month: days per month")
    ap.add_argument("--executor", default="process", choices=EXECUTORS)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--ray-address", default=None, help="existing Ray cluster (default: start one locally)")
    ap.add_argument("--out", type=Path, default=Path("runs/experiments"))
    ap.add_argument("--docs", type=Path, default=Path("docs"), help="where all/report write results.md and figures/")
    ap.add_argument("--no-progress", action="store_true")
    return ap


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Experiment overrides from the parsed arguments (None = keep the default)."""
    return {
        "seeds": parse_seeds(args.seeds) if args.seeds else None,
        "policies": args.policies,
        "days": args.days,
        "values": [literal(v) for v in args.values] if args.values else None,
        "base_params": parse_params(args.param, param_names_help) or None,
        "w_cost": args.w_cost,
        "ratios": args.ratios,
        "mix": parse_mix(args.mix) if args.mix else None,
        "mix_mode": args.mix_mode,
        "n_days": args.n_days,
    }


def _applicable(name: str, ov: dict[str, Any]) -> dict[str, Any]:
    """Drop overrides that make no sense for ``name`` (used by ``all``/``report``)."""
    e = EXPERIMENTS[name]
    drop = set()
    if e.kind != "sweep":
        drop |= {"values"}
    if e.kind != "objective":
        drop |= {"w_cost", "ratios"}
    if e.kind != "month":
        drop |= {"mix", "mix_mode", "n_days"}
    else:
        drop |= {"days"}
    if name == "single":
        drop |= {"seeds"}
    if name in ("daytype", "rho", "rhomarkov"):
        drop |= {"days"}
    if e.kind == "sweep" and not set(POLICY_NAMES) <= set(e.policies):  # policy-specific sweeps keep their policies
        drop |= {"policies"}
    return {k: v for k, v in ov.items() if k not in drop}


def _print_summary(exp: Experiment, df: pd.DataFrame, rep: RunReport) -> None:
    by = ["policy"] if exp.kind in ("policies", "objective", "month") else ["day", exp.param or "day", "policy"]
    by = list(dict.fromkeys(by))
    m = cell_means(df, by, MAIN_METRICS)
    cols = [c for c in m.columns if c in MAIN_METRICS]
    print(
        f"\n{exp.title}: {rep.n_cells} cells ({rep.n_run} simulated now, {rep.n_cached} from the store) in "
        f"{rep.wall_s:.1f} s"
    )
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(m[cols].round(2).to_string())


def run_one(
    name: str, ov: dict[str, Any], args: argparse.Namespace, store: CellStore
) -> tuple[Experiment, pd.DataFrame, RunReport]:
    """Configure, run (resuming) and write the per-experiment report."""
    exp = configure(name, **ov)
    df, rep = run_experiment(
        exp,
        args.out,
        store=store,
        executor=args.executor,
        workers=args.workers,
        progress=not args.no_progress,
        ray_address=args.ray_address,
    )
    write_experiment_report(exp, df, args.out)
    return exp, df, rep


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.command == "list":
        for e in EXPERIMENTS.values():
            print(f"{e.name:11s} {e.title}")
        return 0
    try:
        ov = overrides(args)
        names = EXPERIMENT_NAMES if args.command in ("all", "report") else (args.command,)
        plans = {n: _applicable(n, ov) if len(names) > 1 else ov for n in names}
        for n, o in plans.items():
            configure(n, **o)  # validate everything before running anything
    except ConfigError as e:
        ap.error(str(e))
    store = cell_store(args.out / "cells")
    t0 = time.perf_counter()
    results, rows = {}, []
    for n in names:
        t1 = time.perf_counter()
        exp, df, rep = run_one(n, plans[n], args, store)
        results[n] = (exp, df)
        rows.append(
            {
                "experiment": n,
                "cells": rep.n_cells,
                "run now": rep.n_run,
                "from store": rep.n_cached,
                "wall_s": time.perf_counter() - t1,
                "CPU s": float(df["cell_wall_s"].sum()),
            }
        )
        if len(names) == 1:
            _print_summary(exp, df, rep)
            print(f"Results: {args.out / n}/ (results.parquet, report.md, figures)")
        else:
            print(f"{n}: {rep.n_run} run, {rep.n_cached} from store, {rows[-1]['wall_s']:.1f} s", flush=True)
    if len(names) == 1:
        return 0
    timing_path = args.out / "timing.csv"
    timing = pd.read_csv(timing_path) if timing_path.is_file() else None
    if args.command == "all":
        rows.append(
            {
                "experiment": "TOTAL",
                "cells": sum(r["cells"] for r in rows),
                "run now": sum(r["run now"] for r in rows),
                "from store": sum(r["from store"] for r in rows),
                "wall_s": time.perf_counter() - t0,
                "CPU s": sum(r["CPU s"] for r in rows),
            }
        )
        timing = pd.DataFrame(rows)
        timing["executor"] = args.executor
        timing["workers"] = args.workers or default_workers()
        atomic_write_table(timing_path, timing)
        print(timing.drop(columns=["executor", "workers"]).round(1).to_string(index=False))
    t2 = time.perf_counter()
    page = write_results_page(results, args.docs, timing)
    print(f"Results page written in {time.perf_counter() - t2:.1f} s (not in TOTAL)")
    print(f"Results page: {page}")
    return 0
