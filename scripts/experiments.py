"""Run the CGRSP experiment programme (spec §5): one subcommand per experiment, ``all``, ``report``.

Shim of `python -m studies experiments`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("experiments"))
