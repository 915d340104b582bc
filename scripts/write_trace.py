"""Write a simulated day or month of CGRSP jobs as a trace (CSV or Parquet) that ``simulate(trace=...)`` replays.

Thin wrapper of `gpu-sched trace`; `--help` for the options.

python scripts/write_trace.py --day hectic --seed 3 --out runs/traces/hectic_3.csv
python scripts/write_trace.py --day surge --seed 0 --param tight_fraction=0.5 --out surge.parquet
python scripts/write_trace.py --month 0 --out runs/traces/month_0.csv
"""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["trace", *sys.argv[1:]]))
