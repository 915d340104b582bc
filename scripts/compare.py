"""Compare CGRSP policies over seeds on a day type; on the hectic day, beside the published table.

    python scripts/compare.py                       # all 11 policies, hectic, seeds 0-29
    python scripts/compare.py --day surge --seeds 10 --policies fifo rh cadr
    python scripts/compare.py --param c_max=7 --param theta=300

Prints mean wait (95 % CI), miss %, tardiness and cost per policy; for the hectic day with
default parameters also the published values (spec §4), the differences and the §6
calibration checks. Writes the tidy per-seed table and the summary under ``--out``.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from pathlib import Path

import pandas as pd

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.batch import run_grid, summarise
from gpu_sched_env.cgrsp.params import DAY_TYPES, PARAM_NAMES
from gpu_sched_env.cgrsp.policies import knob_owners, per_policy_kwargs
from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC, check_contract
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.fanout import EXECUTORS
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text


def parse_param(text: str) -> tuple[str, object]:
    """``name=value`` with a Python-literal value (numbers, tuples); strings stay strings."""
    if "=" not in text:
        raise ConfigError(f"--param {text!r}: expected NAME=VALUE with NAME a simulator parameter ({', '.join(PARAM_NAMES)}) "
                          f"or a knob of a policy in play ({', '.join(knob_owners())})")
    k, v = text.split("=", 1)
    try:
        val = ast.literal_eval(v)
    except (ValueError, SyntaxError):
        val = v
    return k.strip(), val


def table(summary: pd.DataFrame, published: bool) -> pd.DataFrame:
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
            row.update({
                "pub wait": p.mean_wait_min,
                "Δwait %": f"{100 * (r.mean_wait_min / p.mean_wait_min - 1):+6.1f}",
                "pub miss": p.miss_pct,
                "Δmiss pp": f"{r.miss_pct - p.miss_pct:+6.2f}",
                "pub tard": p.mean_tardiness_min,
                "pub cost": "—" if pd.isna(p.cost_usd) else f"{p.cost_usd:.2f}",
            })
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--day", default="hectic", choices=list(DAY_TYPES))
    ap.add_argument("--seeds", type=int, default=30, help="seeds 0..N-1 (default 30)")
    ap.add_argument("--policies", nargs="+", default=list(POLICY_NAMES), choices=list(POLICY_NAMES), metavar="POLICY")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="simulator/policy parameter override (repeatable)")
    ap.add_argument("--executor", default="process", choices=EXECUTORS)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("runs/compare"))
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds {args.seeds}: must be at least 1")
    try:
        params = dict(parse_param(t) for t in args.param)
        per_policy_kwargs(args.day, params, args.policies)  # validate before fanning out
    except ConfigError as e:
        ap.error(str(e))

    t0 = time.perf_counter()
    df = run_grid(args.policies, range(args.seeds), day=args.day, params=params,
                  executor=args.executor, workers=args.workers, desc=f"{args.day} × {args.seeds} seeds", progress=not args.no_progress)
    wall = time.perf_counter() - t0
    summary = summarise(df)
    published = args.day == "hectic" and not params
    out = args.out / (args.day + ("" if not params else "_" + "_".join(f"{k}={v}" for k, v in params.items())))
    atomic_write_table(out / "per_seed.csv", df)
    atomic_write_table(out / "summary.csv", summary.reset_index())

    tab = table(summary, published)
    pd.set_option("display.width", 200)
    print(f"\nCGRSP {args.day} day, {args.seeds} seeds, {len(args.policies)} policies "
          f"({len(df)} simulated days in {wall:.1f} s wall, executor={args.executor})")
    print(tab.to_string(index=False))
    if published:
        checks = check_contract(summary)
        print("\nCalibration contract (spec §6):")
        print(checks.to_string(index=False))
        atomic_write_table(out / "contract.csv", checks)
        print(f"\n{int(checks.holds.sum())} of {len(checks)} checks hold.")
    atomic_write_text(out / "table.txt", tab.to_string(index=False) + "\n")
    print(f"Tables written to {out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
