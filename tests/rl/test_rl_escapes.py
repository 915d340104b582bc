"""Training escapes closed: each refused with a ConfigError before anything is written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch as th

import gpu_sched_agents.rl.train as tr
from gpu_sched_agents.rl.envs import env_config
from gpu_sched_agents.rl.rundir import record_before
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import FILE_MODE, atomic_write_text
from tests.rl.test_rl_run_safety import TINY, cfg_for


def _hydra_leftovers(run: Path) -> None:
    record_before(run)  # what RunDirRecorder does before Hydra makes the folder
    (run / ".hydra").mkdir(parents=True)  # what Hydra writes before the job starts
    (run / "train.log").write_text("")


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("algo.batch_size=0", r"algo.batch_size = 0 is out of range"),
        ("algo.batch_size=1", r"algo.batch_size = 1 is out of range; allowed: \[2, inf\]"),
        ("algo.n_steps=0", r"algo.n_steps = 0 is out of range"),
        ("algo.n_epochs=0", r"algo.n_epochs = 0 is out of range"),
        ("algo.gae_lambda=2.0", r"algo.gae_lambda = 2.0 is out of range; allowed: \[0, 1\]"),
        ("algo.clip_range=-1", r"algo.clip_range = -1.0 is out of range; allowed: \(0, inf\]"),
        ("algo.ent_coef=-5", r"algo.ent_coef = -5.0 is out of range"),
        ("algo.vf_coef=-1", r"algo.vf_coef"),
        ("algo.max_grad_norm=0", r"algo.max_grad_norm"),
        ("algo.n_steps=1", r"algo.n_steps = 1 with train.n_envs = 1"),
        ("env.c_max=0", r"c_max = 0 is out of range"),
        ("env.stock_process=nope", r"stock_process"),
    ],
)
def test_bad_training_values_are_refused_before_the_run_folder(tmp_path, override, needle):
    run = tmp_path / "fam" / "run"
    _hydra_leftovers(run)
    with pytest.raises(ConfigError, match=needle):
        tr.train(cfg_for(*TINY, override, f"run_dir={run}"))
    assert not run.exists() and not run.parent.exists()


@pytest.mark.parametrize(
    "override",
    ["algo=dqn", "algo=dqn algo.train_freq=0", "algo=dqn algo.tau=0", "algo=dqn algo.exploration_final_eps=2"],
)
def test_dqn_ranges(override):
    parts = override.split()
    if len(parts) == 1:
        tr.validate(cfg_for(*parts))  # the shipped defaults pass
    else:
        with pytest.raises(ConfigError, match=parts[1].split("=")[0]):
            tr.validate(cfg_for(*parts))


def test_a_refused_resume_leaves_no_run_folder(tmp_path):
    run = tmp_path / "fam" / "run"
    _hydra_leftovers(run)
    with pytest.raises(ConfigError, match="resume=true but no earlier run"):
        tr.train(cfg_for(*TINY, "resume=true", f"run_dir={run}"))
    assert not run.exists() and not run.parent.exists()
    with pytest.raises(ConfigError, match="resume_from"):
        _hydra_leftovers(run)
        tr.train(cfg_for(*TINY, "resume=true", f"resume_from={tmp_path / 'nowhere'}", f"run_dir={run}"))
    assert not run.exists()


@pytest.mark.skipif(th.cuda.is_available(), reason="this torch has CUDA")
def test_cuda_on_a_cpu_only_torch_is_refused(tmp_path):
    run = tmp_path / "fam" / "run"
    _hydra_leftovers(run)
    with pytest.raises(ConfigError, match=r"train.device = 'cuda' but this torch .* sees no CUDA device"):
        tr.train(cfg_for(*TINY, "train.device=cuda", f"run_dir={run}"))
    assert not run.exists()
    with pytest.raises(ConfigError, match="not a torch device"):
        tr.validate(cfg_for("train.device=gpu"))
    assert tr.check_device("auto") == "auto" and tr.check_device("cpu") == "cpu"


def test_common_simulator_parameters_on_the_command_line():
    env = env_config(cfg_for("env.c_max=7", "env.stock_process=markov", "env.stock_dwell_s=300", "env.alpha2=50"))
    assert env.params == {"c_max": 7, "stock_process": "markov", "stock_dwell_s": 300.0, "alpha2": 50.0}
    assert env.sim_params().c_max == 7
    assert env_config(cfg_for("env.c_max=7", "+env.params.c_max=7")).params == {"c_max": 7}
    with pytest.raises(ConfigError, match="env.c_max = 6 and env.params.c_max = 7 disagree"):
        env_config(cfg_for("env.c_max=6", "+env.params.c_max=7"))
    assert env_config(cfg_for()).params == {}  # unset: the day's values


@pytest.mark.e2e
def test_run_files_have_normal_permissions_and_train_log_holds_progress(tmp_path, caplog):
    caplog.set_level("INFO")
    run = tmp_path / "r"
    tr.train(
        cfg_for(
            *[o for o in TINY if not o.startswith("train.final_eval_seeds")],
            "train.final_eval_seeds=2",
            f"run_dir={run}",
        )
    )
    for name in (
        "config.yaml",
        "command.txt",
        "best.json",
        "final_eval.csv",
        "final_eval.md",
        "final_eval.png",
        "learning_curve.csv",
    ):
        mode = stat.S_IMODE(os.stat(run / name).st_mode)
        assert mode == FILE_MODE, f"{name}: {oct(mode)}"
    assert not list(run.glob(".*.tmp"))  # no temporary file left behind
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "training ppo on quiet for 128 steps" in text
    assert "step 128/128: held-out" in text and "objective" in text  # the evaluations, not only the final one


def test_atomic_writes_get_the_umask_mode(tmp_path):
    p = atomic_write_text(tmp_path / "x.txt", "hi\n")
    assert stat.S_IMODE(p.stat().st_mode) == FILE_MODE
    assert FILE_MODE == 0o666 & ~_current_umask()


def _current_umask() -> int:
    m = os.umask(0o022)
    os.umask(m)
    return m


def test_a_run_written_before_the_command_line_parameters_still_resumes(tmp_path):
    """Its config.yaml lacks env.c_max & co.; unset (None) now matches absent then, a value does not."""
    from omegaconf import OmegaConf

    from gpu_sched_env.cgrsp.config import COMMAND_LINE_PARAMS

    cfg = cfg_for(*TINY, f"run_dir={tmp_path / 'new'}")
    old = OmegaConf.to_container(cfg, resolve=True)
    for name in COMMAND_LINE_PARAMS:
        del old["env"][name]
    (tmp_path / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(old)))
    tr.check_same_run(cfg, tmp_path)  # no difference
    with pytest.raises(ConfigError, match=r"env.c_max: '<absent>' in the run, 7 now"):
        tr.check_same_run(cfg_for(*TINY, "env.c_max=7", f"run_dir={tmp_path / 'new'}"), tmp_path)
