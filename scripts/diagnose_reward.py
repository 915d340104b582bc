"""What the per-step reward says about *dispatch* vs *leave idle*, by the offered slot's stock. (thin wrapper of `gpu-sched diagnose reward`, code in studies/diagnose/reward.py)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["diagnose", "reward", *sys.argv[1:]]))
