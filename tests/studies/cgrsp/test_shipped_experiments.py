"""The shipped ``conf/experiment`` settings of algo=ppo_jax are the studies' rows (ablation, parity, generalist).

Each composes a shipped experiment as train.py does and the study's own config of the same row
(studies.cgrsp.learning), and holds them equal, so a change to either fails here.
"""

import pytest
from hydra import compose, initialize_config_dir

from gpu_sched_agents.rl.compose import CONF as CONF_DIR
from gpu_sched_agents.rl.config import register_configs

CONF = str(CONF_DIR)

register_configs()


def test_generalist_experiment_is_the_generalist_studys_10m_worst_regime_setting():
    from gpu_sched_agents.evaluate.protocol import REGIMES
    from gpu_sched_agents.rl.ppo_jax.config import hyper
    from gpu_sched_env.cgrsp.jax.mix import GENERALIST_STOCKS
    from studies.cgrsp.learning.generalist import generalist_config, parse_args

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=generalist", "run_dir=/tmp/unused"])
        main = compose(config_name="config", overrides=["algo=ppo_jax", "run_dir=/tmp/unused"])
    assert cfg.algo.name == "ppo_jax" and cfg.day.name == "mixed" and cfg.day.day_mix is None
    assert list(cfg.day.stock_mix) == ["fresh", "300", "900", "3600"] == list(GENERALIST_STOCKS)
    assert int(cfg.train.total_timesteps) == 10_000_000  # the study's measured budget (docs/training.md)
    assert cfg == generalist_config(10_000_000, GENERALIST_STOCKS, None, None)
    # the study's --select-every 500000 (whole updates, its selection days) on the protocol's four regimes
    _, args = parse_args(["--budget", "10000000", "--out", "/tmp/unused", "--select-every", "500000"])
    per_update = hyper(cfg).steps_per_update
    assert int(cfg.algo.select_every) == args.select_every // per_update * per_update
    assert list(cfg.algo.select_regimes) == list(REGIMES) and int(cfg.algo.select_days) == args.select_days
    other = {"select_every", "select_regimes"}  # otherwise algo=ppo_jax's design; only the days differ
    same = [k for k in main.algo if k not in other]
    assert [cfg.algo[k] for k in same] == [main.algo[k] for k in same] and set(cfg.algo) == set(main.algo)
    assert cfg.env == main.env


def test_scratch_generalist_experiment_is_the_generalist_studys_regime_scaled_setting():
    """experiment=generalist_scratch ships the study's from-scratch run with one return scale per regime."""
    from gpu_sched_agents.rl.ppo_jax.config import hyper
    from gpu_sched_env.cgrsp.jax.mix import GENERALIST_STOCKS
    from studies.cgrsp.learning.generalist import generalist_config, parse_args

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=generalist_scratch", "run_dir=/tmp/unused"])
    # the measured command's arguments (docs/training.md, "The generalist")
    argv = "--budget 20000000 --out /tmp/unused --select-every 250000 --day-mix hectic=1 surge=1 normal=1 quiet=1"
    over = "env=joint_heads env.action_mode=joint_hold +env.reward_weights.excess_run=1.0 algo.tau_s=90"
    over += " algo.net_arch=[128,128] algo.reward_norm=regime"
    _, args = parse_args([*argv.split(), "--override", *over.split()])
    study = generalist_config(args.budget, GENERALIST_STOCKS, None, None, args.override, args.day_mix)
    per_update = hyper(cfg).steps_per_update
    assert int(cfg.algo.select_every) == args.select_every // per_update * per_update == 245_760
    study.algo.select_every = cfg.algo.select_every  # the study passes its --select-every to the trainer itself
    assert cfg == study
    assert cfg.algo.reward_norm == "regime" and cfg.env.action_mode == "joint_hold" and cfg.day.name == "mixed"


def test_persistent_stock_experiment_is_the_ablations_time_aware_row():
    """experiment=ppo_jax_markov ships the ablation's time_aware row of hectic_D900, nothing else changed."""
    from studies.cgrsp.learning.ablation import ROWS
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=ppo_jax_markov"])
    row = regime_config("hectic_D900", int(cfg.train.total_timesteps), extra=ROWS["time_aware"][1])
    assert cfg.algo == row.algo and cfg.env == row.env and cfg.train == row.train and cfg.day == row.day
    assert cfg.algo.tau_s == 90 and cfg.env.params.stock_dwell_s == 900


@pytest.mark.parametrize(
    ("experiment", "regime"), [("ppo_jax_when", "hectic_fresh"), ("ppo_jax_when_markov", "hectic_D900")]
)
def test_when_experiments_are_the_ablations_when_time_aware_rows(experiment, regime):
    """experiment=ppo_jax_when(_markov) ship the ablation's when_time_aware row of hectic fresh (D = 900 s)."""
    from studies.cgrsp.learning.ablation import ROWS
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={experiment}", "day=hectic"])
    from studies.cgrsp.learning.ablation import parse_args

    row = regime_config(regime, int(cfg.train.total_timesteps), extra=ROWS["when_time_aware"][1])
    # the ablation's selection protocol (its defaults) as train.py's best_model
    protocol = parse_args(["--budget", "1", "--out", "x"])
    assert (cfg.algo.select_days, cfg.train.eval_freq) == (protocol.select_days, protocol.select_every)
    row.algo.select_days, row.train.eval_freq = cfg.algo.select_days, cfg.train.eval_freq
    assert cfg.algo == row.algo and cfg.env == row.env and cfg.train == row.train and cfg.day == row.day
    assert cfg.env.action_mode == "when" and cfg.algo.tau_s == 90


def test_held_deferral_experiment_is_the_ablations_hold_row_at_12m():
    """experiment=ppo_jax_hold_markov ships the ablation's hold_excess1_time_aware row of hectic_D900 at 12M steps."""
    from studies.cgrsp.learning.ablation import ROWS, parse_args
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=ppo_jax_hold_markov"])
    assert int(cfg.train.total_timesteps) == 12_000_000
    row = regime_config("hectic_D900", 12_000_000, extra=ROWS["hold_excess1_time_aware"][1])
    protocol = parse_args(["--budget", "1", "--out", "x"])
    assert (cfg.algo.select_days, cfg.train.eval_freq) == (protocol.select_days, protocol.select_every)
    row.algo.select_days, row.train.eval_freq = cfg.algo.select_days, cfg.train.eval_freq
    assert cfg.algo == row.algo and cfg.env == row.env and cfg.train == row.train and cfg.day == row.day
    assert cfg.env.action_mode == "joint_hold" and cfg.env.reward_weights.excess_run == 1.0


def test_fresh_stock_held_deferral_experiment_is_the_ablations_two_stage_row():
    """experiment=ppo_jax_hold ships hectic_fresh's hold_excess1_time_aware row at 12M, picked in two stages."""
    from studies.cgrsp.learning.ablation import ROWS, parse_args
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=ppo_jax_hold"])
    row = regime_config("hectic_fresh", 12_000_000, extra=ROWS["hold_excess1_time_aware"][1])
    protocol = parse_args(["--budget", "1", "--out", "x", "--recheck-days", "1000"])
    assert (cfg.algo.select_days, cfg.train.eval_freq) == (protocol.select_days, protocol.select_every)
    assert (cfg.algo.recheck_days, cfg.algo.recheck_top) == (protocol.recheck_days, protocol.recheck_top)
    row.algo.select_days, row.train.eval_freq = cfg.algo.select_days, cfg.train.eval_freq
    row.algo.recheck_days = cfg.algo.recheck_days
    assert cfg.algo == row.algo and cfg.env == row.env and cfg.train == row.train and cfg.day == row.day
    assert cfg.env.params.get("stock_process", "fresh") == "fresh" and cfg.day.name == "hectic"


def test_surge_held_deferral_experiment_is_the_ablations_row_without_the_clock():
    """experiment=ppo_jax_hold_surge ships surge_fresh's hold_excess1 row at 6M, picked in two stages."""
    from studies.cgrsp.learning.ablation import ROWS
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=ppo_jax_hold_surge"])
        hectic = compose(config_name="config", overrides=["experiment=ppo_jax_hold"])
    row = regime_config("surge_fresh", 6_000_000, extra=ROWS["hold_excess1"][1])
    row.algo.select_days, row.train.eval_freq = cfg.algo.select_days, cfg.train.eval_freq
    row.algo.recheck_days = cfg.algo.recheck_days
    assert cfg.algo == row.algo and cfg.env == row.env and cfg.train == row.train and cfg.day == row.day
    assert cfg.algo.tau_s is None and cfg.day.name == "surge" and cfg.env.params.get("stock_process") is None
    assert (cfg.algo.select_days, cfg.algo.recheck_days, cfg.train.eval_freq) == (
        hectic.algo.select_days,
        hectic.algo.recheck_days,
        hectic.train.eval_freq,
    )  # the pick of the hectic experiment


def test_the_main_jobs_setting_is_the_when_design_on_the_simulated_clock():
    """``algo=ppo_jax`` ships the ablation's when_time_aware row, 64×64; experiment=ppo_jax_joint the old setting."""
    from studies.cgrsp.learning.ablation import ROWS
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        main = compose(config_name="config", overrides=["algo=ppo_jax", "day=hectic"])
        joint = compose(config_name="config", overrides=["experiment=ppo_jax_joint", "day=hectic"])
    assert (main.env.action_mode, main.algo.tau_s, list(main.algo.net_arch)) == ("when", 90, [64, 64])
    assert (main.algo.select_days, main.algo.select_every, main.train.eval_freq) == (100, 250_000, 1_000_000)
    row = regime_config("hectic_fresh", int(main.train.total_timesteps), extra=ROWS["when_time_aware"][1])
    for k in ("select_days", "select_every", "net_arch"):
        row.algo[k] = main.algo[k]
    assert main.algo == row.algo and main.env == row.env and main.day == row.day
    assert (joint.env.action_mode, joint.algo.tau_s, joint.algo.select_days) == ("joint", None, 0)
    assert regime_config("hectic_fresh", int(joint.train.total_timesteps)).algo == joint.algo  # the studies' base


@pytest.mark.parametrize(("day", "regime"), [("hectic", "hectic_fresh"), ("surge", "surge_fresh")])
def test_the_long_experiment_is_the_parity_studys_6m_setting(day, regime):
    """experiment=ppo_jax_long = the parity study of the when design (64×64, τ 90 s) at 6M steps.

    The study's command (docs/training.md): ``--budget 6000000 --select-every 250000 --select-days 100
    --override env.action_mode=when algo.tau_s=90 "algo.net_arch=[64,64]"``; it trains what the
    composed config says, with the selection on the study's own schedule (the same as here).
    """
    from studies.cgrsp.learning.parity import regime_config

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        long = compose(config_name="config", overrides=["experiment=ppo_jax_long", f"day={day}"])
        main = compose(config_name="config", overrides=["algo=ppo_jax", f"day={day}"])
    study = regime_config(regime, 6_000_000, extra=["env.action_mode=when", "algo.tau_s=90", "algo.net_arch=[64,64]"])
    assert int(long.train.total_timesteps) == 6_000_000 == 2 * int(main.train.total_timesteps)
    assert (long.algo.select_days, long.algo.select_every) == (100, 250_000)  # the study's --select-*
    for k in ("select_days", "select_every"):
        study.algo[k] = long.algo[k]
    assert long.algo == study.algo and long.env == study.env and long.day == study.day
    assert long.algo == main.algo and long.env == main.env and long.day == main.day  # only the budget differs


def test_train_py_selects_on_the_regimes_the_generalist_study_judges():
    """Each algo.select_regimes env is the study's judged env of that regime (the trained design, its stock)."""
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.stock import regime_config
    from studies.cgrsp.learning import generalist

    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=generalist", "run_dir=/tmp/unused"])
    config = env_config(cfg)
    for regime, study_cfg in generalist.regime_configs(1000).items():
        assert regime_config(config, regime) == env_config(study_cfg), regime
