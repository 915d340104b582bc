"""Thin shim of studies/cgrsp/generalise.py: the generalisation table of a trained run (`python -m studies.cgrsp.generalise` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.cgrsp.generalise").main())
