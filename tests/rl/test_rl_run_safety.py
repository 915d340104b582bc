"""A run refuses what it cannot honour: mismatched resumes, bad values (leaving no directory), named setups."""

from pathlib import Path

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import gpu_sched_agents.rl.train as tr
from gpu_sched_agents.rl.config import PPOConfig, register_configs
from gpu_sched_agents.rl.envs import env_config
from gpu_sched_agents.rl.rundir import record_before
from gpu_sched_env.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CONF = str(ROOT / "conf")
register_configs()
TINY = [
    "day=quiet",
    "train.total_timesteps=128",
    "train.n_envs=1",
    "train.eval_freq=128",
    "train.checkpoint_freq=128",
    "train.eval_seeds=[10000]",
    "train.final_eval_seeds=0",
    "train.progress_bar=false",
    "algo.n_steps=64",
    "algo.batch_size=64",
    "algo.n_epochs=1",
    "algo.net_arch=[16]",
]


def cfg_for(*overrides):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


@pytest.mark.e2e
def test_resume_refuses_a_run_trained_under_another_env(tmp_path):
    family = tmp_path / "fam"
    tr.train(cfg_for(*TINY, f"run_dir={family / 't1'}"))
    with pytest.raises(ConfigError, match=r"differing keys: .*env\.") as err:
        tr.train(cfg_for(*TINY, "env=markov", "resume=true", f"run_dir={family / 't2'}"))
    assert "window" in str(err.value)  # names the key and both values
    # the same config, a larger budget: allowed
    tr.train(cfg_for(*TINY, "resume=true", "train.total_timesteps=192", f"run_dir={family / 't3'}"))


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("seed=-1", "seed"),
        ("algo.gamma=1.5", "algo.gamma"),
        ("algo.net_arch=[0]", r"algo.net_arch\[0\]"),
        ("env.order=nope", "order = 'nope'"),
        ("env.shaping_gamma=2", "shaping_gamma"),
    ],
)
def test_bad_values_are_config_errors_and_leave_no_run_directory(tmp_path, override, needle):
    run = tmp_path / "fam" / "run"
    record_before(run)  # what RunDirRecorder does before Hydra makes the folder
    (run / ".hydra").mkdir(parents=True)  # what Hydra writes before the job starts
    (run / "train.log").write_text("")
    with pytest.raises(ConfigError, match=needle):
        tr.train(cfg_for(*TINY, override, f"run_dir={run}"))
    assert not run.exists() and not run.parent.exists()


@pytest.mark.e2e
def test_the_final_evaluation_is_logged_for_train_log(tmp_path, caplog):
    caplog.set_level("INFO", logger="gpu_sched_agents.rl.train")
    tr.train(
        cfg_for(
            *[o for o in TINY if not o.startswith("train.final_eval_seeds")],
            "train.final_eval_seeds=2",
            f"run_dir={tmp_path / 'r'}",
        )
    )
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "final evaluation" in text and "Paired tests" in text


def test_named_setups_compose_to_their_documented_commands():
    main, plain = cfg_for("experiment=main"), cfg_for("algo=ppo", "day=hectic")
    assert OmegaConf.to_container(main, resolve=False) == OmegaConf.to_container(plain, resolve=False)
    markov = cfg_for("experiment=markov")
    env = env_config(markov)
    assert (env.window_by, env.hold, env.reward, env.shaping) == ("class", "stock", "occupancy", "backlog_risk")
    assert env.params["stock_process"] == "markov" and markov.algo.gamma == 0.97 and env.shaping_gamma == 0.97
    assert markov.train.total_timesteps == 400_000
    assert env_config(cfg_for("experiment=markov_fresh")).sim_params().stock_process == "fresh"
    assert cfg_for("experiment=month").day.name == "mixed"
    ch = cfg_for("experiment=class_heads")
    env = env_config(ch)
    assert (env.window, env.window_by, env.order, env.action_mode, env.reward, env.features) == (
        3,
        "class",
        "spt",
        "slot",
        "capacity",
        "model",
    )
    assert (
        env.reward_weights == {"miss": 57600.0}
        and "stock_process" not in env.params
        and ch.train.total_timesteps == 200_000
    )
    jh, jhm = cfg_for("experiment=joint_heads"), cfg_for("experiment=joint_heads_markov")
    for cfg, stock in ((jh, "fresh"), (jhm, "markov")):  # class_heads with every head–slot pair, 1M steps, annealed
        env = env_config(cfg)
        assert (
            env == env_config(ch).replace(action_mode="joint", params=env.params)
            and env.sim_params().stock_process == stock
        )
        assert (cfg.train.total_timesteps, cfg.algo.lr_final_frac, cfg.algo.gamma) == (1_000_000, 0.1, 0.9)
    assert env_config(jhm).params == {"stock_process": "markov", "stock_dwell_s": 900}


def test_the_main_job_shapes_with_the_learners_discount():
    cfg = cfg_for()
    assert env_config(cfg).shaping_gamma == cfg.algo.gamma == PPOConfig.gamma  # one default, in the schema


def test_the_optuna_space_contains_the_shipped_defaults():
    space = yaml.safe_load((ROOT / "conf/hparams_search/ppo_optuna.yaml").read_text())["hydra"]["sweeper"]["params"]
    gammas = [float(x) for x in space["algo.gamma"].removeprefix("choice(").removesuffix(")").split(",")]
    assert PPOConfig.gamma in gammas and cfg_for("experiment=markov").algo.gamma in gammas


def test_a_refused_config_keeps_a_folder_that_existed_before(tmp_path):
    """``hydra.run.dir=DIR/run`` into the caller's own empty DIR: only ``run`` (made by the run) goes."""
    mine = tmp_path / "mine"
    mine.mkdir()
    run = mine / "run"
    record_before(run)
    (run / ".hydra").mkdir(parents=True)
    with pytest.raises(ConfigError, match="seed"):
        tr.train(cfg_for(*TINY, "seed=-1", f"run_dir={run}"))
    assert mine.is_dir() and not run.exists()
    # the run folder itself existed before: Hydra's files go, the folder stays
    record_before(mine)
    (mine / ".hydra").mkdir()
    (mine / "train.log").write_text("")
    with pytest.raises(ConfigError, match="seed"):
        tr.train(cfg_for(*TINY, "seed=-1", f"run_dir={mine}"))
    assert mine.is_dir() and not any(mine.iterdir())


@pytest.mark.e2e
def test_train_py_with_a_refused_config_keeps_the_callers_empty_folder(tmp_path):
    """The negative-seed escape as a user meets it: ``python train.py seed=-1 hydra.run.dir=DIR/run``."""
    import os
    import subprocess
    import sys

    mine = tmp_path / "mine"
    mine.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "train.py", "seed=-1", f"hydra.run.dir={mine / 'run'}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode != 0 and "seed = -1" in out.stderr + out.stdout
    assert mine.is_dir() and not (mine / "run").exists()
