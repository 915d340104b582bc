"""Behaviour-cloning warm start: the policy learns the teacher; bad settings fail clearly."""

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from sb3_contrib import MaskablePPO

from gpu_sched_agents.rl.config import register_configs
from gpu_sched_agents.rl.envs import make_vec_env
from gpu_sched_agents.rl.imitation import collect, pretrain
from gpu_sched_agents.rl.train import validate
from gpu_sched_env.cgrsp.config import as_env_config
from gpu_sched_env.core.errors import ConfigError

CONF = str(Path(__file__).resolve().parents[2] / "conf")
register_configs()
KW = as_env_config({"day": "normal", "window": 4})


def test_collect_records_only_legal_teacher_actions():
    obs, masks, actions = collect("edf", KW, episodes=1)
    assert len(actions) == len(masks) == len(obs["jobs"]) >= 100  # one step per job at least
    assert all(masks[i][a] for i, a in enumerate(actions))


def test_cloning_fits_the_teacher():
    venv = make_vec_env(KW, 1, 0)
    model = MaskablePPO("MultiInputPolicy", venv, seed=0, device="cpu", policy_kwargs={"net_arch": [64, 64]})
    before = pretrain(model, "fifo", KW, episodes=2, epochs=1, seed=0)  # one pass: a weak fit
    after = pretrain(model, "fifo", KW, episodes=2, epochs=25, seed=0)
    assert after["bc_accuracy"] >= 0.9
    assert after["bc_final_loss"] < before["bc_final_loss"]
    venv.close()


@pytest.mark.parametrize(
    "overrides, pattern",
    [
        (["algo.bc_teacher=oracle"], r"algo.bc_teacher = 'oracle' is not known; allowed: fifo"),
        (["algo=dqn", "algo.bc_teacher=rh"], None),
        (["algo=dqn", "+algo.bc_teacher=rh"], r"behaviour cloning is implemented for algo=ppo only"),
        (["algo.bc_teacher=rh", "algo.bc_episodes=0"], r"algo.bc_episodes = 0 is out of range"),
    ],
)
def test_bad_cloning_settings(overrides, pattern):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        if pattern is None:  # DQNConfig has no bc_teacher key: the schema rejects it
            with pytest.raises(Exception, match="bc_teacher"):
                compose(config_name="config", overrides=[*overrides, "run_dir=/tmp/x"])
            return
        cfg = compose(config_name="config", overrides=[*overrides, "run_dir=/tmp/x"])
    with pytest.raises(ConfigError, match=pattern):
        validate(cfg)
