"""One way for tests to compose the training config as ``train.py`` does: :mod:`gpu_sched_agents.rl.compose`."""

from gpu_sched_agents.rl.compose import compose_config


def cfg_for(*overrides):
    """The composed root config under ``overrides`` (run_dir defaults to /tmp/x)."""
    return compose_config("run_dir=/tmp/x", *overrides)
