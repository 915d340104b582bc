"""HGSP report: every policy x task set x cluster, calibration, CP-SAT gaps, the orderings tables of docs/hgsp.md.

Shim of `python -m studies hgsp-report`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("hgsp-report"))
