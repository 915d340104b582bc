"""The learned runs against the strongest rule, one row per run.

    python -m studies learner-table runs/exp/main_seed*            # prints a Markdown table
    python -m studies learner-table runs/exp/markov_seed* --out docs/figures/learners_markov.csv

Each run directory needs ``final_eval_per_seed.csv`` and ``final_eval_tests.csv`` written by
``train.py`` (or ``--stem`` for another table of that form). The strongest rule is chosen per run
on its own test seeds (lowest miss, then wait); Holm p values are from the run's family.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from gpu_sched_agents.rl.compare import versus_rules
from gpu_sched_env.core.stats import ALPHA
from gpu_sched_env.core.tables import markdown_table


def main(argv: list[str] | None = None) -> int:
    """Print (and with ``--out`` write) the table; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+", help="training run directories")
    ap.add_argument("--stem", default="final_eval", help="evaluation file stem (default final_eval)")
    ap.add_argument("--out", type=Path, default=None, help="also write the table as CSV")
    a = ap.parse_args(argv)
    missing = [str(r) for r in a.runs if not (r / f"{a.stem}_tests.csv").exists()]
    if missing:
        ap.error(f"no {a.stem}_tests.csv in: {', '.join(missing)}")
    df = pd.DataFrame([versus_rules(r, a.stem) for r in a.runs])
    if a.out:
        df.to_csv(a.out, index=False)
    print(markdown_table(df, ".3g"))
    print(
        f"\n{int(df.beats.sum())} of {len(df)} runs beat the strongest rule (wait lower, Holm p < {ALPHA:g}, miss not "
        "higher)"
    )
    return 0
