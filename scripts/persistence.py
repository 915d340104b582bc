"""Thin shim of studies/cgrsp/persistence.py: the persistence sweep (`python -m studies.cgrsp.persistence` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.cgrsp.persistence").main())
