"""The edge cluster experiment (shim of `python -m studies edge-experiment`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("edge-experiment"))
