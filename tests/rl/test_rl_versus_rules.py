"""The learner-vs-strongest-rule row: the bar is chosen per run on its own seeds, and the criterion can fail."""

import pandas as pd
import pytest
import yaml

from gpu_sched_agents.rl.compare import comparison, versus_rules

RULES = ["spt_rescue_defer_exp", "cadr_defer_exp"]


def _run(tmp_path, learned_wait, learned_miss, name="run"):
    seeds = list(range(8))
    rows = []
    for s in seeds:
        rows.append({"policy": "ppo", "seed": s, "miss_pct": learned_miss, "mean_wait_min": learned_wait + 0.1 * s})
        rows.append(
            {
                "policy": "spt_rescue_defer_exp",
                "seed": s,
                "miss_pct": 0.0,
                "mean_wait_min": 50.0 + 0.1 * s + 0.05 * (s % 2),
            }
        )
        rows.append(
            {"policy": "cadr_defer_exp", "seed": s, "miss_pct": 0.1, "mean_wait_min": 40.0 + 0.1 * s}
        )  # lower wait, but misses
        rows.append({"policy": "fifo", "seed": s, "miss_pct": 20.0, "mean_wait_min": 150.0 + s})
    per_seed = pd.DataFrame(rows)
    for m in ("mean_tardiness_min", "cost_usd"):
        per_seed[m] = 0.0
    table, tests = comparison(
        per_seed[per_seed.policy == "ppo"].drop(columns="policy"), per_seed[per_seed.policy != "ppo"], label="ppo"
    )
    d = tmp_path / name
    d.mkdir()
    per_seed.to_csv(d / "final_eval_per_seed.csv", index=False)
    tests.to_csv(d / "final_eval_tests.csv", index=False)
    (d / "config.yaml").write_text(
        yaml.safe_dump(
            {"algo": {"name": "ppo"}, "seed": 3, "env": {"params": {"stock_process": "markov", "stock_dwell_s": 900}}}
        )
    )
    return d


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


@pytest.mark.e2e
def test_learner_table(tmp_path, capsys):
    from studies.cgrsp import learner_table as mod

    runs = []
    for name in ("a", "b"):
        d = _run(tmp_path, learned_wait=45.0, learned_miss=0.0, name=name)
        pd.read_csv(d / "final_eval_per_seed.csv").assign(day="normal").to_csv(
            d / "final_eval_per_seed.csv", index=False
        )
        (d / "config.yaml").write_text(
            yaml.safe_dump({"algo": {"name": "ppo"}, "seed": 0, "env": {"params": {"n_jobs": 20}}})
        )
        runs.append(str(d))
    out = tmp_path / "table.csv"
    assert mod.main([*runs, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count("| ppo |") == 0 and "| a |" in text and "| b |" in text  # one row per run, named by its folder
    assert "0 of 2 runs beat the strongest rule" in text  # every deferring rule is simulated on the runs' seeds
    df = pd.read_csv(out)
    assert len(df) == 2 and {"best rule", "Δ wait", "beats"} <= set(df.columns) and not df.beats.any()
    with pytest.raises(SystemExit) as e:
        mod.main([str(tmp_path)])
    assert e.value.code == 2 and "no final_eval_tests.csv in" in capsys.readouterr().err
