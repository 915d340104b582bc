"""Benchmark: the edge schedulers' runtime (shim of `python -m studies bench edge`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "edge"))
