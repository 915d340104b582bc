"""Training envs: disjoint seed spaces, day mixes, the named markov setup."""

import numpy as np
import pytest
from scipy import stats

from gpu_sched_agents.rl.envs import (
    SELECTION_SEEDS,
    TEST_SEEDS,
    TRAIN_SEEDS,
    TrainingDays,
    env_config,
    training_seeds,
)
from gpu_sched_agents.rl.train import validate
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.core.errors import ConfigError
from tests.hydra_conf import cfg_for


# ----------------------------------------------------------------------------- seed spaces
@pytest.mark.parametrize("seed", [0, 1, 10, 20, 30, 999, 20_000, 2**31 - 2])
def test_training_days_never_coincide_with_selection_or_test_seeds(seed):
    for i in range(3):
        days = training_seeds(seed, 500, env_index=i)
        assert all(TRAIN_SEEDS.start <= d < TRAIN_SEEDS.stop for d in days)
        assert not set(days) & (set(SELECTION_SEEDS) | set(TEST_SEEDS))
    assert training_seeds(seed, 20, 0) == training_seeds(seed, 20, 0)  # reproducible
    assert training_seeds(seed, 20, 0) != training_seeds(seed, 20, 1)  # one stream per env


def test_training_envs_play_exactly_the_training_days():
    env = TrainingDays(CGRSPEnv(day="quiet", window=4), seed=7, env_index=1)
    played = []
    for _ in range(3):
        env.reset()
        played.append(env.unwrapped.run_seed)
    assert played == training_seeds(7, 3, env_index=1)


@pytest.mark.parametrize(
    "override, pattern",
    [
        ("train.eval_seeds=[20000]", "train.eval_seeds"),
        ("train.eval_seeds=[5]", "train.eval_seeds"),
        ("train.final_eval_seeds=10001", "train.final_eval_seeds"),
        ("train.vec_env=threads", "train.vec_env"),
        ("env.action_mode=pairs", "action_mode"),
        ("env.shaping=potential", "shaping"),
        ("env.reward=fast", "reward"),
    ],
)
def test_bad_seed_spaces_and_choices_fail_validation(override, pattern):
    with pytest.raises(ConfigError, match=pattern):
        validate(cfg_for(override))


def test_time_discounting_is_ppo_only():
    with pytest.raises(ConfigError, match="time_halflife_s"):
        validate(cfg_for("algo=ppo_unmasked", "algo.time_halflife_s=60"))
    validate(cfg_for("algo=ppo", "algo.time_halflife_s=60"))


@pytest.mark.parametrize("frac", ["0", "-0.5", "1.5"])
def test_learning_rate_decay_outside_0_1_fails_validation(frac):
    with pytest.raises(ConfigError, match=r"algo.lr_final_frac = .*" + frac.lstrip("-")):
        validate(cfg_for(f"algo.lr_final_frac={frac}"))


def test_learning_rate_decays_linearly_to_its_final_fraction():
    """SB3 calls the schedule with the progress remaining (1 at the start, 0 at the end)."""
    from stable_baselines3.common.utils import LinearSchedule

    from gpu_sched_agents.rl.registry import _sb3_kwargs

    kw = _sb3_kwargs(cfg_for("algo.learning_rate=0.001", "algo.lr_final_frac=0.1").algo)
    lr = kw["learning_rate"]
    assert isinstance(lr, LinearSchedule) and "lr_final_frac" not in kw
    assert lr(1.0) == pytest.approx(1e-3) and lr(0.5) == pytest.approx(5.5e-4) and lr(0.0) == pytest.approx(1e-4)
    assert _sb3_kwargs(cfg_for("algo.learning_rate=0.001").algo)["learning_rate"] == 0.001  # default: constant


# ----------------------------------------------------------------------------- mixed days
def test_mixed_days_follow_the_month_mix():
    from gpu_sched_agents.rl.envs import MixedDays
    from gpu_sched_env.cgrsp.workload import DEFAULT_MONTH_MIX

    env = MixedDays(CGRSPEnvConfig(window=1, action_mode="slot", slot_rows=10), seed=0, env_index=0)
    n = 600
    days = []
    for s in range(n):
        env.reset(seed=s)
        days.append(env.unwrapped.day)
    total = sum(DEFAULT_MONTH_MIX.values())
    for day, k in DEFAULT_MONTH_MIX.items():
        p = k / total
        assert abs(days.count(day) / n - p) < 4 * np.sqrt(p * (1 - p) / n), day


def test_mixed_days_follow_a_given_day_mix():
    from gpu_sched_agents.rl.envs import MixedDays

    env = MixedDays(CGRSPEnvConfig(window=1, action_mode="slot", slot_rows=10), 0, 0, days={"surge": 3, "quiet": 1})
    days = []
    for s in range(400):
        env.reset(seed=s)
        days.append(env.unwrapped.day)
    assert set(days) == {"surge", "quiet"}  # a type without weight is never drawn
    assert stats.binomtest(days.count("surge"), len(days), 0.75).pvalue > 1e-3


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (["day=mixed", "day.day_mix={busy:1}"], r"day.day_mix: 'busy' is not a day type; allowed: quiet"),
        (["day=mixed", "day.day_mix={hectic:-1}"], r"day.day_mix: weight of hectic = -1; allowed: a number >= 0"),
        (["day=mixed", "day.day_mix=[1,2]"], r"day.day_mix = \[1, 2\]: give day type → weight"),
        (["day=hectic", "day.day_mix={hectic:1}"], r"a day mix is for day=mixed only"),
    ],
)
def test_bad_day_mix_is_refused_before_anything_is_written(tmp_path, overrides, match):
    import gpu_sched_agents.rl.train as tr

    run = tmp_path / "r"
    with pytest.raises(ConfigError, match=match):
        tr.train(cfg_for(*overrides, f"run_dir={run}"))
    assert not run.exists()


@pytest.mark.e2e
def test_env_markov_config_builds_the_persistent_stock_design_and_trains(tmp_path):
    """``experiment=markov``: the options the persistent-stock result rests on, end to end."""
    import gpu_sched_agents.rl.train as tr

    cfg = cfg_for("experiment=markov")
    env = CGRSPEnv(env_config(cfg))
    assert (env.window, env.window_by, env.order, env.action_mode, env.hold) == (3, "class", "spt", "slot", "stock")
    assert (env.reward, env.shaping) == ("occupancy", "backlog_risk")
    assert env.params.stock_process == "markov" and env.params.stock_dwell_s == 900.0
    assert env.reward_weights["miss"] == env.objective_weights["miss"] == 14400.0  # trained and selected on
    assert env.action_space.n == 4
    run = tmp_path / "run"
    cfg = cfg_for(
        "experiment=markov",
        "+env.params.n_jobs=100",  # short days (as the mixed-day run of the generalise study): only files are asserted
        "train.total_timesteps=128",
        "train.eval_freq=128",
        "train.checkpoint_freq=128",
        "train.eval_seeds=[10000]",
        "train.final_eval_seeds=2",
        "train.progress_bar=false",
        "algo.n_steps=64",
        "algo.batch_size=64",
        "algo.n_epochs=1",
        "algo.net_arch=[16]",
        f"run_dir={run}",
    )
    tr.train(cfg)
    assert (run / "final_eval.csv").exists() and (
        run / "checkpoints"
    ).is_dir()  # checkpoints pickle the env (no lambdas)
