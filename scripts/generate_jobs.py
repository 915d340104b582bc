"""Generate MIG job sets in the Java job generator's format from its JSON (or our YAML) config.

Thin wrapper of `gpu-sched generate-jobs`; `--help` for the options.

.venv/bin/python scripts/generate_jobs.py CONFIG -o jobs.json            # one set, config seed
.venv/bin/python scripts/generate_jobs.py CONFIG -o out/ --seeds 1 2 3   # bulk + manifest
.venv/bin/python scripts/generate_jobs.py CONFIG --check               # validate only
"""

import sys

from gpu_sched_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["generate-jobs", *sys.argv[1:]]))
