"""The generalisation table of a trained run (shim of `python -m studies generalise`; `--help` for the options)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("generalise"))
