"""The import graph of docs/architecture.md (shim of `python -m studies docs-graph`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("docs-graph"))
