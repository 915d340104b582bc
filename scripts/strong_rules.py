"""The strong-rule table in docs/strong_rules.md.

Shim of `python -m studies strong-rules`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("strong-rules"))
