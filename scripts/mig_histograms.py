"""The MIG generator's histograms (shim of `python -m studies mig-histograms`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("mig-histograms"))
