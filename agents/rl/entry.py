"""``train(cfg)`` and ``validate(cfg)`` for every scenario: the one place that chooses by ``cfg.scenario``.

CGRSP goes to :mod:`gpu_sched_agents.rl.train`; HGSP, LLM serving, MIG and edge to
:mod:`gpu_sched_agents.rl.scenario_train`, which reuses CGRSP's run-folder helpers. Choosing
here, above both, keeps either from importing the other (no import circle).
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig

from gpu_sched_agents.rl import scenario_train
from gpu_sched_agents.rl import train as cgrsp_train
from gpu_sched_agents.rl.compare import log_verdict
from gpu_sched_agents.rl.scenarios import CGRSP, scenario_of
from gpu_sched_agents.rl.sweep import run_dir_of


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
    out = scenario_train.train_scenario(cfg) if scenario_of(cfg) != CGRSP else cgrsp_train.train(cfg)
    log_verdict(run_dir_of(cfg))
    return out


__all__ = ["train", "validate"]
