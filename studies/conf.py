"""One way to compose the training config as ``train.py`` does (Hydra over the checkout's ``conf/``).

Used by the studies (benchmarks, diagnostics) and the tests, so a named design such as
``env=markov`` means the same everywhere.
"""

from __future__ import annotations

import functools
from pathlib import Path

CONF = Path(__file__).resolve().parents[1] / "conf"


@functools.cache
def _schemas() -> None:
    """Store the schemas in Hydra's ConfigStore once per process.

    The store is a process-wide singleton; storing them again costs ~8 % of a compose here, and the
    tests compose ~200 configs.
    """
    from gpu_sched_agents.rl.config import register_configs

    register_configs()


def compose_config(*overrides: str):
    """The composed root config under ``overrides`` (a DictConfig)."""
    from hydra import compose, initialize_config_dir

    _schemas()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def composed_env(day: str, *overrides: str):
    """The env config (:class:`~gpu_sched_env.cgrsp.config.CGRSPEnvConfig`) of ``train.py day=DAY OVERRIDES...``."""
    from gpu_sched_agents.rl.envs import env_config

    return env_config(compose_config(f"day={day}", *overrides))


__all__ = ["CONF", "compose_config", "composed_env"]
