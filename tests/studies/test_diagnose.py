"""Smoke tests of the diagnostics (studies/diagnose) on tiny budgets, through ``gpu-sched diagnose``."""

from pathlib import Path

from gpu_sched_env.cli import main


def run(capsys, *args):
    assert main(["diagnose", *args]) == 0
    return capsys.readouterr().out


def test_rh_reservation(capsys):
    out = run(capsys, "rh-reservation", "--day", "quiet", "--seeds", "1", "--rho-res", "0", "1")
    lines = [ln for ln in out.splitlines() if ln.startswith("rho_res=")]
    assert len(lines) == 4 and "loose dispatches" in lines[0] and "High" in lines[0]


def test_reward_step_table_and_monte_carlo(capsys):
    out = run(capsys, "reward", "--day", "quiet", "--seeds", "1")
    assert "mean step reward" in out and "deadline/queue" in out and "dispatch" in out
    out = run(capsys, "reward", "--mc", "--day", "hectic", "--seeds", "1", "--horizon", "20")
    assert "Low-stock offers" in out and "dispatch − idle, discounted" in out


def test_reward_alignment(capsys):
    out = run(capsys, "reward-alignment", "--day", "quiet", "--seeds", "2", "--policies", "fifo", "edf", "spt")
    for preset in ("deadline", "capacity", "occupancy", "study"):
        assert preset in out


def test_unknown_diagnostic_is_refused(capsys):
    assert main(["diagnose", "nope"]) == 2
    assert "unknown diagnostic 'nope'" in capsys.readouterr().err


def test_advantages(capsys):
    out = run(capsys, "advantages", "--rollouts", "1", "--n-steps", "64", "--window", "4")
    assert "rollout at 128 steps" in out and "advantage" in out


def test_policy_on_a_tiny_trained_run(capsys, tmp_path):
    from hydra import compose, initialize_config_dir

    import gpu_sched_agents.rl.train as tr
    from gpu_sched_agents.rl.config import register_configs

    register_configs()
    run_dir = tmp_path / "run"
    conf = str(Path(__file__).resolve().parents[2] / "conf")
    with initialize_config_dir(config_dir=conf, version_base="1.3"):
        cfg = compose(config_name="config", overrides=[
            "day=quiet", "train.total_timesteps=128", "train.n_envs=2", "train.eval_freq=128",
            "train.checkpoint_freq=128", "train.eval_seeds=[10000]", "train.final_eval_seeds=1",
            "train.progress_bar=false", "env.window=4", "algo=ppo", "algo.n_steps=64", "algo.batch_size=64",
            "algo.n_epochs=1", "algo.net_arch=[16]", f"run_dir={run_dir}"])
    tr.train(cfg)
    out = run(capsys, "policy", str(run_dir), "--seeds", "1")
    for mode in ("argmax", "factored", "sampled"):
        assert mode in out
