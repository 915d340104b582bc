"""Thin shim of `gpu-sched bench sim` (code in studies/bench/sim.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "sim", *sys.argv[1:]]))
