"""The programme's cells (studies.cgrsp.programme.grids): the stock model and each policy's knobs reach them."""

import pytest

from gpu_sched_env.cgrsp.policies import per_policy_kwargs
from gpu_sched_env.core.errors import ConfigError
from studies.cgrsp.programme.grids import build_cells, configure


def test_stock_parameters_reach_the_env_hydra_and_the_experiments(tmp_path):
    from hydra import compose, initialize_config_dir

    from gpu_sched_agents.rl.compose import CONF
    from gpu_sched_agents.rl.config import register_configs
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    assert CGRSPEnv(stock_process="markov", stock_dwell_s=60).params.stock_dwell_s == 60
    register_configs()
    conf = str(CONF)
    with initialize_config_dir(config_dir=conf, version_base="1.3"):
        cfg = compose(
            config_name="config", overrides=["+env.params.stock_process=markov", "+env.params.stock_dwell_s=300"]
        )
    assert CGRSPEnv(env_config(cfg)).params.stock_process == "markov"
    cells = build_cells(configure("stock", seeds=[0], days=["surge"], policies=["edf", "edf_defer_low"]))
    got = {(c["labels"]["stock"], c["params"].get("stock_process"), c["params"].get("stock_dwell_s")) for c in cells}
    assert got == {
        ("fresh", "fresh", None),
        ("60", "markov", 60.0),
        ("300", "markov", 300.0),
        ("900", "markov", 900.0),
        ("3600", "markov", 3600.0),
    }
    with pytest.raises(ConfigError, match="stock = '30' is not known"):
        configure("stock", values=["30"])
    v = configure("validation", base_params={"stock_process": "markov", "stock_dwell_s": 300.0})
    assert build_cells(v)[0]["params"] == {"stock_process": "markov", "stock_dwell_s": 300.0}


def test_experiments_give_each_cell_its_own_policys_knobs():
    exp = configure(
        "validation", policies=["fifo", "spt_rescue", "rh"], seeds=[0], base_params={"theta": 300.0, "n_jobs": 40}
    )
    cells = {c["policy"]: c["params"] for c in build_cells(exp)}
    assert cells == {"fifo": {"n_jobs": 40}, "spt_rescue": {"n_jobs": 40, "theta": 300.0}, "rh": {"n_jobs": 40}}
    with pytest.raises(ConfigError, match="theta is a knob of spt_rescue, adaptive"):
        configure("validation", policies=["fifo", "rh"], base_params={"theta": 300.0})
    assert per_policy_kwargs("hectic", {"c_max": 3, "cr_star": 2.0}, ["cadr", "edf"]) == {
        "cadr": {"c_max": 3, "cr_star": 2.0},
        "edf": {"c_max": 3},
    }
