"""Thin shim of studies/mig/histograms.py: the MIG generator's histograms (`python -m studies.mig.histograms` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.mig.histograms").main())
