"""Every env takes one frozen config object (or the keywords that build it), checked once.

The escapes closed: a bad value names the keyword, the value and what is allowed, and is
refused before an env exists.
"""

import dataclasses

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.edge.config import EdgeBatchEnvConfig
from gpu_sched_env.hgsp.config import HGSPEnvConfig
from gpu_sched_env.llm.config import LLMServeEnvConfig
from gpu_sched_env.mig.config import MIGEnvConfig
from gpu_sched_env.mig.workload import mig_dataset

# env id -> (config class, small settings, one setting changed by replace)
CASES = {
    "HGSP-v0": (HGSPEnvConfig, {"n_tasks": 12, "cluster": "medium"}, {"decoder": "release"}),
    "LLMServe-v0": (LLMServeEnvConfig, {"n_requests": 12, "engine": "event"}, {"dt": 0.02}),
    "MIG-v0": (MIGEnvConfig, {"n_jobs": 12, "poll_interval": 2}, {"capacities": (40000, 20000)}),
    "EdgeBatch-v0": (EdgeBatchEnvConfig, {"n_tasks": 6, "split": False}, {"reward_scale_s": 60.0}),
}


def rollout(env, seed=0):
    obs, _ = env.reset(seed=seed)
    out = [np.ravel(obs)]
    done = False
    while not done:
        obs, r, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        out.append(np.append(np.ravel(obs), r))
    return out


@pytest.mark.parametrize("env_id", CASES)
def test_a_config_object_and_its_keywords_make_the_same_env(env_id):
    cls, kw, _ = CASES[env_id]
    cfg = cls(**kw)
    by_kw = gym.make(env_id, **kw).unwrapped
    by_cfg = gym.make(env_id, config=cfg).unwrapped
    assert isinstance(by_kw.config, cls) and by_cfg.config is cfg
    a, b = rollout(by_kw), rollout(by_cfg)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("env_id", CASES)
def test_config_is_frozen_replace_checks_again_and_config_plus_keywords_is_refused(env_id):
    cls, kw, change = CASES[env_id]
    cfg = cls(**kw)
    name = next(iter(change))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cfg, name, change[name])
    new = cfg.replace(**change)
    assert getattr(new, name) == change[name] or tuple(getattr(new, name)) == tuple(change[name])
    with pytest.raises(ConfigError, match=rf"config and keywords \['{name}'\] are both given"):
        gym.make(env_id, config=cfg, **change)
    with pytest.raises(ConfigError, match=rf"config = 3 is not allowed for {env_id}; allowed: a {cls.__name__}"):
        gym.make(env_id, config=3)
    with pytest.raises(ConfigError, match=r"unknown .* arguments: bogus; allowed: .*" + next(iter(kw))):
        gym.make(env_id, bogus=1)


def test_hgsp_empty_task_table_names_the_keyword_value_and_what_is_allowed():
    with pytest.raises(
        ConfigError,
        match=r"^tasks = <DataFrame of shape \(0, 0\)> is empty; allowed: a preset name "
        r"\(tasks1, .*\), a CSV path, or a DataFrame or TaskSet with the columns",
    ):
        gym.make("HGSP-v0", tasks=pd.DataFrame())
    with pytest.raises(ConfigError, match=r"^tasks = <DataFrame of shape \(1, 1\)>: .*missing column.*; allowed:"):
        gym.make("HGSP-v0", tasks=pd.DataFrame({"a": [1]}))
    with pytest.raises(ConfigError, match=r"^tasks = 3 \(int\) is not allowed; allowed: a preset name"):
        gym.make("HGSP-v0", tasks=3)


def test_mig_empty_jobs_names_the_keyword_value_and_what_is_allowed():
    with pytest.raises(
        ConfigError,
        match=r"^jobs = \[\] is empty; allowed: a non-empty sequence of "
        r"gpu_sched_env.mig.model.Job, or None",
    ):
        gym.make("MIG-v0", jobs=[])
    jobs = mig_dataset(0, 5)
    with pytest.raises(ConfigError, match=r"^jobs = .*: entry 1 is a str; allowed: a non-empty sequence"):
        gym.make("MIG-v0", jobs=[jobs[0], "x"])
    env = gym.make("MIG-v0", jobs=jobs).unwrapped  # a real job list is taken, as a tuple in the config
    assert env.config.jobs == tuple(jobs)
    with pytest.raises(ConfigError, match=r"generator config mapping is the keyword generator="):
        gym.make("MIG-v0", config={"numberOfJobs": 5})


def test_edge_unknown_profile_table_names_the_keyword_value_and_what_is_allowed():
    with pytest.raises(
        ConfigError,
        match=r"^profiles = 'jetson9': profile table path 'jetson9' does not exist .*; "
        r"allowed: None \(the default table\), a path to an existing",
    ):
        gym.make("EdgeBatch-v0", profiles="jetson9")
    with pytest.raises(ConfigError, match=r"^profiles = 9 \(int\) is not allowed; allowed: None"):
        gym.make("EdgeBatch-v0", profiles=9)


def test_llm_empty_request_table_names_the_keyword():
    with pytest.raises(
        ConfigError,
        match=r"^workload = <DataFrame of shape \(0, 0\)> is empty; allowed: 'discriminating', 'mixed', a Workload",
    ):
        gym.make("LLMServe-v0", workload=pd.DataFrame())


@pytest.mark.parametrize(
    "bad", [{"tasks": pd.DataFrame()}, {"jobs": []}, {"profiles": "jetson9"}], ids=["hgsp", "mig", "edge"]
)
def test_refused_settings_write_nothing(bad, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env_id = {"tasks": "HGSP-v0", "jobs": "MIG-v0", "profiles": "EdgeBatch-v0"}[next(iter(bad))]
    with pytest.raises(ConfigError):
        gym.make(env_id, **bad)
    assert list(tmp_path.iterdir()) == []
