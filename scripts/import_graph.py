"""Thin shim of studies/docs_graph.py: the import graph of docs/architecture.md (`python -m studies.docs_graph` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.docs_graph").main())
