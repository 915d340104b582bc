"""Train a scheduler: ``python train.py algo=ppo day=hectic`` (CGRSP), ``scenario=hgsp algo=ppo`` (see conf/).

A refused setting (a :class:`~gpu_sched_env.core.errors.ConfigError`: a bad value of a known
field, a refused resume) is one line on stderr, ``train.py: <message>``, and exit status 2; a
setting refused before training leaves no run folder behind. In a multirun (``-m``) it is raised
instead, so Hydra records that job as failed. What Hydra itself refuses (an unknown group,
option or key) Hydra reports.
"""

import sys

from gpu_sched_env.core.extras import needs_extra

with needs_extra("train.py"):
    import hydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from gpu_sched_agents.rl.best import selection_objective
    from gpu_sched_agents.rl.config import register_configs
    from gpu_sched_agents.rl.entry import train
    from gpu_sched_agents.rl.sweep import run_dir_of
    from gpu_sched_env.core.errors import ConfigError

register_configs()
USAGE_ERROR = 2  # the exit status of a refused setting, as argparse's


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg) -> float:
    """Hydra entry point; returns the run's best selection objective (what a sweeper minimises)."""
    try:
        train(cfg)
        return selection_objective(run_dir_of(cfg))
    except ConfigError as e:
        if HydraConfig.get().mode == RunMode.MULTIRUN:
            raise
        # SystemExit is no Exception: Hydra's job runner lets it through without a traceback
        print("train.py: " + " ".join(str(e).split("\n")), file=sys.stderr)
        sys.exit(USAGE_ERROR)


if __name__ == "__main__":
    main()
