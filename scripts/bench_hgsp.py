"""Benchmark: HGSP policies' speed (shim of `python -m studies bench hgsp`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "hgsp"))
