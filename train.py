"""Train a scheduler: ``python train.py algo=ppo day=hectic`` (CGRSP), ``scenario=hgsp algo=ppo`` (see conf/)."""

from gpu_sched_env.core.extras import needs_extra

with needs_extra("train.py"):
    import hydra

    from gpu_sched_agents.rl.best import selection_objective
    from gpu_sched_agents.rl.config import register_configs
    from gpu_sched_agents.rl.entry import train
    from gpu_sched_agents.rl.sweep import run_dir_of

register_configs()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg) -> float:
    """Hydra entry point; returns the run's best selection objective (what a sweeper minimises)."""
    train(cfg)
    return selection_objective(run_dir_of(cfg))


if __name__ == "__main__":
    main()
