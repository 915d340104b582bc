"""What the per-step reward says about *dispatch* vs *leave idle*, by the offered slot's stock.

Shim of `python -m studies diagnose reward`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("diagnose", "reward"))
