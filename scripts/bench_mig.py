"""Benchmark: the MIG generator and CP-SAT vs Best-Fit (shim of `python -m studies bench mig`)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "mig"))
