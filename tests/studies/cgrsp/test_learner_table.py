"""``python -m studies learner-table`` (studies.cgrsp.learner_table): one row per run against its strongest rule."""

import pandas as pd
import pytest
import yaml

from tests.rl.rule_runs import run_folder as _run


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
