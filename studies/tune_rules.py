"""Tune a scenario's strong rules on its selection instances and print every candidate's score.

    python -m studies tune-rules --scenario hgsp                 # 20 selection seeds, the rule module's grid
    python -m studies tune-rules --scenario mig --seeds 5 --out /tmp/mig_tune.csv

Each scenario's ``gpu_sched_agents.heuristics.<scenario>.strong.tune(n_seeds, seed0)`` plays every knob
candidate of its tunable rules on the selection seeds 10 000 … (never a test seed: the protocol's are
20 000 …) and returns one row per candidate with its mean objective and 95 % CI; the rules' shipped
defaults are its best rows. This command prints that table (lowest mean first within each rule) and
writes it to ``--out`` (``.csv`` or ``.md``) when given; an existing file is kept unless ``--force``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from gpu_sched_env.core.cliargs import check_flag_int
from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text, check_output_file
from gpu_sched_env.core.tables import markdown_table

SCENARIOS = ("hgsp", "llm", "mig", "edge")  # CGRSP's rules are tuned by `python -m studies strong-rules`
SELECTION_SEED0 = 10_000


def tune_table(scenario: str, seeds: int) -> pd.DataFrame:
    """The scenario's ``strong.tune`` table on ``seeds`` selection seeds from 10 000."""
    check_choice("--scenario", scenario, SCENARIOS)
    if scenario == "hgsp":
        from gpu_sched_agents.heuristics.hgsp.strong import tune
    elif scenario == "llm":
        from gpu_sched_agents.heuristics.llm.strong import tune
    elif scenario == "mig":
        from gpu_sched_agents.heuristics.mig.strong import tune
    else:
        from gpu_sched_agents.heuristics.edge.strong import tune
    return tune(n_seeds=seeds, seed0=SELECTION_SEED0)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", required=True, help=f"one of {', '.join(SCENARIOS)}")
    ap.add_argument("--seeds", type=int, default=20, help="selection seeds 10 000 … (default 20)")
    ap.add_argument("--out", type=Path, help="also write the table here (.csv or .md)")
    ap.add_argument("--force", action="store_true", help="replace an existing --out file")
    args = ap.parse_args(argv)
    check_choice("--scenario", args.scenario, SCENARIOS)
    check_flag_int("--seeds", args.seeds, lo=1)
    if args.out is not None:
        check_output_file("--out", args.out, (".csv", ".md"))
        if args.out.exists() and not args.force:
            raise ConfigError(f"--out {str(args.out)!r}: exists; pass --force to replace it, or choose another path")
    tab = tune_table(args.scenario, args.seeds)
    text = markdown_table(tab, floatfmt=".4g", align_numbers=True)
    print(f"{args.scenario}: {args.seeds} selection seeds from {SELECTION_SEED0}\n\n{text}")
    if args.out is not None:
        if args.out.suffix == ".csv":
            atomic_write_table(args.out, tab)
        else:
            atomic_write_text(args.out, text + "\n")
