"""Does a reward preset rank policies as the objective does? Episode sums of every preset, per heuristic. (thin wrapper of `gpu-sched diagnose reward-alignment`, code in studies/diagnose/reward_alignment.py)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["diagnose", "reward-alignment", *sys.argv[1:]]))
