"""Benchmark: the CGRSP simulator (shim of `python -m studies bench sim`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "sim"))
