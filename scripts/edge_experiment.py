"""Thin shim of studies/edge/experiment.py: the edge cluster experiment (`python -m studies.edge.experiment` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.edge.experiment").main())
