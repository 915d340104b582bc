"""A refused run removes only the folders it created: what existed before a run is recorded.

Hydra makes the run folder (``hydra.run.dir``, with every missing parent) and writes
``.hydra/`` and ``train.log`` into it before the job starts. When the job then refuses its config,
:func:`remove_unused_run_dir` takes back what the run made, and nothing else: a folder is removed
only if :func:`record_before` saw it missing before Hydra ran (the :class:`RunDirRecorder`
callback of ``conf/hydra/default.yaml`` records the run or sweep folder). A folder that existed
before (``hydra.run.dir=DIR/run`` with the caller's own empty ``DIR``), or one no record
covers, keeps everything but Hydra's own files.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

# What Hydra writes into a run directory before the job starts (its config copy and log).
HYDRA_ONLY = {".hydra", "train.log"}

# deepest existing ancestor of a recorded folder -> the names it held before the run
_BEFORE: dict[Path, frozenset[str]] = {}


def record_before(path: str | Path) -> None:
    """Record which part of ``path`` exists now: its deepest existing ancestor and that folder's entries."""
    p = Path(path).absolute()
    while not p.is_dir():
        if p.parent == p:
            return
        p = p.parent
    _BEFORE[p] = frozenset(c.name for c in p.iterdir())


def created_by_run(path: str | Path) -> bool:
    """Whether ``path`` was missing when a recorded run started (so that run created it)."""
    p = Path(path).absolute()
    bases = [b for b in _BEFORE if p.is_relative_to(b)]
    if not bases:
        return False
    base = max(bases, key=lambda b: len(b.parts))  # the latest record that covers p
    return p != base and p.relative_to(base).parts[0] not in _BEFORE[base]


def remove_unused_run_dir(run_dir: str | Path) -> None:
    """Take back a refused run's folder if it holds nothing but what Hydra wrote before the job.

    The folder, and each parent left empty, is deleted where the run created it
    (:func:`created_by_run`); a folder that existed before keeps everything but Hydra's files.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir() or {p.name for p in run_dir.iterdir()} - HYDRA_ONLY:
        return
    if not created_by_run(run_dir):
        for name in HYDRA_ONLY:
            p = run_dir / name
            shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
        return
    shutil.rmtree(run_dir)
    parent = run_dir.absolute().parent
    while created_by_run(parent) and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


class RunDirRecorder(Callback):
    """Hydra callback: record the run (or sweep) folder before Hydra creates it."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        record_before(str(OmegaConf.select(config, "hydra.run.dir")))

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        record_before(str(OmegaConf.select(config, "hydra.sweep.dir")))


__all__ = ["HYDRA_ONLY", "RunDirRecorder", "created_by_run", "record_before", "remove_unused_run_dir"]
