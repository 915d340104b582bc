"""``train.py`` as a newcomer runs it: every shipped algo, experiment and scenario, to its end, at a tiny budget.

One table (:data:`RUNS`) of invocations, each a ``python train.py ...`` process of its own; a multirun
(``-m``) plays several experiments in one process (a Hydra sweep, so ``main()``'s return value, the
selection objective, is read for every job, as a sweeper reads it). The overrides shrink budgets,
seeds and days only; no run switches a feature its experiment does not ship.
``tests/rl/test_train_runs_{sb3,jax}.py`` run the table (e2e, one file per xdist worker);
``test_train_runs_cover_every_shipped_config`` (fast) holds it complete. The processes are forked
from one fresh interpreter per test module that imported train.py's libraries once
(:data:`PRELOAD`, ``tests/forked.py``): each is still a process of its own, with its own exit
status, output, working folder and environment, and ~4 s of CPU less to import.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gpu_sched_agents.rl.best import FIELDS
from tests.forked import Finished, ForkServer

ROOT = Path(__file__).resolve().parents[2]
COMMON = ["train.eval_seeds=[10000]", "train.final_eval_seeds=2", "train.progress_bar=false"]
SB3 = [
    *COMMON,
    "train.total_timesteps=128",
    "train.n_envs=1",
    "train.eval_freq=64",
    "train.checkpoint_freq=64",
    "algo.n_steps=64",
    "algo.batch_size=64",
    "algo.n_epochs=1",
    "algo.net_arch=[16]",
]
DQN = [
    *COMMON,
    "train.total_timesteps=128",
    "train.n_envs=1",
    "train.eval_freq=64",
    "train.checkpoint_freq=64",
    "algo.learning_starts=32",
    "algo.buffer_size=1000",
    "algo.batch_size=16",
    "algo.net_arch=[16]",
]
# the smallest ppo_jax run that still trains, evaluates and checkpoints twice (tests/rl/test_ppo_jax_train.py too)
JAX_TINY = [
    "train.total_timesteps=256",
    "train.n_envs=4",
    "algo.n_steps=32",
    "algo.batch_size=64",
    "algo.n_epochs=1",
    "algo.net_arch=[16]",
    "train.eval_freq=128",
    "train.checkpoint_freq=128",
    "algo.jax_eval_seeds=4",
    "algo.jax_eval_rules=[spt_rescue_defer_exp]",
]
JAX = [
    *COMMON,
    "algo=ppo_jax",  # a multirun composes the sweep's base config too: the algo its experiments train
    *JAX_TINY,
]
SELECTING = ["algo.select_days=4", "algo.select_every=128"]  # where the experiment selects on JAX days
SMALL = {  # short episodes, so 128 steps play several
    "hgsp": ["scenario.env.n_tasks=20"],
    "llm": ["scenario.env.n_requests=10"],
    "mig": ["scenario.env.n_jobs=10"],
    "edge": ["scenario.env.n_tasks=8"],
}


@dataclass(frozen=True)
class Run:
    """One ``train.py`` process: its overrides, whether it is a multirun, and which shipped configs it covers."""

    args: tuple[str, ...]
    covers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # group (algo, experiment, scenario) -> names
    multirun: bool = False

    def argv(self, out: Path) -> list[str]:
        where = f"hydra.sweep.dir={out}" if self.multirun else f"hydra.run.dir={out}"
        return [sys.executable, "train.py", *(["-m"] if self.multirun else []), where, *self.args]


def _sweep(group: str, names: tuple[str, ...], *args: str) -> Run:
    return Run((f"{group}={','.join(names)}", *args), {group: names}, multirun=True)


HOLDING = ("ppo_jax_hold", "ppo_jax_hold_surge")  # these select with a second stage (algo.recheck_days)
RUNS: dict[str, Run] = {
    # the Quickstart's main job, and the JAX path's
    "quickstart": Run(("algo=ppo", "day=hectic", *SB3), {"algo": ("ppo",), "scenario": ("cgrsp",)}),
    "jax_main": Run(("algo=ppo_jax", "day=hectic", *JAX, *SELECTING), {"algo": ("ppo_jax",)}),
    # docs/training.md's several seeds by one command: a run folder per seed, side by side
    "jax_seeds": Run(("algo=ppo_jax", "day=hectic", *JAX, *SELECTING, "train.seeds=[0,1]")),
    "ppo_unmasked": Run(("algo=ppo_unmasked", "day=hectic", *SB3), {"algo": ("ppo_unmasked",)}),
    "dqn": Run(("algo=dqn", "day=hectic", *DQN), {"algo": ("dqn",)}),
    "sb3_experiments": _sweep(
        "experiment",
        ("main", "class_heads", "joint_heads", "joint_heads_markov", "markov", "markov_fresh", "month"),
        "algo=ppo",
        *SB3,
    ),
    "jax_experiments": _sweep(
        "experiment", ("ppo_jax_joint", "ppo_jax_long", "ppo_jax_markov", "ppo_jax_when", "ppo_jax_when_markov"), *JAX
    ),
    # two ablation rows (conf/ablation/) as one multirun over experiment=ppo_jax_joint
    "jax_ablation_rows": Run(
        ("+ablation=time_aware,when_time_aware", "experiment=ppo_jax_joint", *JAX),
        {"ablation": ("time_aware", "when_time_aware")},
        multirun=True,
    ),
    "jax_selecting": Run(
        ("experiment=ppo_jax_hold_markov", *JAX, *SELECTING), {"experiment": ("ppo_jax_hold_markov",)}
    ),
    "jax_generalists": _sweep("experiment", ("generalist", "generalist_scratch"), *JAX, *SELECTING),
    "jax_second_stage": _sweep("experiment", HOLDING, *JAX, *SELECTING, "algo.recheck_days=4", "algo.recheck_top=2"),
    **{
        f"scenario_{s}": Run((f"scenario={s}", "algo=ppo", *SB3, *small), {"scenario": (s,)})
        for s, small in SMALL.items()
    },
}


def shipped(group: str) -> set[str]:
    """The names of a config group's shipped options (``conf/<group>/*.yaml``)."""
    return {p.stem for p in (ROOT / "conf" / group).glob("*.yaml")}


# what train.py imports, imported once by each module's fork server (no JAX backend is made: the
# children make their own)
PRELOAD = [
    *("hydra", "torch", "stable_baselines3", "sb3_contrib", "jax", "optax", "pandas", "scipy.stats"),
    *("gpu_sched_agents.rl.entry", "gpu_sched_agents.rl.train", "gpu_sched_agents.rl.ppo_jax.run"),
]


@dataclass(frozen=True)
class Trainer:
    """A test module's fork server and the user cache (``XDG_CACHE_HOME``) of its runs."""

    server: ForkServer
    cache: Path

    def env(self) -> dict[str, str]:
        """The runs' environment: this module's user cache, with the reference stores on; the suite's JAX cache."""
        from gpu_sched_env.core.jaxcache import cache_dir

        jax_cache = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(cache_dir())
        return {
            "XDG_CACHE_HOME": str(self.cache),
            "JAX_COMPILATION_CACHE_DIR": jax_cache,
            "HYDRA_FULL_ERROR": "1",
            "GPU_SCHED_REFERENCE_CACHE": "1",  # the suite turns them off; these runs share them (see run)
        }


def start_trainer(folder: Path, cache: Path) -> Trainer:
    """A fork server that imported :data:`PRELOAD` (its output files under ``folder``), with its runs' user cache."""
    return Trainer(ForkServer(PRELOAD, folder), cache)


def run(name: str, tmp: Path, trainer: Trainer, timeout: float = 1800) -> tuple[Finished, Path]:
    """Run :data:`RUNS` ``[name]`` in a process of its own; its output folder (a run, or a sweep of runs).

    The user cache is the module's (:class:`Trainer`), so the heuristics' final-evaluation days are
    simulated by the first run that needs them and read by the others (never from an earlier
    session's store); JAX's compile cache stays the suite's.
    """
    out = tmp / name
    proc = trainer.server.run(RUNS[name].argv(out)[1:], ROOT, trainer.env(), timeout=timeout)
    return proc, out


def seeds_of(name: str) -> list[int]:
    """The ``train.seeds`` a :data:`RUNS` entry trains (empty: one run of ``seed``)."""
    given = [a.split("=", 1)[1] for a in RUNS[name].args if a.startswith("train.seeds=")]
    return [int(x) for x in given[0].strip("[]").split(",")] if given else []


def run_folders(name: str, out: Path) -> list[Path]:
    """The run folders a :data:`RUNS` entry wrote (one, a seed's each, or a sweep's jobs in order)."""
    if seeds_of(name):
        return [out / f"seed{s}" for s in seeds_of(name)]
    if not RUNS[name].multirun:
        return [out]
    return sorted((p for p in out.iterdir() if p.is_dir() and (p / "config.yaml").exists()), key=lambda p: p.name)


def check_run(folder: Path, jax: bool) -> dict:
    """Assert a finished run folder's files; return its ``best.json``."""
    names = {p.name for p in folder.iterdir()}
    model = "npz" if jax else "zip"
    want = {"config.yaml", "command.txt", "best.json", f"best_model.{model}", f"final_model.{model}", "tb"}
    want |= {"learning_curve.csv", "final_eval.csv", "final_eval_tests.csv", "final_eval.md"}
    assert want <= names, (folder, sorted(want - names))
    best = json.loads((folder / "best.json").read_text())
    assert set(FIELDS) <= set(best), (folder, best)
    assert isinstance(best["objective"], float) and best["objective"] == best["objective"]  # a number, not NaN
    assert len(pd.read_csv(folder / "final_eval_per_seed.csv").seed.unique()) == 2
    return best


def check_sweep(out: Path, n: int) -> None:
    """A multirun's record: one ``job.json`` per job and ``trials.csv``, each job's objective read from best.json."""
    trials = pd.read_csv(out / "trials.csv")
    assert len(trials) == n and trials.objective.notna().all(), trials
    for job in sorted(out.glob("*/job.json")):
        info = json.loads(job.read_text())
        best = json.loads((job.parent / "best.json").read_text())
        assert info["objective"] == best["objective"]


SELECTING = ("jax_selecting", "jax_generalists", "jax_second_stage")  # tests/rl/test_train_runs_jax_select.py


def check_jax_runs(name: str, proc: Finished, out: Path) -> None:
    """Assert a finished ppo_jax entry: exit 0, each run folder's files, the selection's rule in best.json."""
    assert proc.returncode == 0, proc.stderr[-4000:]
    folders = run_folders(name, out)
    assert len(folders) == (len(seeds_of(name)) or max(len(v) for v in RUNS[name].covers.values()))
    for folder in folders:
        best = check_run(folder, jax=True)
        if "select_days: 0" not in (folder / "config.yaml").read_text():  # a JAX selection: its rule in the schema
            assert best["select_rule"] in ("lexicographic", "worst_regime"), best
        assert (folder / "final_eval_jax.csv").is_file()
    if RUNS[name].multirun:
        check_sweep(out, len(folders))
