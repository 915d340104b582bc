"""``gpu-sched generate-jobs``: job sets in the Java job generator's format from its JSON (or our YAML) config.

gpu-sched generate-jobs CONFIG -o jobs.json            # one set, config seed
gpu-sched generate-jobs CONFIG -o out/ --seeds 1 2 3   # bulk + manifest
gpu-sched generate-jobs CONFIG -o out/ --seed-range 10 20
gpu-sched generate-jobs CONFIG -o out/ --primes 100 --first-prime 2
gpu-sched generate-jobs CONFIG --check               # validate only

(``scripts/generate_jobs.py`` is a thin wrapper.) Seeds are integers ≥ 0; ``-o`` is checked before
anything is generated (a file for one set, a folder for bulk): a bad value is one line on
stderr, ``gpu-sched generate-jobs: ...``, exit status 2, and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpu_sched_env.core.cliargs import check_flag_int
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_text, check_output_dir, check_output_file
from gpu_sched_env.mig.generator import generate, generate_bulk, load_config, next_primes


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ap = argparse.ArgumentParser(
        prog="gpu-sched generate-jobs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("config", type=Path, help="config file (.json as written by the Java tool, or .yaml)")
    ap.add_argument("-o", "--out", type=Path, help="output file (one set) or folder (bulk)")
    ap.add_argument("--seed", type=int, help="override the config's seed (one set)")
    ap.add_argument("--jobs", type=int, help="override numberOfJobs")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--seeds", type=int, nargs="+", help="bulk: these seeds")
    g.add_argument(
        "--seed-range", type=int, nargs=2, metavar=("FIRST", "LAST"), help="bulk: seeds FIRST..LAST inclusive"
    )
    g.add_argument("--primes", type=int, metavar="N", help="bulk: the next N primes >= --first-prime")
    ap.add_argument("--first-prime", type=int, default=2)
    ap.add_argument("--check", action="store_true", help="only validate the config and print it")
    a = ap.parse_args(argv)
    try:
        raw_cfg = load_config(a.config)
        if a.jobs is not None:
            raw = dict(raw_cfg.raw)
            raw.pop("numberOfTasks", None)
            raw["numberOfJobs"] = a.jobs
            raw_cfg = load_config(raw)
        cfg = raw_cfg
        if a.check:
            print(f"{a.config}: valid; {cfg.n_jobs} jobs, seed {cfg.seed}, rounding {cfg.rounding}")
            return 0
        if a.out is None:
            raise ConfigError("-o/--out is required (a file for one set, a folder for bulk)")
        if a.seed is not None:
            check_flag_int("--seed", a.seed)
        for s in a.seeds or ():
            check_flag_int("--seeds", s)
        check_flag_int("--first-prime", a.first_prime)
        seeds = a.seeds
        if a.seed_range:
            lo, hi = a.seed_range
            if lo > hi or lo < 0:
                raise ConfigError(f"--seed-range {lo} {hi}: allowed: 0 <= FIRST <= LAST")
            seeds = list(range(lo, hi + 1))
        if a.primes is not None:
            if a.primes < 1:
                raise ConfigError(f"--primes = {a.primes}: allowed: >= 1")
            seeds = next_primes(a.primes, a.first_prime)
        if seeds:
            if a.seed is not None:
                raise ConfigError("--seed cannot be combined with --seeds/--seed-range/--primes")
            names = [f"jobs_seed{s}.json" for s in seeds]  # generate_bulk's default file names
            check_output_dir("-o/--out (a folder for bulk)", a.out, [*names, "manifest.json"])
            man = generate_bulk(cfg, seeds, a.out)
            print(f"wrote {len(man['files'])} job sets and manifest.json to {a.out}")
        else:
            check_output_file("-o/--out (a file for one set)", a.out)
            atomic_write_text(a.out, generate(cfg, a.seed).dumps())
            print(f"wrote {cfg.n_jobs} jobs (seed {cfg.seed if a.seed is None else a.seed}) to {a.out}")
    except ConfigError as e:
        print(f"{ap.prog}: {e}", file=sys.stderr)
        return 2
    return 0
