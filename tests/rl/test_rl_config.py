"""Hydra composition of every config, and bad overrides failing before training."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from omegaconf.errors import ConfigKeyError, ValidationError

from gpu_sched_agents.rl.config import register_configs
from gpu_sched_agents.rl.registry import ALGOS
from gpu_sched_agents.rl.train import validate
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.core.errors import ConfigError

CONF = str(Path(__file__).resolve().parents[2] / "conf")
register_configs()


def cfg_for(*overrides):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=False)


@pytest.mark.parametrize("algo", sorted(ALGOS))
@pytest.mark.parametrize("day", ["quiet", "normal", "hectic", "surge"])
def test_every_algo_day_composes_and_validates(algo, day):
    cfg = cfg_for(f"algo={algo}", f"day={day}", "run_dir=/tmp/x")
    assert cfg.algo.name == algo and cfg.day.name == day
    config = validate(cfg)
    assert config.day == day and config.window == cfg.env.window


def test_algo_groups_match_the_registry():
    options = {p.stem for p in (Path(CONF) / "algo").glob("*.yaml")}
    assert options == set(ALGOS)


@pytest.mark.parametrize(
    "override, exc, pattern",
    [
        ("algo.lr=0.1", (ConfigCompositionException, ConfigKeyError), "lr"),
        ("algo.n_steps=many", (ConfigCompositionException, ValidationError), "n_steps"),
        ("train.total_timestep=5", (ConfigCompositionException, ConfigKeyError), "total_timestep"),
        ("algo=a2c", ConfigCompositionException, "a2c"),
        ("day=busy", ConfigCompositionException, "busy"),
        ("env.window=ten", (ConfigCompositionException, ValidationError), "window"),
    ],
)
def test_bad_overrides_fail_at_composition(override, exc, pattern):
    with pytest.raises(exc, match=pattern):
        cfg_for(override)


@pytest.mark.parametrize(
    "override, pattern",
    [
        ("train.n_envs=0", r"train.n_envs = 0 is out of range"),
        ("train.vec_env=ray", None),
        ("+env.params.c_maxx=3", r"unknown CGRSP parameters: c_maxx"),
        ("+env.params.tight_fraction=2.0", r"tight_fraction = 2.0 is out of range"),
        ("env.order=random", r"order = 'random' is not known"),
        ("train.eval_seeds=[]", r"train.eval_seeds = \[\]"),
    ],
)
def test_bad_values_fail_validation_with_the_key(override, pattern):
    cfg = cfg_for(override, "run_dir=/tmp/x")
    if pattern is None:  # vec_env is checked when the envs are built
        from gpu_sched_agents.rl.envs import make_vec_env

        with pytest.raises(ConfigError, match=r"train.vec_env = 'ray' is not known; allowed: dummy, subproc"):
            make_vec_env(CGRSPEnvConfig(day="quiet"), 1, 0, cfg.train.vec_env)
        return
    with pytest.raises(ConfigError, match=pattern):
        validate(cfg)
