"""Tiny sweeps run as a user would: ``python train.py -m hparams_search=ppo_optuna ...``.

Optuna (hydra-optuna-sweeper) minimises the best held-out *selection* objective of each trial;
``hydra/launcher=ray`` (hydra-ray-launcher) runs the trials as Ray tasks on a local Ray.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

pytest.importorskip("hydra_plugins.hydra_optuna_sweeper")

ROOT = Path(__file__).resolve().parents[2]
SELECTION_SEED = 10003
TINY = [
    "day=quiet",
    "train.total_timesteps=256",
    "train.n_envs=2",
    "train.eval_freq=128",
    "train.checkpoint_freq=128",
    f"train.eval_seeds=[{SELECTION_SEED}]",
    "train.final_eval_seeds=0",
    "train.progress_bar=false",
    "env.window=4",
    # fixed on the command line, so Optuna drops them from the space (a short rollout)
    "algo.n_steps=64",
    "algo.batch_size=64",
]
SPACE = OmegaConf.load(ROOT / "conf" / "hparams_search" / "ppo_optuna.yaml").hydra.sweeper.params
SAMPLED = set(SPACE) - {"algo.n_steps", "algo.batch_size"}


def sweep(sweep_dir, *overrides, timeout=600):
    """Run a 2-trial Optuna study of train.py in a subprocess; return (process, its output)."""
    cmd = [
        sys.executable,
        "train.py",
        "-m",
        "hparams_search=ppo_optuna",
        "hydra.sweeper.n_trials=2",
        "hydra.sweeper.n_jobs=2",
        *TINY,
        f"hydra.sweep.dir={sweep_dir}",
        *overrides,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-4000:]
    return proc, out


def jobs(sweep_dir):
    return sorted(sweep_dir.glob("*/job.json"))


def check_study(sweep_dir):
    """Both trials trained with sampled values; the study's best is the best selection objective."""
    results = OmegaConf.load(sweep_dir / "optimization_results.yaml")
    assert set(results.best_params) == SAMPLED
    assert len(jobs(sweep_dir)) == 2
    values = []
    for job in jobs(sweep_dir):
        run = job.parent
        cfg = OmegaConf.load(run / "config.yaml")  # what the trial actually trained with
        assert 1e-5 <= cfg.algo.learning_rate <= 1e-3 and 1e-4 <= cfg.algo.ent_coef <= 3e-2
        assert list(cfg.algo.net_arch) in ([64, 64], [128, 128], [256, 256])
        assert cfg.algo.n_steps == 64 and list(cfg.train.eval_seeds) == [SELECTION_SEED]
        assert not (run / "final_eval.csv").exists()  # the test seeds are never looked at
        info = json.loads(job.read_text())
        assert info["objective"] == json.loads((run / "best.json").read_text())["objective"]
        values.append(info["objective"])
    assert results.best_value == pytest.approx(min(values), rel=1e-12)
    trials = pd.read_csv(sweep_dir / "trials.csv")
    assert list(trials.job_num) == [0, 1] and sorted(trials.objective) == pytest.approx(sorted(values))
    return results, [json.loads(j.read_text()) for j in jobs(sweep_dir)]


@pytest.mark.e2e
def test_optuna_study_minimises_the_selection_objective(tmp_path):
    from gpu_sched_agents.rl.envs import env_config, evaluate_model
    from gpu_sched_agents.rl.registry import get_algo

    sweep_dir = tmp_path / "sweep"
    _, out = sweep(sweep_dir)
    assert "Sampler: TPESampler" in out and "Directions: ['minimize']" in out
    results, infos = check_study(sweep_dir)
    assert all(i["ray_task_id"] is None for i in infos)  # the basic launcher: no Ray
    # The best value is the best model's mean objective on the selection seed, recomputed here.
    best = min(infos, key=lambda i: i["objective"])
    run = next(p.parent for p in jobs(sweep_dir) if json.loads(p.read_text())["job_num"] == best["job_num"])
    cfg = OmegaConf.load(run / "config.yaml")
    spec = get_algo("ppo")
    model = spec.cls.load(run / "best_model.zip", device="cpu")
    df = evaluate_model(model, env_config(cfg), [SELECTION_SEED], spec.masked_env)
    assert float(df["objective"].mean()) == pytest.approx(results.best_value, rel=1e-9)


@pytest.mark.slow
def test_ray_launcher_runs_trials_as_ray_tasks(tmp_path):
    pytest.importorskip("hydra_plugins.hydra_ray_launcher")
    sweep_dir = tmp_path / "sweep"
    proc, out = sweep(
        sweep_dir,
        "hydra/launcher=ray",
        "+hydra.launcher.ray.init.num_cpus=2",
        "+hydra.launcher.ray.init.include_dashboard=false",
    )
    assert "Ray Launcher is launching 2 jobs" in out
    _, infos = check_study(sweep_dir)
    task_ids = {i["ray_task_id"] for i in infos}
    pids = {i["pid"] for i in infos}
    assert None not in task_ids and len(task_ids) == 2
    assert len(pids) == 2 and proc.pid not in pids  # two Ray workers, not the driver


def compose_hydra(*overrides):
    from hydra import compose, initialize_config_dir

    from gpu_sched_agents.rl.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=True)


def test_search_config_composes_and_validates():
    from gpu_sched_agents.rl.train import validate

    cfg = compose_hydra("hparams_search=ppo_optuna", "run_dir=/tmp/x")
    assert cfg.hydra.sweeper._target_.endswith("OptunaSweeper") and cfg.hydra.sweeper.direction == "minimize"
    assert cfg.algo.name == "ppo" and cfg.train.final_eval_seeds == 0
    validate(cfg)
    assert compose_hydra("run_dir=/tmp/x").hydra.sweeper._target_.endswith("BasicSweeper")  # default unchanged


def test_cluster_launcher_leaves_the_object_store_to_the_cluster():
    pytest.importorskip("hydra_plugins.hydra_ray_launcher")
    init = compose_hydra(
        "hydra/launcher=ray_cluster", "hydra.launcher.ray.init.address=ray://head:10001"
    ).hydra.launcher.ray.init
    assert init.address == "ray://head:10001" and "object_store_memory" in init and init.object_store_memory is None
    assert compose_hydra().hydra.launcher._target_.endswith("BasicLauncher")


def test_selection_objective_reads_best_json_and_follows_a_resume(tmp_path):
    from gpu_sched_agents.rl.sweep import run_dir_of, selection_objective

    target, here = tmp_path / "first", tmp_path / "second"
    target.mkdir()
    here.mkdir()
    with pytest.raises(FileNotFoundError, match="no held-out evaluation"):
        selection_objective(target)
    (target / "best.json").write_text(json.dumps({"timesteps": 10, "objective": 12.5, "miss_pct": 3.0}))
    (here / "resumed_into.txt").write_text(f"{target}\n")
    cfg = OmegaConf.create({"run_dir": str(here)})
    assert run_dir_of(cfg) == target and selection_objective(run_dir_of(cfg)) == 12.5
