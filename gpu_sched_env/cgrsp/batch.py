"""Batch runs of many (policy, seed, parameter) cells, and per-policy summaries with CIs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from gpu_sched_env.core.fanout import map_cells
from gpu_sched_env.core.stats import mean_ci

# Modules whose code decides a simulated day's numbers (not the env, rendering, experiments): a
# store keyed by their hash (gpu_sched_env.core.store.code_version) never serves a stale day.
SIM_SOURCES = (
    "gpu_sched_env/cgrsp/api.py",
    "gpu_sched_env/cgrsp/batch.py",
    "gpu_sched_env/cgrsp/fleet.py",
    "gpu_sched_env/cgrsp/params.py",
    "gpu_sched_env/cgrsp/policies.py",
    "gpu_sched_env/cgrsp/result.py",
    "gpu_sched_env/cgrsp/sim.py",
    "gpu_sched_env/cgrsp/stock.py",
    "gpu_sched_env/cgrsp/trace.py",
    "gpu_sched_env/cgrsp/workload.py",
    "gpu_sched_env/core/events.py",
    "gpu_sched_env/core/rng.py",
    "agents/heuristics/cgrsp/*.py",
)
METRICS = ("mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd", "tight_miss_pct", "loose_miss_pct")


def run_cell(policy: str, day: str, seed: int, trace: Any = None, **params: Any) -> dict[str, Any]:
    """One simulated day's summary, tagged with its parameters (top-level: picklable).

    ``trace`` (a loaded :class:`~gpu_sched_env.cgrsp.trace.Trace`, or a job-log path) replaces
    the generated jobs.
    """
    from gpu_sched_env.cgrsp.api import simulate

    s = simulate(policy, day=day, seed=seed, trace=trace, **params).summary()
    s.update({f"param_{k}": v for k, v in params.items()})
    return s


def run_grid(
    policies: Sequence[str],
    seeds: Iterable[int],
    day: str = "hectic",
    params: dict[str, Any] | None = None,
    trace: Any = None,
    **fanout: Any,
) -> pd.DataFrame:
    """Tidy table: one row per policy × seed (fan-out options as in ``core.fanout``).

    ``params`` holds simulator parameters and knobs of the policies in play; each policy
    gets the parameters and its own knobs. Everything is validated before fanning out.
    ``trace`` (a job-log path, a DataFrame or a loaded Trace) replaces each seed's generated
    jobs. A path is read and checked once, here: every cell, in this process or a worker,
    gets the parsed jobs (a Trace pickles with its arrays), never the path, so a file
    replaced during the run changes nothing in it.
    """
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.policies import per_policy_kwargs, split_kwargs
    from gpu_sched_env.cgrsp.trace import Trace

    kw = per_policy_kwargs(day, params or {}, policies)
    extra = {}
    if trace is not None:  # the simulator parameters are every policy's (only knobs differ)
        sim = make_params(day, **split_kwargs(params or {}, policies)[0])
        tr = Trace.load(trace, sim)
        tr.params(sim)  # the model with the trace's n_jobs: refused here, not in every cell
        extra = {"trace": tr}
    cells = [dict(policy=p, day=day, seed=int(s), **extra, **kw[p]) for p in policies for s in seeds]
    rows = map_cells(run_cell, cells, **fanout)
    return pd.DataFrame(rows)


def summarise(
    df: pd.DataFrame, metrics: Sequence[str] = METRICS, by: str | list[str] = "policy", level: float = 0.95
) -> pd.DataFrame:
    """Mean and t-interval half-width per group: columns ``<metric>`` and ``<metric>_ci``."""
    out = []
    for key, g in df.groupby(by, sort=False):
        row = dict(zip([by] if isinstance(by, str) else by, key if isinstance(key, tuple) else (key,)))
        row["n"] = len(g)
        for m in metrics:
            ci = mean_ci(g[m].to_numpy(), level)
            row[m] = ci.mean
            row[f"{m}_ci"] = ci.half_width
        out.append(row)
    return pd.DataFrame(out).set_index(by)
