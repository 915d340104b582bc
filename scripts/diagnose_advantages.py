"""PPO's advantages at the dispatch-or-idle decision, by the offered slot's stock level.

Shim of `python -m studies diagnose advantages`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("diagnose", "advantages"))
