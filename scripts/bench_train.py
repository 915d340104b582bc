"""Thin shim of `gpu-sched bench train` (code in studies/bench/train.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "train", *sys.argv[1:]]))
