"""Compare CGRSP policies over seeds on a day type (or a trace); on the hectic day, beside the published table.

Thin wrapper of `gpu-sched compare`; `--help` for the options.

python scripts/compare.py                       # all 11 policies, hectic, seeds 0-29
python scripts/compare.py --day surge --seeds 10 --policies fifo rh cadr
python scripts/compare.py --param c_max=7 --param theta=300
python scripts/compare.py --trace runs/traces/hectic_3.csv --seeds 5
"""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["compare", *sys.argv[1:]]))
