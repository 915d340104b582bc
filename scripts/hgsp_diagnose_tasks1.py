"""Why tasks1 (small cluster) misfits the study at its published load: deadlines, memory, load.

Shim of `python -m studies diagnose hgsp-tasks1`; `--help` for the options.
"""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("diagnose", "hgsp-tasks1"))
