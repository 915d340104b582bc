"""Smoke tests of the CGRSP diagnostics on tiny budgets, through the questions they serve (``python -m studies``)."""

from pathlib import Path

import pytest

from gpu_sched_env.core.commands import walk
from studies.commands import PROG, STUDIES, main
from studies.conf import composed_env


def run(capsys, *args):
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_rh_reservation(capsys):
    out = run(
        capsys, "strong-rules", "--part", "rh-reservation", "--day", "quiet", "--seeds", "1", "--rho-res", "0", "1"
    )
    lines = [ln for ln in out.splitlines() if ln.startswith("rho_res=")]
    assert len(lines) == 4 and "loose dispatches" in lines[0] and "High" in lines[0]


def test_reward_step_table_and_monte_carlo(capsys):
    out = run(capsys, "reward", "--day", "quiet", "--seeds", "1")
    assert "mean step reward" in out and "deadline/queue" in out and "dispatch" in out
    out = run(capsys, "reward", "--mc", "--day", "hectic", "--seeds", "1", "--horizon", "20")
    assert "Low-stock offers" in out and "dispatch − idle, discounted" in out


def test_reward_alignment(capsys):
    out = run(
        capsys, "reward", "--part", "alignment", "--day", "quiet", "--seeds", "2", "--policies", "fifo", "edf", "spt"
    )
    for preset in ("deadline", "capacity", "occupancy", "study"):
        assert preset in out


def test_an_unknown_part_is_refused_with_the_parts(capsys):
    assert main(["reward", "--part", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--part = 'nope'; allowed: step, advantages, scale, regimes, alignment" in err
    assert main(["bench", "scenarios"]) == 2  # no default part: the flag is required
    assert "--part is required; allowed: hgsp, mig, edge" in capsys.readouterr().err


def test_a_question_named_alone_runs_its_default_part_and_lists_its_parts(capsys):
    with pytest.raises(SystemExit) as e:  # the parts, then the default part's options (which, then numpy)
        main(["versus-rule", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m studies versus-rule [--part NAME]") and "which" in out and "misses" in out
    assert "the default part (which):" in out
    assert "the default part (numpy):\nusage: python -m studies versus-rule [-h]" in out
    with pytest.raises(SystemExit) as e:  # the default part (which), then --engine's default (numpy): its options
        main(["versus-rule", "--engine", "jax", "--days", "x"])
    assert e.value.code == 2
    assert "usage: python -m studies versus-rule --engine jax" in capsys.readouterr().err


PARTS = [s for s, _ in walk(STUDIES, PROG) if " --" in s]


@pytest.mark.parametrize("spelling", PARTS)
def test_every_part_names_itself_in_its_usage(capsys, spelling):
    import sys

    argv0 = sys.argv[0]
    with pytest.raises(SystemExit) as e:
        main([*spelling[len(PROG) :].split(), "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {spelling}") and out[len(f"usage: {spelling}")].isspace()
    assert sys.argv[0] == argv0  # restored


def test_advantages(capsys):
    out = run(capsys, "reward", "--part", "advantages", "--rollouts", "1", "--n-steps", "64", "--window", "4")
    assert "rollout at 128 steps" in out and "advantage" in out


def tiny_run(run_dir: Path, *overrides: str) -> Path:
    """A trained run of a few hundred steps on the quiet day (``overrides`` change its env)."""
    import gpu_sched_agents.rl.train as tr
    from studies.conf import compose_config

    tr.train(
        compose_config(
            "day=quiet",
            "train.total_timesteps=128",
            "train.n_envs=2",
            "train.eval_freq=128",
            "train.checkpoint_freq=128",
            "train.eval_seeds=[10000]",
            "train.final_eval_seeds=1",
            "train.progress_bar=false",
            "algo=ppo",
            "algo.n_steps=64",
            "algo.batch_size=64",
            "algo.n_epochs=1",
            "algo.net_arch=[16]",
            f"run_dir={run_dir}",
            *overrides,
        )
    )
    return run_dir


@pytest.mark.e2e
def test_policy_on_a_tiny_trained_run(capsys, tmp_path):
    run_dir = tiny_run(tmp_path / "run", "env.window=4")
    out = run(capsys, "versus-rule", "--part", "policy", str(run_dir), "--seeds", "1")
    for mode in ("argmax", "factored", "sampled"):
        assert mode in out


@pytest.mark.e2e
def test_versus_rule_splits_when_from_which(capsys, tmp_path):
    """Four plays of the same day; the rule's is the rule driven through the run's own action design."""
    import pandas as pd
    import pytest

    from gpu_sched_agents.heuristics.cgrsp_agents import evaluate_heuristics
    from gpu_sched_env.core.errors import ConfigError
    from studies.cgrsp.versus_rule.versus_rule import base_of, diagnose, versus_rule_tests

    run_dir = tiny_run(tmp_path / "run", "env=markov", "env.features=model")
    out = run(capsys, "versus-rule", str(run_dir), "--seeds", "1", "--out", str(tmp_path / "v.csv"))
    assert "spt_rescue_defer_exp (base order spt_rescue)" in out
    df = diagnose(run_dir, "best_model.zip", [20000])
    assert list(df["mode"]) == ["learned", "rule", "rule_when", "rule_which"]
    rule = df.set_index("mode").loc["rule"]
    from omegaconf import OmegaConf

    from gpu_sched_agents.rl.envs import env_config

    ref = evaluate_heuristics(
        ["spt_rescue_defer_exp"], env_config(OmegaConf.load(run_dir / "config.yaml")), [20000], fallback="same_class"
    )
    assert rule.mean_wait_min == pytest.approx(float(ref.mean_wait_min.iloc[0]))
    assert ((df.when_disagree >= 0) & (df.when_disagree <= 1)).all()
    tests = versus_rule_tests(pd.concat([df, df.assign(seed=20001)]))  # two seeds: paired tests need n > 1
    assert list(tests["mode"].unique()) == ["learned", "rule_when", "rule_which"] and set(tests.metric) == {
        "mean_wait_min",
        "miss_pct",
    }
    learned = df.set_index("mode").loc["learned", "mean_wait_min"]
    assert tests.set_index(["mode", "metric"]).loc[("learned", "mean_wait_min"), "diff_vs_rule"] == pytest.approx(
        learned - rule.mean_wait_min
    )
    assert "against the rule in the same design" in out
    assert base_of("cadr_defer_lm") == "cadr"
    with pytest.raises(ConfigError, match="not a deferring rule"):
        base_of("edf")


def test_design_cost_of_the_markov_design(capsys):
    """The rule through env=markov's design and its variants; simulate is the reference row."""
    from gpu_sched_env.cgrsp.api import simulate
    from studies.cgrsp.versus_rule.design_cost import composed, design_cost

    out = run(capsys, "versus-rule", "--part", "design-cost", "--env", "markov", "--day", "quiet", "--seeds", "1")
    assert "window 3 by class, slot mode, hold=stock" in out and "hold=event" in out
    config = composed("markov", "quiet").replace(n_jobs=120)
    df = design_cost(config, [20000]).set_index("variant")
    assert list(df.index) == ["design", "hold=event", "joint", "window=16 by order", "simulate"]
    ref = simulate(df.rule.iloc[0], "quiet", seed=20000, n_jobs=120).summary()
    assert df.loc["simulate", "mean_wait_min"] == ref["mean_wait_min"] and df.loc["simulate", "vs_simulate_min"] == 0.0


@pytest.mark.e2e
@pytest.mark.parametrize("experiment", ["joint_heads", "joint_heads_markov"])
def test_joint_heads_cost_the_strongest_rule_nothing(experiment):
    """SPT+Rescue keeps the deadline order within a class, so experiment=joint_heads's design
    (the three class heads, every head–slot pair one action) expresses it job for job, under
    either stock model: the rule driven through that design is simulate(), job for job."""
    from studies.cgrsp.versus_rule.design_cost import design_cost

    config = composed_env("hectic", f"experiment={experiment}")
    assert config.action_mode == "joint" and config.window_by == "class"
    df = design_cost(config, [20000, 20001]).set_index("variant")
    assert df.loc["design", "mean_wait_min"] == df.loc["simulate", "mean_wait_min"]
    assert df.loc["design", "miss_pct"] == df.loc["simulate", "miss_pct"]
    # job for job: every dispatch time and slot of the day
    from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
    from gpu_sched_env.cgrsp.api import simulate
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    env = CGRSPEnv(config)
    agent = HeuristicAgent("spt_rescue_defer_exp", fallback="same_class").bind(env)
    env.reset(seed=20000)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(agent.predict()[0]))
        done = terminated or truncated
    ref = simulate("spt_rescue_defer_exp", "hectic", 20000, **config.params).jobs
    assert env.sim.dispatch == ref["dispatch"].tolist() and env.sim.job_slot == ref["slot"].tolist()


@pytest.mark.e2e
def test_versus_rule_in_joint_mode(tmp_path):
    """In experiment=joint_heads's design the rule's play is simulate()'s day (the design costs it
    nothing); the hybrids take the rule's when (any dispatch) or its next pair."""
    from gpu_sched_env.cgrsp.api import simulate
    from studies.cgrsp.versus_rule.versus_rule import diagnose

    run_dir = tiny_run(tmp_path / "run", "experiment=joint_heads")
    df = diagnose(run_dir, "best_model.zip", [20000]).set_index("mode")
    assert list(df.index) == ["learned", "rule", "rule_when", "rule_which"]
    ref = simulate("spt_rescue_defer_exp", "quiet", 20000).summary()
    assert (
        df.loc["rule", "mean_wait_min"] == pytest.approx(ref["mean_wait_min"])
        and df.loc["rule", "miss_pct"] == ref["miss_pct"]
    )
    assert (
        (df.when_disagree >= 0) & (df.when_disagree <= 1) & (df.which_disagree >= 0) & (df.which_disagree <= 1)
    ).all()
    assert (df.drop(index="rule").decisions > 0).all()  # the rule's own play counts none
