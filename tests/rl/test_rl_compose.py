"""gpu_sched_agents.rl.compose: train.py's config composed over the checkout's conf/, refused without it."""

from pathlib import Path

import pytest

from gpu_sched_agents.rl import compose
from gpu_sched_env.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_compose_reads_the_checkouts_conf_and_refuses_without_it(tmp_path, monkeypatch):
    assert compose.CONF == ROOT / "conf" and compose.conf_dir() == ROOT / "conf"
    cfg = compose.compose_config("day=surge", "run_dir=/tmp/x")
    assert cfg.day.name == "surge" and cfg.scenario.name == "cgrsp"
    assert compose.composed_env("normal", "env=markov").day == "normal"  # train.py's env config of that day
    # an installed package without its checkout: no conf/ beside it
    monkeypatch.setattr(compose, "CONF", tmp_path / "conf")
    with pytest.raises(ConfigError, match=r"conf = '.*/conf': no conf/config.yaml there; .* needs the repository"):
        compose.compose_config("day=surge")
    (tmp_path / "conf").mkdir()  # an empty folder is no config either
    with pytest.raises(ConfigError, match="no conf/config.yaml there"):
        compose.composed_env("hectic")
