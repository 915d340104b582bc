"""One way for tests to compose the training config as ``train.py`` does (Hydra, the repo's conf/)."""

from pathlib import Path

from hydra import compose, initialize_config_dir

from gpu_sched_agents.rl.config import register_configs

CONF = str(Path(__file__).resolve().parents[1] / "conf")
register_configs()


def cfg_for(*overrides):
    """The composed root config under ``overrides`` (run_dir defaults to /tmp/x)."""
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=["run_dir=/tmp/x", *overrides])
