"""Thin shim of `gpu-sched bench jax` (code in studies/bench/jax.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "jax", *sys.argv[1:]]))
