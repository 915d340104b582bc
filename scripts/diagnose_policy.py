"""Why does a trained CGRSP policy wait? Argmax vs two-level mode vs sampled play.

Shim of `python -m studies diagnose policy`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("diagnose", "policy"))
