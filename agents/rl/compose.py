"""Compose the training config as ``train.py`` does: Hydra over the checkout's ``conf/``.

Checkout only: ``conf/`` lies at the repository root, next to ``train.py``, and is not part of the
installed wheel, so an installed ``gpu_sched_agents`` without its checkout finds no ``conf/`` and
:func:`compose_config` raises :class:`~gpu_sched_env.core.errors.ConfigError` saying so. The studies
and the tests compose through this one module, so a named design such as ``env=markov`` means the
same to ``train.py``, a study and a test.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from gpu_sched_env.core.errors import ConfigError

# agents/rl/compose.py -> the repository root (agents/ installs as gpu_sched_agents from the checkout)
CONF = Path(__file__).resolve().parents[2] / "conf"


def conf_dir() -> Path:
    """The checkout's ``conf/`` (:data:`CONF`); ConfigError when it is missing (an install without its checkout)."""
    if not (CONF / "config.yaml").is_file():
        raise ConfigError(
            f"conf = {str(CONF)!r}: no conf/config.yaml there; composing train.py's config needs the "
            "repository checkout (conf/ next to train.py), which the installed package does not ship"
        )
    return CONF


@functools.cache
def _schemas() -> None:
    """Store the schemas in Hydra's ConfigStore once per process.

    The store is a process-wide singleton; storing them again costs ~8 % of a compose here, and the
    tests compose ~200 configs.
    """
    from gpu_sched_agents.rl.config import register_configs

    register_configs()


def compose_config(*overrides: str) -> Any:
    """The composed root config under ``overrides`` (a DictConfig); ConfigError without the checkout's conf/."""
    from hydra import compose, initialize_config_dir

    config_dir = conf_dir()
    _schemas()
    with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def composed_env(day: str, *overrides: str) -> Any:
    """The env config (:class:`~gpu_sched_env.cgrsp.config.CGRSPEnvConfig`) of ``train.py day=DAY OVERRIDES...``."""
    from gpu_sched_agents.rl.envs import env_config

    return env_config(compose_config(f"day={day}", *overrides))


__all__ = ["CONF", "compose_config", "composed_env", "conf_dir"]
