"""Tiny training runs for each algorithm: checkpoints, TensorBoard tags, final table, resume."""

from pathlib import Path

import gymnasium as gym
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

import gpu_sched_agents.rl.train as tr
from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS, STRONG_RULES
from gpu_sched_agents.rl.config import register_configs
from gpu_sched_agents.rl.registry import get_algo
from tests.rl.helpers import TINY_PPO, scalar_tags

CONF = str(Path(__file__).resolve().parents[2] / "conf")
register_configs()
TINY = [
    "day=quiet",
    "train.total_timesteps=256",
    "train.n_envs=2",
    "train.eval_freq=128",
    "train.checkpoint_freq=128",
    "train.eval_seeds=[10000]",
    "train.final_eval_seeds=2",
    "train.progress_bar=false",
    "env.window=4",
]
ALGO_TINY = {
    "ppo": TINY_PPO,
    "ppo_unmasked": TINY_PPO,
    "dqn": ["algo.learning_starts=32", "algo.buffer_size=1000", "algo.batch_size=16", "algo.net_arch=[16]"],
}


def cfg_for(run_dir, *overrides):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=[*TINY, f"run_dir={run_dir}", *overrides])


@pytest.mark.e2e
@pytest.mark.parametrize("algo", ["ppo", "ppo_unmasked", "dqn"])
def test_tiny_training_run_writes_everything(algo, tmp_path):
    run = tmp_path / "run"
    out = tr.train(cfg_for(run, f"algo={algo}", *ALGO_TINY[algo]))
    assert set(out) == {"miss_pct", "mean_wait_min", "mean_tardiness_min", "cost_usd"}
    for f in (
        "config.yaml",
        "command.txt",
        "final_model.zip",
        "best_model.zip",
        "best.json",
        "final_eval.csv",
        "final_eval.md",
        "final_eval.png",
        "learning_curve.csv",
        "learning_curve.png",
    ):
        assert (run / f).exists(), f
    curve = pd.read_csv(run / "learning_curve.csv")
    assert curve.timesteps.tolist() == [128, 256] and {"miss_pct", "mean_wait_min", "objective"} <= set(curve.columns)
    saved = get_algo(algo).cls.load(run / "final_model.zip", device="cpu")
    assert type(saved.action_space) is gym.spaces.Discrete  # the env is not pickled into the model
    assert sorted(p.name for p in (run / "checkpoints").glob("model_*_steps.zip")) == [
        "model_128_steps.zip",
        "model_256_steps.zip",
    ]
    learned = scalar_tags(run / "tb" / "learned_1")
    assert {
        "eval/miss_pct",
        "eval/mean_wait_min",
        "eval/mean_tardiness_min",
        "eval/cost_usd",
        "episode/miss_pct",
        "reward_parts/wait",
        "reward_parts/miss",
    } <= learned
    heur = sorted(p.name for p in (run / "tb").glob("heuristic_*"))
    # published eleven + the deferring rules (the strongest among them), not the rollout planner
    assert len(heur) == 11 + len(EXTENSIONS) and {
        "heuristic_edf_defer_low",
        f"heuristic_{STRONG_RULES['fresh']}",
    } <= set(heur)
    assert "heuristic_rollout" not in heur
    assert "eval/miss_pct" in scalar_tags(run / "tb" / "heuristic_rh")
    table = (run / "final_eval.md").read_text()
    assert algo in table and "rh" in table and "Paired tests" in table


@pytest.mark.e2e
def test_resume_continues_from_the_last_checkpoint(tmp_path, monkeypatch):
    from stable_baselines3.common.callbacks import BaseCallback

    class Interrupt(BaseCallback):
        def _on_step(self):
            if self.num_timesteps >= 160:
                raise KeyboardInterrupt
            return True

    family = tmp_path / "ppo_quiet_seed0"
    first = family / "t1"
    monkeypatch.setattr(tr, "_extra_callbacks", lambda: [Interrupt()])
    with pytest.raises(KeyboardInterrupt):
        tr.train(cfg_for(first, "algo=ppo", *ALGO_TINY["ppo"]))
    assert [p.name for p in (first / "checkpoints").glob("*.zip")] == ["model_128_steps.zip"]
    assert not (first / "final_model.zip").exists()

    monkeypatch.setattr(tr, "_extra_callbacks", lambda: [])
    second = family / "t2"  # a new invocation gets a new Hydra dir; resume finds t1
    loaded = {}
    orig_load = tr.get_algo("ppo").cls.load

    def spy(path, *a, **k):
        m = orig_load(path, *a, **k)
        loaded.setdefault("steps", m.num_timesteps)
        loaded.setdefault("path", Path(path).name)
        return m

    monkeypatch.setattr(tr.get_algo("ppo").cls, "load", spy)
    tr.train(cfg_for(second, "algo=ppo", "resume=true", *ALGO_TINY["ppo"]))
    assert loaded == {"steps": 128, "path": "model_128_steps.zip"}
    assert (first / "final_model.zip").exists()
    assert (second / "resumed_into.txt").read_text().strip() == str(first)
    assert "resumed from model_128_steps.zip" in (first / "command.txt").read_text()
    assert sorted(p.name for p in (first / "checkpoints").glob("*.zip"))[-1] == "model_256_steps.zip"
    # the learner's curve continues in the same TensorBoard run
    assert not (first / "tb" / "learned_2").exists()


def test_resume_without_a_previous_run_is_a_clear_error(tmp_path):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match="resume=true but no earlier run with checkpoints"):
        tr.train(cfg_for(tmp_path / "fam" / "only", "algo=ppo", "resume=true"))


@pytest.mark.e2e
def test_evaluate_cli_on_a_trained_run(tmp_path, capsys):
    from gpu_sched_agents.evaluate.cli import main as evaluate

    run = tmp_path / "run"
    tr.train(cfg_for(run, "algo=ppo", *ALGO_TINY["ppo"], "train.final_eval_seeds=0"))
    small = ["--seeds", "2", "--regimes", "surge_fresh", "--month-reps", "0", "--workers", "1"]
    assert evaluate([str(run), "--out", str(tmp_path / "eval"), *small]) == 0
    assert "surge_fresh" in capsys.readouterr().out
    report = (tmp_path / "eval" / "report.json").read_text()
    assert '"kind": "run"' in report and "best_model.zip" in report
    assert evaluate([str(tmp_path / "nowhere"), *small]) == 2
    # on a job log: the trace of seed 20 000's quiet day replays that day for every policy
    from gpu_sched_env.cgrsp import simulate
    from gpu_sched_env.cli import main as gpu_sched

    trace = tmp_path / "quiet_20000.csv"
    assert gpu_sched(["trace", "--day", "quiet", "--seed", "20000", "--out", str(trace)]) == 0
    out = tmp_path / "trace"
    assert evaluate([str(run), "--trace", str(trace), "--seeds", "2", "--out", str(out)]) == 0
    df = pd.read_csv(out / "trace_quiet_20000.csv")
    assert set(df.policy) >= {"ppo (run)", "fifo", "edf"} and len(df[df.policy == "ppo (run)"]) == 2
    edf = df[(df.policy == "edf") & (df.seed == 20000)].iloc[0]
    assert edf["mean_wait_min"] == pytest.approx(simulate("edf", "quiet", 20000).summary()["mean_wait_min"])
    assert evaluate([str(run), "--trace", str(tmp_path / "missing.csv"), "--seeds", "2"]) == 2


@pytest.mark.e2e
def test_reward_normalisation_saves_its_statistics_with_checkpoints(tmp_path):
    run = tmp_path / "run"
    tr.train(cfg_for(run, "algo=ppo", *ALGO_TINY["ppo"], "train.normalize_reward=true", "train.final_eval_seeds=0"))
    assert sorted(p.name for p in (run / "checkpoints").glob("*.pkl")) == [
        "model_vecnormalize_128_steps.pkl",
        "model_vecnormalize_256_steps.pkl",
    ]


@pytest.mark.e2e
def test_cloning_run_reports_its_teacher(tmp_path):
    import json

    run = tmp_path / "run"
    tr.train(
        cfg_for(
            run,
            "algo=ppo",
            *ALGO_TINY["ppo"],
            "algo.bc_teacher=edf_defer_low",
            "algo.bc_episodes=2",
            "algo.bc_epochs=2",
        )
    )
    bc = json.loads((run / "bc.json").read_text())
    assert bc["teacher"] == "edf_defer_low" and 0.0 <= bc["bc_accuracy"] <= 1.0
    assert (run / "tb" / "heuristic_edf_defer_low").is_dir()
    assert "edf_defer_low" in (run / "final_eval.md").read_text()
    learned = scalar_tags(run / "tb" / "learned_1")
    assert "eval/miss_pct" in learned  # evaluated before the first RL update as well
