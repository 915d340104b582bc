"""Thin shim of studies/cgrsp/strong_rules.py: the strong-rule table (docs/strong_rules.md) (`python -m studies.cgrsp.strong_rules` is the same; `--help` for the options)."""

import sys

from gpu_sched_env.cli import import_studies

if __name__ == "__main__":
    sys.exit(import_studies("studies.cgrsp.strong_rules").main())
