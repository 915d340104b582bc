"""Thin shim of `gpu-sched bench mig` (code in studies/bench/mig.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "mig", *sys.argv[1:]]))
