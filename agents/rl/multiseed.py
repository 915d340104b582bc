"""``python train.py ... train.seeds=[0,1,2,3]``: several training seeds by one command, one run folder each.

The run's folder (the parent) holds ``config.yaml`` and ``command.txt`` as a single run's,
``seeds.json`` (the seeds and their folders, written before training) and ``seeds.csv`` (per seed:
the kept model's selection objective and the final evaluation's means, written at the end).
``seed<k>/`` holds everything a single run with ``seed=k`` writes (``config.yaml`` with
``seed: k``, the curve, TensorBoard, checkpoints, ``best.json``, ``final_eval.*``), so every
reader of a run folder (``gpu-sched evaluate``, the sweeps, the studies) reads each seed as a run.

An algorithm with a ``seeds_trainer`` (``algo=ppo_jax``) trains the seeds side by side, one
jitted update ``jax.vmap``-ped over their keys; the others train them one after another, each
exactly the single run of its seed. ``resume=true`` (the latest earlier parent of this
algo/day/seed family) or ``resume_from=PARENT`` continues every seed: in turn each from its own
latest checkpoint (a finished seed is kept); side by side all from the latest step every seed has
a checkpoint of. The selection objective of the parent (what a sweep minimises) is the mean of its
seeds' (:func:`~gpu_sched_agents.rl.best.selection_objective`).
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import DictConfig, open_dict

from gpu_sched_agents.rl import scenario_train
from gpu_sched_agents.rl import train as cgrsp_train
from gpu_sched_agents.rl.best import SEEDS_JSON, read_best, seed_folders, selection_objective
from gpu_sched_agents.rl.compare import log_verdict
from gpu_sched_agents.rl.registry import get_algo
from gpu_sched_agents.rl.scenarios import CGRSP, scenario_of
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_json, atomic_write_table

log = logging.getLogger(__name__)
SEEDS_CSV = "seeds.csv"
FINAL_MEANS = ("miss_pct", "mean_wait_min", "mean_tardiness_min", "cost_usd")  # what a CGRSP run's train() returns


def seed_config(cfg: DictConfig, seed: int, run_dir: Path, resume: bool = False) -> DictConfig:
    """Seed ``seed``'s config: ``cfg`` with ``seed``, its folder ``run_dir`` (resumed from itself when ``resume``)."""
    out = copy.deepcopy(cfg)
    with open_dict(out):
        out.seed = int(seed)
        out.run_dir = str(run_dir)
        out.resume = bool(resume)
        out.resume_from = str(run_dir) if resume else None
    return out


def resuming(cfg: DictConfig) -> bool:
    """``resume=true`` or ``resume_from=DIR`` (either resumes, as for a single run)."""
    return bool(cfg.resume or cfg.resume_from)


def _parent(cfg: DictConfig, seeds: list[int]) -> Path:
    """The parent folder trained into: this run's, or (resume) the one it continues, holding the same seeds."""
    here = Path(cfg.run_dir)
    if not resuming(cfg):
        return here
    if cfg.resume_from:
        parent = Path(cfg.resume_from)
        if not (parent / SEEDS_JSON).is_file():
            raise ConfigError(
                f"resume_from = {cfg.resume_from!r} holds no {SEEDS_JSON}: it is not a train.seeds run; resume a "
                "single run without train.seeds"
            )
    else:
        family = here.parent
        found = [d for d in family.glob("*") if d != here and (d / SEEDS_JSON).is_file()]
        if not found:
            raise ConfigError(
                f"resume=true with train.seeds but no earlier train.seeds run under {family}/; start without resume "
                "or pass resume_from=DIR"
            )
        parent = max(found, key=lambda d: (d / SEEDS_JSON).stat().st_mtime)
    saved = list(seed_folders(parent))
    if saved != seeds:
        raise ConfigError(
            f"resume: {parent} trained train.seeds = {saved}, this run asks for {seeds}; resume with the same list"
        )
    return parent


def _finished(cfg: DictConfig, folder: Path) -> bool:
    """A seed trained to this budget with its final tables written (kept as it is on resume)."""
    found = cgrsp_train.checkpoints(folder)
    steps = found[-1][0] if found else -1
    return steps >= int(cfg.train.total_timesteps) and (folder / "final_eval_tests.csv").is_file()


def _seed_configs(cfg: DictConfig, parent: Path, seeds: list[int]) -> dict[int, DictConfig]:
    """Each seed's config; resuming, a seed folder must hold a checkpoint (or not exist yet: it starts afresh)."""
    out = {}
    for s in seeds:
        folder = parent / f"seed{s}"
        resume = resuming(cfg) and folder.exists()
        if resume and cgrsp_train.latest_checkpoint(folder) is None:
            raise ConfigError(
                f"resume: {folder} holds no checkpoint (it was stopped before its first); remove that folder to "
                "train the seed afresh"
            )
        out[s] = seed_config(cfg, s, folder, resume)
    return out


def train_seeds(cfg: DictConfig) -> dict[str, float]:
    """Train every seed of ``cfg.train.seeds`` into its folder under the run's; the seeds' mean final means."""
    seeds = cgrsp_train.check_seeds(cfg)
    assert seeds is not None
    cgrsp = scenario_of(cfg) == CGRSP
    try:
        first = seed_config(cfg, seeds[0], Path(cfg.run_dir))
        config = cgrsp_train.validate(first) if cgrsp else scenario_train.validate_scenario(first)[1]
        parent = _parent(cfg, seeds)
        configs = _seed_configs(cfg, parent, seeds)
    except ConfigError:
        cgrsp_train.remove_unused_run_dir(Path(cfg.run_dir))  # refused before anything is written
        raise
    spec = get_algo(cfg.algo.name)
    cgrsp_train.write_run_files(cfg, parent, Path("the seeds' checkpoints") if resuming(cfg) else None)
    atomic_write_json(parent / SEEDS_JSON, {"seeds": seeds, "folders": [f"seed{s}" for s in seeds]})
    if spec.seeds_trainer is not None and cgrsp:
        outs = dict(zip(seeds, _side_by_side(spec, configs, config)))
    else:
        train_one = cgrsp_train.train if cgrsp else scenario_train.train_scenario
        outs = {}
        for s, c in configs.items():
            if c.resume and _finished(c, Path(c.run_dir)):
                log.info(f"seed {s}: {c.run_dir} is trained to {c.train.total_timesteps} steps; kept")
                outs[s] = _final_means(Path(c.run_dir), str(cfg.algo.name))
                continue
            outs[s] = train_one(c)
    return _summary(parent, seeds, outs)


def _final_means(folder: Path, label: str) -> dict[str, float]:
    """A finished seed's final means, read back from its ``final_eval.csv`` (the learned policy's row)."""
    table = pd.read_csv(folder / "final_eval.csv").set_index("policy")
    return {m: float(table.loc[label, m]) for m in FINAL_MEANS if m in table.columns}


def _side_by_side(spec: Any, configs: dict[int, DictConfig], config: Any) -> list[dict[str, float]]:
    """The seeds through the algorithm's ``seeds_trainer``; resumed from the latest step every seed has."""
    runs = []
    for c in configs.values():
        folder, ckpt = cgrsp_train.resolve_run_dir(c)
        runs.append([c, folder, ckpt])
    ckpts = [k for _, _, k in runs]
    if any(k is not None for k in ckpts):
        if any(k is None for k in ckpts):
            raise ConfigError(
                "resume: some seeds of this side-by-side run have no checkpoint; they train together, so remove the "
                "run's seed folders to start afresh"
            )
        step = min(cgrsp_train.checkpoints(r[1])[-1][0] for r in runs)
        for r in runs:
            r[2] = r[1] / "checkpoints" / f"model_{step}_steps.npz"
            if not r[2].is_file():
                raise ConfigError(f"resume: {r[1]} has no checkpoint at {step} steps, where every seed resumes")
    for c, folder, ckpt in runs:
        cgrsp_train.write_run_files(c, folder, ckpt)
    return spec.seeds_trainer([tuple(r) for r in runs], config)


def _summary(parent: Path, seeds: list[int], outs: dict[int, dict[str, float]]) -> dict[str, float]:
    """``seeds.csv``, each seed's verdict and the parent's TensorBoard command; the mean of the seeds' final means."""
    rows = []
    for s in seeds:
        folder = parent / f"seed{s}"
        log_verdict(folder)
        objective = selection_objective(folder) if read_best(folder) is not None else float("nan")
        rows.append({"seed": s, "folder": folder.name, "objective": objective, **outs[s]})
    table = pd.DataFrame(rows)
    atomic_write_table(parent / SEEDS_CSV, table)
    log.info(
        f"{len(seeds)} seeds in {parent} (per seed: {SEEDS_CSV}); every seed's curves against the heuristics: "
        f"tensorboard --logdir {parent}"
    )
    keys = sorted({k for o in outs.values() for k in o})
    return {k: float(np.mean([o[k] for o in outs.values() if k in o])) for k in keys}


__all__ = ["SEEDS_CSV", "seed_config", "train_seeds"]
