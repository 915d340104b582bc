"""Run the CGRSP experiment programme (spec §5): one subcommand per experiment, ``all``, ``report``.

python scripts/experiments.py list
python scripts/experiments.py validation --seeds 0-29 --executor process
python scripts/experiments.py all          # every experiment, timing, docs/results.md
"""

import sys

from studies.cgrsp.cli import main

if __name__ == "__main__":
    sys.exit(main())
