"""Thin shim of `gpu-sched bench edge` (code in studies/bench/edge.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "edge", *sys.argv[1:]]))
