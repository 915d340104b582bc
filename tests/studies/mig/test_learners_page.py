"""``python -m studies learners``: the page is made of the runs' curves and the stored reports, nothing else."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from omegaconf import OmegaConf

from gpu_sched_agents.evaluate.cli import main as evaluate
from gpu_sched_agents.evaluate.leaderboard import MARK
from gpu_sched_agents.rl.compose import compose_config
from gpu_sched_agents.rl.scenarios import heuristic_runs, spec_of
from studies.learners import main

EVAL_SEEDS = [10_000, 10_001]


def _run(path, seed, makespans, scenario="mig"):
    """A run folder as train.py writes it: the composed config and a learning curve."""
    path.mkdir(parents=True)
    seeds = ",".join(map(str, EVAL_SEEDS))
    cfg = compose_config(f"scenario={scenario}", f"seed={seed}", f"train.eval_seeds=[{seeds}]", f"run_dir={path}")
    (path / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    steps = [1000 * (i + 1) for i in range(len(makespans))]
    pd.DataFrame({"timesteps": steps, "objective": makespans, "makespan": makespans}).to_csv(
        path / "learning_curve.csv", index=False
    )
    return path


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Two stored reports of the quick protocol (rules stand in for the learner's seeds: the page only reads them)."""
    out = tmp_path_factory.mktemp("reports")
    paths = []
    for label, rule in (("seed_a", "first_fit"), ("seed_b", "earliest_start")):
        assert evaluate(["--scenario", "mig", rule, "--quick", "--label", label, "--out", str(out / label)]) == 0
        paths.append(out / label / "report.json")
    return paths


def test_the_page_holds_each_reports_means_and_verdicts_and_the_rules_levels(tmp_path, reports):
    runs = [_run(tmp_path / "r0", 0, [180.0, 176.0, 175.5]), _run(tmp_path / "r1", 1, [190.0, 178.0, 174.0])]
    page = tmp_path / "docs" / "learners_mig.md"
    args = ["--scenario", "mig", "--runs", *map(str, runs), "--reports", *map(str, reports), "--page", str(page)]
    assert main(args) == 0
    text = page.read_text()
    fig = tmp_path / "docs" / "figures" / "learners_mig.png"
    assert fig.stat().st_size > 10_000 and "![selection curves](figures/learners_mig.png)" in text
    assert "2 seeds, 3,000 steps each" in text and "python -m studies learners --scenario mig" in text
    for path in reports:
        r = json.loads(path.read_text())
        (regime,) = r["protocol"]["regimes"]
        s = r["scopes"][regime]
        row = next(line for line in text.splitlines() if line.startswith(f"| {regime} |"))
        rules = {r: v["makespan"]["mean"] for r, v in s["rules"].items()}
        assert f"| {s['best_rule']} {rules[s['best_rule']]:.2f} |" in row
        env_best = min(spec_of("mig").heuristics, key=rules.__getitem__)  # the env agents among the rules
        assert f"| {env_best} {rules[env_best]:.2f} |" in row and rules[env_best] > rules[s["best_rule"]]
        assert f"{s['policy']['makespan']['mean']:.2f} {MARK[s['verdict']]}" in row
    # the figure's rule levels are the env's rules replayed on the runs' selection seeds
    spec = spec_of("mig")
    levels = heuristic_runs(spec, spec.config_cls(), EVAL_SEEDS).groupby("policy")["makespan"].mean()
    assert len(levels) == len(spec.heuristics) and levels.min() < levels.max()


def test_bad_inputs_are_refused_in_one_line(tmp_path, reports, capsys):
    good = _run(tmp_path / "good", 0, [180.0])
    page = str(tmp_path / "p.md")

    def refused(*args, match):
        with pytest.raises(SystemExit) as e:
            main(["--scenario", "mig", *args] if "--scenario" not in args else list(args))
        err = capsys.readouterr().err.strip()
        assert e.value.code == 2 and match in err and "\n" not in err, err

    refused(
        "--runs", str(tmp_path / "nope"), "--reports", str(reports[0]), "--page", page, match="a train.py run folder"
    )
    other = _run(tmp_path / "edge_run", 0, [5.0], scenario="edge")
    refused("--runs", str(other), "--reports", str(reports[0]), "--page", page, match="a scenario=edge run")
    refused("--runs", str(good), "--reports", str(reports[0]), "--page", str(tmp_path / "p.txt"), match="a .md path")
    refused(
        "--scenario", "cgrsp", "--runs", str(good), "--reports", str(reports[0]), "--page", page,
        match="--scenario = 'cgrsp'",
    )  # fmt: skip
    refused("--runs", str(good), "--reports", str(tmp_path / "none.json"), "--page", page, match="not a readable")
    seed1 = _run(tmp_path / "other_env", 1, [180.0])
    cfg = OmegaConf.load(seed1 / "config.yaml")
    cfg.scenario.env.n_jobs = 20
    (seed1 / "config.yaml").write_text(OmegaConf.to_yaml(cfg))
    refused("--runs", str(good), str(seed1), "--reports", str(reports[0]), "--page", page, match="runs of one design")
