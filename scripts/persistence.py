"""The persistence sweep (shim of `python -m studies persistence`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("persistence"))
