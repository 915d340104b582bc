"""Thin shim of `gpu-sched bench env` (code in studies/bench/env.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "env", *sys.argv[1:]]))
