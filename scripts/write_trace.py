"""Write a simulated day or month of CGRSP jobs as a trace (CSV or Parquet) that ``simulate(trace=...)`` replays.

    python scripts/write_trace.py --day hectic --seed 3 --out runs/traces/hectic_3.csv
    python scripts/write_trace.py --day surge --seed 0 --param tight_fraction=0.5 --out surge.parquet
    python scripts/write_trace.py --month 0 --out runs/traces/month_0.csv

A day is written as generated (``simulate(p, day, seed)`` and ``simulate(p, day, seed,
trace=FILE)`` give identical results). A month is the 30 days of the ``month`` experiment's
replication REP (same day plan and run seeds) back to back: day d's times are shifted by
d·86 400 s and its job ids prefixed ``dDD-``. Replayed as one trace, a day's backlog runs on
into the next day, unlike the ``month`` experiment, which simulates each day on its own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from studies.cgrsp.cli import parse_param
from studies.cgrsp.grids import MONTH_SEED_BASE
from gpu_sched_env.cgrsp.params import DAY_TYPES, make_params
from gpu_sched_env.cgrsp.trace import trace_frame, write_trace
from gpu_sched_env.cgrsp.workload import generate, month_plan
from gpu_sched_env.core.errors import ConfigError


def day_trace(day: str, seed: int, **params: object) -> pd.DataFrame:
    """The jobs ``simulate(policy, day, seed, **params)`` runs, as a trace."""
    return trace_frame(generate(make_params(day, **params), seed))


def month_trace(rep: int, **params: object) -> pd.DataFrame:
    """Replication ``rep`` of the month experiment, days back to back."""
    parts = [trace_frame(generate(make_params(day, **params), MONTH_SEED_BASE + 1000 * rep + d), 86400.0 * d, f"d{d:02d}-")
             for d, day in enumerate(month_plan(rep))]
    return pd.concat(parts, ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--day", choices=list(DAY_TYPES))
    what.add_argument("--month", type=int, metavar="REP", help="replication seed of the month experiment")
    ap.add_argument("--seed", type=int, default=0, help="run seed of the day (default 0)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="workload parameter override (repeatable)")
    ap.add_argument("--out", type=Path, required=True, help="output .csv or .parquet")
    args = ap.parse_args(argv)
    try:
        params = dict(parse_param(t) for t in args.param)
        df = day_trace(args.day, args.seed, **params) if args.day else month_trace(args.month, **params)
        path = write_trace(df, args.out)
    except ConfigError as e:
        ap.error(str(e))
    print(f"{len(df)} jobs, submit 0-{df['submit_s'].max() / 3600:.1f} h, written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
