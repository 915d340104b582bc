"""Sweeps: the scalar a Hydra sweeper optimises, and a per-sweep record of what ran where.

``train(cfg)`` returns the final evaluation means (a dict); a sweeper such as
hydra-optuna-sweeper needs one float per job. :func:`selection_objective` gives it: the best
held-out *selection* objective of the run (``best.json``'s ``objective``, in the one schema of
:mod:`gpu_sched_agents.rl.best` that every selection path writes; lower is better), so a search
never looks at the final test seeds.

:class:`SweepRecorder` is a Hydra callback (``conf/hydra/default.yaml``): in a multirun each job
writes ``job.json`` (host, pid, Ray task id when it ran as a Ray task, its overrides and its
selection objective), and the sweep writes ``trials.csv`` with one row per job.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from hydra.core.hydra_config import HydraConfig
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from gpu_sched_agents.rl.best import SELECT_ON, selection_objective
from gpu_sched_env.core.io import atomic_write_json, atomic_write_table


def run_dir_of(cfg: DictConfig) -> Path:
    """The directory the run actually wrote to (a resumed run writes into the run it continues)."""
    here = Path(cfg.run_dir)
    redirect = here / "resumed_into.txt"
    return Path(redirect.read_text().strip()) if redirect.exists() else here


def _ray_task_id() -> str | None:
    """The current Ray task's id, or None outside a Ray task (Ray is not imported for that)."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    task_id = ray.get_runtime_context().get_task_id()
    return str(task_id) if task_id else None


class SweepRecorder(Callback):
    """Record each multirun job (``job.json``) and the sweep's trials (``trials.csv``)."""

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        hc = HydraConfig.get()
        if hc.mode != RunMode.MULTIRUN:
            return
        out = Path(hc.runtime.output_dir)
        try:
            value: float | None = selection_objective(run_dir_of(config))
        except FileNotFoundError:
            value = None  # the job failed before its first evaluation
        info = {
            "job_num": int(hc.job.num),
            "overrides": list(hc.overrides.task),
            SELECT_ON: value,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "ray_task_id": _ray_task_id(),
        }
        atomic_write_json(out / "job.json", info)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(config.hydra.sweep.dir)
        rows = []
        for path in sorted(sweep_dir.glob("*/job.json")):
            info = json.loads(path.read_text())
            params = dict(o.split("=", 1) for o in info.pop("overrides") if "=" in o)
            rows.append({"job_dir": path.parent.name, **info, **params})
        if rows:
            df = pd.DataFrame(rows).sort_values(["job_num"])
            atomic_write_table(sweep_dir / "trials.csv", df)
