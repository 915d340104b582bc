"""The one ``best.json`` schema: what every selection path writes and every reader reads.

A run folder's ``best.json`` describes the model kept as ``best_model``:

* ``schema`` (int): :data:`SCHEMA`.
* ``timesteps`` (int): the training steps of the kept model.
* ``select_rule`` (str, one of :data:`SELECT_RULES`): how candidates were ranked. ``objective``:
  the env's reward objective on the selection seeds (SB3's EvalCallback, and ``algo=ppo_jax``
  without JAX selection days), or with ``algo.select_by=objective`` the selection objective on the
  JAX selection days (``select_objective``); ``lexicographic``: no more misses than the rule on the JAX
  selection days, then the lowest wait; ``worst_regime``: the fewest regimes missing more than
  the rule, then the worst regime's wait excess (``algo.select_regimes``).
* ``select_key`` (list of floats): the ranking key, compared lexicographically, lower is better.
* ``objective`` (float): the selection's objective as one number, lower is better: what a
  Hydra sweeper minimises (:func:`selection_objective`). For ``objective`` it is the key itself;
  for ``lexicographic`` the selection days' mean wait plus a miss priced as one job-hour (the
  ``deadline`` objective per job, [min]); for ``worst_regime`` the worst regime's wait excess
  plus one margin per regime missing more than the rule.
* the evaluation's means (``miss_pct``, ``mean_wait_min``, ``select_*`` …) beside them (the env
  objective on CGRSP-v0's seeds as ``eval_objective`` where it is not the key), and
  ``recheck`` / ``first_stage`` after a second stage.

A ``train.seeds`` run's folder (:mod:`gpu_sched_agents.rl.multiseed`) holds no ``best.json`` of
its own but ``seeds.json`` naming its seeds' folders; its selection objective is their mean.

The module imports neither SB3 nor JAX, so a reader (a sweep, ``gpu-sched evaluate``) needs neither.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpu_sched_env.cgrsp.rewards import deadline_objective
from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.io import atomic_write_json

BEST_JSON = "best.json"
SEEDS_JSON = "seeds.json"  # a train.seeds run's folder: {"seeds": [...], "folders": [...]}
SCHEMA = 1
SELECT_ON = "objective"  # the env's reward objective (its preset's weights), lower is better
SELECT_RULES = ("objective", "lexicographic", "worst_regime")
FIELDS = ("schema", "timesteps", "select_rule", "select_key", "objective")


def objective_of(rule: str, key: Sequence[float], means: Mapping[str, float]) -> float:
    """The one number a sweep minimises for a candidate ranked by ``rule`` with ``key`` (see the module docstring)."""
    check_choice("select_rule", rule, SELECT_RULES)
    if rule == "objective":
        return float(key[0])
    if rule == "lexicographic":
        return deadline_objective(means["select_mean_wait_min"], means["select_miss_pct"])
    over, excess = key
    return float(excess + over)


def best_record(
    timesteps: int, rule: str, key: Sequence[float], means: Mapping[str, float], **extra: Any
) -> dict[str, Any]:
    """The ``best.json`` of a kept candidate: the schema's fields, then ``means`` and ``extra``."""
    key = [float(x) for x in key]
    head = {
        "schema": SCHEMA,
        "timesteps": int(timesteps),
        "select_rule": rule,
        "select_key": key,
        "objective": objective_of(rule, key, means),
    }
    # CGRSP-v0's objective is the key only for the objective rule on CGRSP-v0's seeds (no select_objective)
    on_v0 = rule == "objective" and "select_objective" not in means
    kept = {("eval_objective" if k == SELECT_ON and not on_v0 else k): v for k, v in means.items()}
    return {**{k: v for k, v in kept.items() if k not in head}, **head, **extra}


def write_best(run_dir: Path, record: Mapping[str, Any]) -> None:
    """Write ``record`` (a :func:`best_record`) as the run's ``best.json``, atomically."""
    missing = [f for f in FIELDS if f not in record]
    if missing:
        raise ValueError(f"best.json record lacks {missing}; build it with best_record()")
    atomic_write_json(Path(run_dir) / BEST_JSON, dict(record))


def read_best(run_dir: Path) -> dict[str, Any] | None:
    """A run's ``best.json`` in the schema, or None where the run has none yet.

    A file written before the schema (no ``schema`` field) is read as what it was: SB3's
    ``objective`` becomes a one-element key under the ``objective`` rule; a JAX selection's
    ``select_key`` keeps its key, its ``objective`` recomputed from its means where they allow.
    A file that is neither raises :class:`ConfigError` naming it and the fields expected.
    """
    path = Path(run_dir) / BEST_JSON
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path} is not valid JSON ({e}); a run's best.json holds {list(FIELDS)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} holds {type(data).__name__}, not an object with {list(FIELDS)}")
    if data.get("schema") == SCHEMA and all(f in data for f in FIELDS):
        return data
    if "select_key" in data:  # a JAX selection's file from before the schema
        key = [float(x) for x in data["select_key"]]
        rule = "lexicographic" if len(key) == 3 else "worst_regime"
        try:
            objective = objective_of(rule, key, data)
        except KeyError:
            objective = None
        return {**data, "schema": SCHEMA, "select_rule": rule, "objective": objective}
    if SELECT_ON in data:
        return {**data, "schema": SCHEMA, "select_rule": "objective", "select_key": [float(data[SELECT_ON])]}
    raise ConfigError(f"{path} holds {sorted(data)}, not a run's best.json (expected {list(FIELDS)})")


def seed_folders(run_dir: Path) -> dict[int, Path]:
    """A ``train.seeds`` run's seeds and their folders (``seeds.json``); empty for a single run."""
    path = Path(run_dir) / SEEDS_JSON
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        return {int(s): Path(run_dir) / str(f) for s, f in zip(data["seeds"], data["folders"], strict=True)}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ConfigError(f"{path} is not a train.seeds run's {SEEDS_JSON} ({e}); it holds seeds and folders") from None


def selection_objective(run_dir: Path) -> float:
    """The kept model's selection objective (``best.json``'s ``objective``), lower is better.

    A ``train.seeds`` run's: the mean of its seeds' (each seed's kept model).
    """
    path = Path(run_dir) / BEST_JSON
    seeds = seed_folders(run_dir)
    if seeds and not path.exists():
        return float(sum(selection_objective(f) for f in seeds.values()) / len(seeds))
    best = read_best(run_dir)
    if best is None:
        raise FileNotFoundError(
            f"{path} is missing: the run made no held-out evaluation, so it has no selection objective"
        )
    if best["objective"] is None:
        raise ConfigError(f"{path} has no objective and its means cannot give one (select_key {best['select_key']})")
    return float(best["objective"])


__all__ = [
    "BEST_JSON",
    "SCHEMA",
    "SELECT_ON",
    "SEEDS_JSON",
    "SELECT_RULES",
    "best_record",
    "objective_of",
    "read_best",
    "seed_folders",
    "selection_objective",
    "write_best",
]
