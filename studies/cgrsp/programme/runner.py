"""Run experiment cells with resume, in the shared cell store (:mod:`gpu_sched_env.core.store`).

Every simulated day is keyed by its inputs (policy, day, seed, parameters) and the code
version: the package version and a hash of the simulator's and heuristics' source code
(:data:`SIM_SOURCES`). Finished cells are appended to the store in atomic chunks, every
``flush_every`` cells or ``flush_s`` seconds and when the run stops for any reason. A rerun
— of the same experiment after an interruption, of a bigger grid, or of another experiment
sharing cells — loads the keys already stored and simulates only the rest.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.cgrsp.batch import SIM_SOURCES
from gpu_sched_env.core.fanout import iter_cells
from gpu_sched_env.core.io import atomic_write_json, atomic_write_table
from gpu_sched_env.core.store import CellStore, code_version, config_key
from studies.cgrsp.programme.grids import Experiment, build_cells


def sim_version() -> str:
    """Code version of a simulated day: package version + hash of :data:`SIM_SOURCES`."""
    return code_version(SIM_SOURCES)


def cell_store(root: str | os.PathLike) -> CellStore:
    """The store of CGRSP cells under ``root`` (keys carry :func:`sim_version`)."""
    return CellStore(root, SIM_SOURCES)


@lru_cache(maxsize=4096)
def _canonical(policy: str, day: str, params_json: str) -> str:
    """Parameters and knobs that differ from their defaults, so ``c_max=5`` keys like no override."""
    from dataclasses import fields

    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.policies import knob_diff, split_kwargs

    params, knobs = split_kwargs(json.loads(params_json), [policy])
    p, base = make_params(day, **params), make_params(day)
    diff = {f.name: getattr(p, f.name) for f in fields(p) if getattr(p, f.name) != getattr(base, f.name)}
    diff.update(knob_diff(policy, knobs[policy]))
    return json.dumps(diff, sort_keys=True, default=str)


def cell_key(policy: str, day: str, seed: int, params: dict[str, Any], version: str | None = None) -> str:
    """Stable key of one simulated day's inputs (and the code version).

    Parameters (and the policy's knobs) are compared after validation against their
    defaults: a cell that sets one to its default value is the same cell as one that leaves
    it out.
    """
    canon = _canonical(policy, day, json.dumps(params, sort_keys=True, default=str))
    return config_key({"policy": policy, "day": day, "seed": int(seed), "params": canon}, version or sim_version())


def simulate_cell(policy: str, day: str, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    """One day's summary (top-level so worker processes and Ray can pickle it)."""
    from gpu_sched_env.cgrsp.batch import run_cell

    t0 = time.perf_counter()
    row = {k: v for k, v in run_cell(policy, day, seed, **params).items() if not k.startswith("param_")}
    row["cell_wall_s"] = time.perf_counter() - t0  # [s] this cell's simulation time
    return row


@dataclass
class RunReport:
    """What a run did: cells asked for, distinct cells, found in the store, simulated."""

    name: str
    n_cells: int
    n_unique: int
    n_cached: int
    n_run: int
    wall_s: float  # [s] wall time of the run (loading, simulating, writing)
    sim_s: float  # [s] summed per-cell simulation time of the cells run now


def run_cells(
    cells: Sequence[dict[str, Any]],
    store: CellStore,
    *,
    executor: str = "process",
    workers: int | None = None,
    progress: bool = True,
    desc: str = "cells",
    ray_address: str | None = None,
    flush_every: int = 200,
    flush_s: float = 15.0,
    name: str = "",
) -> tuple[pd.DataFrame, RunReport]:
    """Simulate the cells not yet in ``store``; return every cell's row (cell order) and a report.

    The returned frame has the labels of each cell as extra columns. Interrupting (Ctrl-C)
    keeps every finished cell: the buffer is flushed as a chunk on the way out.
    """
    t0 = time.perf_counter()
    keys = [cell_key(c["policy"], c["day"], c["seed"], c["params"], store.version) for c in cells]
    have = store.keys()
    todo: dict[str, dict[str, Any]] = {}
    for k, c in zip(keys, cells):
        if k not in have and k not in todo:
            todo[k] = {"policy": c["policy"], "day": c["day"], "seed": c["seed"], "params": c["params"]}
    todo_keys = list(todo)
    sim_s = 0.0
    with store.writer(flush_every, flush_s) as out:  # flushed on the way out, Ctrl-C included
        if todo_keys:
            it = iter_cells(
                simulate_cell,
                [todo[k] for k in todo_keys],
                executor=executor,
                workers=workers,
                desc=desc,
                progress=progress,
                ray_address=ray_address,
            )
            for i, row in it:
                k = todo_keys[i]
                row["params_json"] = json.dumps(todo[k]["params"], sort_keys=True, default=str)
                sim_s += row["cell_wall_s"]
                out.add(k, [row])
    df = store.rows(keys)
    labels = pd.DataFrame([c.get("labels", {}) for c in cells])
    df = pd.concat([labels.reset_index(drop=True), df], axis=1)
    rep = RunReport(
        name,
        len(cells),
        len(set(keys)),
        len(set(keys)) - len(todo_keys),
        len(todo_keys),
        time.perf_counter() - t0,
        sim_s,
    )
    return df, rep


def run_experiment(
    exp: Experiment,
    out: str | os.PathLike,
    *,
    store: CellStore | None = None,
    **kwargs: Any,
) -> tuple[pd.DataFrame, RunReport]:
    """Run (or resume) ``exp``; write ``<out>/<name>/results.parquet`` and ``config.json``.

    The tidy table has one row per policy × seed × cell, with ``experiment`` and the cell's
    labels as columns. Cells live in ``<out>/cells`` (shared by all experiments) unless
    ``store`` is given. Keyword arguments go to :func:`run_cells`.
    """
    out = Path(out)
    store = store or cell_store(out / "cells")
    cells = build_cells(exp)
    df, rep = run_cells(cells, store, desc=exp.name, name=exp.name, **kwargs)
    df.insert(0, "experiment", exp.name)
    d = out / exp.name
    atomic_write_table(d / "results.parquet", df)
    cfg = asdict(exp)
    cfg.update({"argv": sys.argv, "sim_version": sim_version(), "run": asdict(rep)})
    atomic_write_json(d / "config.json", cfg)
    return df, rep


def load_results(out: str | os.PathLike, name: str) -> pd.DataFrame:
    """The tidy results table an earlier :func:`run_experiment` wrote."""
    return pd.read_parquet(Path(out) / name / "results.parquet")


__all__ = [
    "SIM_SOURCES",
    "CellStore",
    "RunReport",
    "cell_key",
    "cell_store",
    "load_results",
    "run_cells",
    "run_experiment",
    "sim_version",
    "simulate_cell",
]
