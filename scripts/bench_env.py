"""Benchmark: CGRSP-v0 env steps/s (shim of `python -m studies bench env`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "env"))
