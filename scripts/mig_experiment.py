"""The MIG experiment (shim of `python -m studies mig-experiment`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("mig-experiment"))
