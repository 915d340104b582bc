"""Run the CGRSP experiment programme (spec §5): one subcommand per experiment, ``all``, ``report`` (thin wrapper of `gpu-sched experiments`; `--help` for the options).

python scripts/experiments.py list
python scripts/experiments.py validation --seeds 0-29 --executor process
python scripts/experiments.py all          # every experiment, timing, docs/results.md
"""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["experiments", *sys.argv[1:]]))
