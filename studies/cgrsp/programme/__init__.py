"""The CGRSP experiment programme (spec §5): definitions, resumable fan-out, statistics, figures, reports.

Modules: :mod:`.grids` (experiment definitions and their cells), :mod:`.runner` (cells in
the shared store :mod:`gpu_sched_env.core.store`, resume, fan-out), :mod:`.tables` (means with CIs,
paired tests, re-scoring), :mod:`.figures` (PNG figures), :mod:`.diagnostics` (why results
depart from the published ones), :mod:`.report` (Markdown per experiment and ``docs/results.md``), :mod:`.cli`.
"""

from gpu_sched_env.core.store import CellStore
from studies.cgrsp.programme.grids import (
    EXPERIMENT_NAMES,
    EXPERIMENTS,
    Experiment,
    build_cells,
    configure,
)
from studies.cgrsp.programme.runner import (
    RunReport,
    cell_key,
    cell_store,
    load_results,
    run_cells,
    run_experiment,
)

__all__ = [
    "EXPERIMENTS",
    "EXPERIMENT_NAMES",
    "CellStore",
    "Experiment",
    "RunReport",
    "build_cells",
    "cell_key",
    "cell_store",
    "configure",
    "load_results",
    "run_cells",
    "run_experiment",
]
