"""Thin shim of `gpu-sched bench hgsp` (code in studies/bench/hgsp.py; `--help` for the options)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "hgsp", *sys.argv[1:]]))
