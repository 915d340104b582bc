"""``train(cfg)`` and ``validate(cfg)`` for every scenario: the one place that chooses by ``cfg.scenario``.

CGRSP goes to :mod:`gpu_sched_agents.rl.train`; HGSP, LLM serving, MIG and edge to
:mod:`gpu_sched_agents.rl.scenario_train`, which reuses CGRSP's run-folder helpers. Choosing
here, above both, keeps either from importing the other (no import circle).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from gpu_sched_agents.rl import multiseed, scenario_train
from gpu_sched_agents.rl import train as cgrsp_train
from gpu_sched_agents.rl.compare import log_verdict
from gpu_sched_agents.rl.rundir import remove_unused_run_dir
from gpu_sched_agents.rl.scenarios import CGRSP, scenario_of
from gpu_sched_agents.rl.sweep import run_dir_of
from gpu_sched_env.core.errors import ConfigError

SCHEMA = "_schema"  # the suffix of the typed schemas register_configs stores in each config group


def check_choices() -> None:
    """Refuse a config group's schema chosen as its option (``day=day_schema``): it holds defaults, not a setting.

    Hydra lets the schema be chosen like any option of its group; its defaults (``day.name``:
    hectic) would then train silently. Outside a Hydra run (a composed config) there is nothing to check.
    """
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return
    hc = HydraConfig.get()
    for group, choice in hc.runtime.choices.items():
        if isinstance(choice, str) and choice.endswith(SCHEMA) and not group.startswith("hydra"):
            options = sorted(
                {
                    f.stem
                    for src in hc.runtime.config_sources
                    if src.schema == "file"
                    for f in (Path(src.path) / group).glob("*.yaml")
                }
            )
            raise ConfigError(
                f"{group} = {choice!r} is the group's schema (its typed defaults), not one of its options; "
                f"allowed: {', '.join(options)}"
            )


def validate(cfg: DictConfig) -> Any:
    """Check a training config before anything is written; return its env config."""
    if scenario_of(cfg) != CGRSP:
        return scenario_train.validate_scenario(cfg)[1]
    return cgrsp_train.validate(cfg)


def train(cfg: DictConfig) -> dict[str, float]:
    """Train, evaluate and write the run directory (same folder, files, tags and resume rules in every scenario).

    The log ends with the verdict (the learned policy against the strongest baseline of the final
    evaluation) and the run's TensorBoard command.
    """
    try:
        check_choices()
    except ConfigError:
        remove_unused_run_dir(run_dir_of(cfg))  # refused before anything is written
        raise
    if cfg.train.get("seeds") is not None:  # one run folder per seed, under this run's
        return multiseed.train_seeds(cfg)
    out = scenario_train.train_scenario(cfg) if scenario_of(cfg) != CGRSP else cgrsp_train.train(cfg)
    log_verdict(run_dir_of(cfg))
    return out


__all__ = ["check_choices", "train", "validate"]
