"""The env's one config object, its Hydra schema, its migration, and the shaping discount."""

from __future__ import annotations

import dataclasses
from typing import get_args

import numpy as np
import pytest
from omegaconf import OmegaConf

from gpu_sched_env.cgrsp.config import (
    REWARD_PARTS,
    ActionMode,
    CGRSPEnvConfig,
    Order,
    Shaping,
    as_env_config,
    env_config_of,
    hydra_schema,
    migrate_env_section,
)
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.obs import ORDERS
from gpu_sched_env.cgrsp.rewards import REWARD_PRESETS, SHAPING_TERMS
from gpu_sched_env.cgrsp.schemes import ACTION_SCHEMES
from gpu_sched_env.core.errors import ConfigError


def test_defaults_live_in_one_place():
    env = CGRSPEnv()
    assert env.config == CGRSPEnvConfig()
    schema = OmegaConf.structured(hydra_schema())
    for f in dataclasses.fields(CGRSPEnvConfig):
        if f.name not in ("day", "illegal_action"):
            assert (
                OmegaConf.to_container(schema)[f.name]
                == OmegaConf.to_container(OmegaConf.create({"x": getattr(CGRSPEnvConfig(), f.name)}))["x"]
            ), f.name
    assert "day" not in schema  # the day comes from Hydra's day group
    assert "illegal_action" not in schema  # the agents' envs are strict, whatever a config would say


def test_the_literal_types_are_the_tables_the_code_uses():
    assert CGRSPEnvConfig.__dataclass_fields__["reward"].type == "str"  # no second list: checked against the table
    with pytest.raises(ConfigError, match="reward = 'nope'.*" + ".*".join(REWARD_PRESETS)):
        CGRSPEnvConfig(reward="nope")
    assert set(get_args(Shaping)) == set(SHAPING_TERMS)
    assert set(ACTION_SCHEMES) == set(get_args(ActionMode)) == {"joint", "slot", "joint_hold", "when"}
    assert ORDERS == get_args(Order)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"order": "nope"}, "order = 'nope'"),
        ({"window": 0}, "window"),
        ({"hold": "stock"}, "hold = 'stock' needs action_mode = 'slot'"),
        ({"shaping_gamma": 1.5}, "shaping_gamma"),
        ({"reward_weights": {"bogus": 1.0}}, "bogus"),
        ({"reward_weights": {"miss": -1.0}}, "reward_weights.miss"),
        ({"slot_rows": 3}, "slot_rows"),
        ({"params": {"c_max": 0}}, "c_max"),
        ({"params": 5}, "params = 5"),
    ],
)
def test_every_bad_setting_is_a_config_error_naming_it(kwargs, needle):
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        CGRSPEnvConfig(**kwargs)


def test_keywords_split_into_settings_and_simulator_parameters():
    cfg = CGRSPEnvConfig.from_kwargs(day="surge", window=np.int64(3), c_max=7, tight_fraction=0.3)
    assert cfg.window == 3 and type(cfg.window) is int
    assert cfg.params == {"c_max": 7, "tight_fraction": 0.3}
    env = CGRSPEnv(cfg, window=2)  # a keyword changes the given config
    assert env.window == 2 and env.params.c_max == 7
    assert as_env_config({"day": "quiet"}).day == "quiet"
    with pytest.raises(ConfigError, match="must be a CGRSPEnvConfig"):
        CGRSPEnv({"day": "quiet"})  # a mapping is not a config: keywords or a config


def test_a_run_config_of_the_first_version_migrates_explicitly():
    old = {
        "window": 1,
        "order": "deadline",
        "action_mode": "slot",
        "reward": "capacity",
        "reward_weights": {},
        "shaping": "none",
        "reward_scale": 1 / 3600,
        "slot_rows": 10,
        "params": {},
    }
    migrated = migrate_env_section(old)
    assert (migrated["window_by"], migrated["hold"], migrated["shaping_gamma"]) == ("order", "event", 1.0)
    cfg = env_config_of(OmegaConf.create(old), "hectic")
    assert cfg.window == 1 and cfg.shaping_gamma == 1.0
    with pytest.raises(ConfigError, match="unknown key"):
        env_config_of({**old, "windw": 3}, "hectic")


def _shaping_sums(gamma: float, seed: int = 3) -> tuple[float, float, float]:
    """(Σ_t γ^t·shaping_t, −scale·Φ(s_0), Σ_t shaping_t) of one random-policy day."""
    env = CGRSPEnv(
        day="hectic",
        n_jobs=120,
        action_mode="slot",
        window=1,
        reward="occupancy",
        shaping="backlog_risk",
        shaping_gamma=gamma,
    )
    env.reset(seed=seed)
    phi0 = env.ledger._phi  # Φ(s_0) at the first decision point [weighted units]
    rng = np.random.default_rng(0)
    disc = plain = 0.0
    k, done = 0, False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        _, _, done, _, info = env.step(int(rng.choice(legal)))
        f = info["reward_parts"]["shaping"]
        disc += gamma**k * f
        plain += f
        k += 1
    return disc, -env.reward_scale * phi0, plain


@pytest.mark.parametrize("gamma", [0.9, 0.99, 1.0])
def test_the_shaping_term_telescopes_with_the_learners_discount(gamma):
    """F = γΦ′ − Φ with Φ(end) = 0: Σ_t γ^t F_t = −Φ(s_0) for any policy (Ng et al. 1999)."""
    disc, want, plain = _shaping_sums(gamma)
    assert want != 0.0
    assert disc == pytest.approx(want, rel=1e-9, abs=1e-9)
    if gamma < 1.0:  # the undiscounted sum is then not −Φ(s_0): the γ really enters
        assert abs(plain - want) > 1e-6 * abs(want)


def test_reward_parts_are_one_tuple():
    assert REWARD_PARTS == ("wait", "miss", "cost", "waste", "run", "delay", "excess_run", "order_regret")
