"""Thin shim of studies/mig/experiment.py: the MIG experiment (`python -m studies.mig.experiment` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.mig.experiment").main())
