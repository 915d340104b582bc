"""Benchmark: MaskablePPO training frames/s (shim of `python -m studies bench train`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "train"))
