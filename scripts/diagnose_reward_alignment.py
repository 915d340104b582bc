"""Does a reward preset rank policies as the objective does? Episode sums of every preset, per heuristic.

Shim of `python -m studies diagnose reward-alignment`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("diagnose", "reward-alignment"))
