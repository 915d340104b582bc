"""Why tasks1 (small cluster) misfits the study at its published load: deadlines, memory, load. (thin wrapper of `gpu-sched diagnose hgsp-tasks1`, code in studies/diagnose/hgsp_tasks1.py)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["diagnose", "hgsp-tasks1", *sys.argv[1:]]))
