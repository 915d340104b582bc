"""The learner-vs-strongest-rule row: the bar is chosen per run on its own seeds, and the criterion can fail."""

import pandas as pd
import pytest
import yaml

from gpu_sched_agents.rl.compare import versus_rules
from tests.rl.rule_runs import run_folder as _run

RULES = ["spt_rescue_defer_exp", "cadr_defer_exp"]


@pytest.mark.e2e
def test_the_bar_is_the_rule_with_the_lowest_miss_then_wait(tmp_path):
    row = versus_rules(_run(tmp_path, learned_wait=45.0, learned_miss=0.0), rules=RULES)
    assert row["best rule"] == "spt_rescue_defer_exp"  # cadr_defer_exp waits less but misses
    assert row["stock"] == "D=900s" and row["seed"] == 3 and row["n"] == 8
    assert row["Δ wait"] < 0 and row["beats"] is True


@pytest.mark.e2e
def test_a_learner_that_waits_more_or_misses_more_does_not_beat_it(tmp_path):
    assert versus_rules(_run(tmp_path, learned_wait=55.0, learned_miss=0.0, name="slow"), rules=RULES)["beats"] is False
    assert (
        versus_rules(_run(tmp_path, learned_wait=45.0, learned_miss=0.5, name="missing"), rules=RULES)["beats"] is False
    )


@pytest.mark.e2e
def test_rules_a_run_was_not_evaluated_against_are_simulated_on_its_seeds(tmp_path):
    d = _run(tmp_path, learned_wait=45.0, learned_miss=0.0, name="old")
    per_seed = pd.read_csv(d / "final_eval_per_seed.csv").assign(day="normal")
    per_seed.to_csv(d / "final_eval_per_seed.csv", index=False)
    (d / "config.yaml").write_text(
        yaml.safe_dump({"algo": {"name": "ppo"}, "seed": 0, "env": {"params": {"n_jobs": 20}}})
    )
    row = versus_rules(d, rules=[*RULES, "edf_defer_low"])  # edf_defer_low is not in the file: simulated
    assert row["best rule"] == "edf_defer_low"  # a normal day of 20 jobs: it misses nothing and waits ~0 min
    assert row["rule wait"] < 5.0 and row["beats"] is False
