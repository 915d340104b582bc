"""Why does a trained CGRSP policy wait? Argmax vs two-level mode vs sampled play. (thin wrapper of `gpu-sched diagnose policy`, code in studies/diagnose/policy.py)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["diagnose", "policy", *sys.argv[1:]]))
