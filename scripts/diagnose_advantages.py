"""PPO's advantages at the dispatch-or-idle decision, by the offered slot's stock level. (thin wrapper of `gpu-sched diagnose advantages`, code in studies/diagnose/advantages.py)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["diagnose", "advantages", *sys.argv[1:]]))
