"""LLM-serving report: FIFO vs WSRPT on the discriminating and mixed workloads, both engines.

Shim of `python -m studies llm-report`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("llm-report"))
