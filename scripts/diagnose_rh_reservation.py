"""Where RH's reservation puts loose jobs: stock status of their dispatches and of the held slots. (thin wrapper of `gpu-sched diagnose rh-reservation`, code in studies/diagnose/rh_reservation.py)."""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["diagnose", "rh-reservation", *sys.argv[1:]]))
