"""Where RH's reservation puts loose jobs: stock status of their dispatches and of the held slots.

Shim of `python -m studies diagnose rh-reservation`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("diagnose", "rh-reservation"))
