"""The ``gpu-sched`` command: what a user of the installed package runs, one spelling per job.

    gpu-sched compare [--day surge] [--trace FILE] ...   # CGRSP heuristics over seeds (or on a job log)
    gpu-sched trace --day hectic --seed 3 --out t.csv    # write a simulated day/month as a trace
    gpu-sched evaluate POLICY ...                        # the standard evaluation protocol (agents layer)
    gpu-sched generate-jobs CONFIG -o jobs.json          # MIG job sets (the Java generator's format)

The table :data:`GPU_SCHED` is data for the one command machinery (:mod:`gpu_sched_env.core.commands`);
each command's module loads only when it runs. ``evaluate`` lives in the agents layer
(``gpu_sched_agents.evaluate``), installed from the same wheel: its entry is a plug-in string,
resolved when run, so this package never imports ``gpu_sched_agents`` (tests/core/test_layers.py
holds the list of such plug-in targets); where that module is missing the command says so, exit 2.

The research programme (experiments, benchmarks, diagnostics, the scenarios' reports) is the
other door: ``python -m studies COMMAND`` from the root of a checkout (:mod:`studies.commands`),
which the wheel does not install. Its names given here get that spelling back, exit status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from gpu_sched_env.core.commands import Command, Group, dispatch

STUDIES_DOOR = "python -m studies"
# commands of the agents layer that gpu-sched names by string (never imported by gpu_sched_env)
PLUGIN_COMMANDS = {"evaluate": "gpu_sched_agents.evaluate.cli:main"}
# top-level names of `python -m studies` (the research programme): gpu-sched says where they live
STUDIES_COMMANDS = (
    *("experiments", "bench", "parity", "tune", "generalist", "ablation", "strong-rules", "persistence"),
    *("headroom", "versus-rule", "reward"),
)

GPU_SCHED = Group(
    "the installed library's commands",
    {
        "compare": Command(
            "gpu_sched_env.cgrsp.commands:compare_main", "compare CGRSP policies over seeds, or on a trace"
        ),
        "trace": Command("gpu_sched_env.cgrsp.commands:trace_main", "write a simulated CGRSP day or month as a trace"),
        "evaluate": Command(
            PLUGIN_COMMANDS["evaluate"], "evaluate a policy under the standard protocol (report.md/json)"
        ),
        "generate-jobs": Command(
            "gpu_sched_env.mig.generator.cli:main", "generate MIG job sets from a generator config"
        ),
    },
    note=(
        f"The research programme (experiments, bench, the studies) is `{STUDIES_DOOR} --help`,\n"
        "run from the root of a checkout (not installed with the package)."
    ),
    aside=dict.fromkeys(STUDIES_COMMANDS, STUDIES_DOOR),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gpu-sched``; returns the exit status."""
    return dispatch(GPU_SCHED, sys.argv[1:] if argv is None else argv, "gpu-sched")


if __name__ == "__main__":
    raise SystemExit(main())
