"""The one ``best.json`` schema (:mod:`gpu_sched_agents.rl.best`): written alike by every selection, read alike."""

import json

import pytest

from gpu_sched_agents.rl.best import (
    FIELDS,
    SCHEMA,
    best_record,
    objective_of,
    read_best,
    selection_objective,
    write_best,
)
from gpu_sched_env.cgrsp.rewards import deadline_objective
from gpu_sched_env.core.errors import ConfigError

SELECT = {"select_mean_wait_min": 44.5, "select_miss_pct": 0.5, "objective": 12.0, "miss_pct": 1.0}


@pytest.mark.parametrize(
    ("rule", "key", "means", "objective"),
    [
        ("objective", [12.5], {"objective": 12.5, "miss_pct": 3.0}, 12.5),
        ("lexicographic", [1.0, 0.5, 44.5], SELECT, deadline_objective(44.5, 0.5)),
        ("worst_regime", [2, 0.75], {"select_hectic_wait": 40.0}, 2.75),
    ],
)
def test_every_rule_writes_the_schema_and_a_sweep_reads_its_objective(tmp_path, rule, key, means, objective):
    write_best(tmp_path, best_record(256, rule, key, means))
    best = read_best(tmp_path)
    assert set(FIELDS) <= set(best) and best["schema"] == SCHEMA and best["select_rule"] == rule
    assert best["select_key"] == key and best["timesteps"] == 256
    assert selection_objective(tmp_path) == pytest.approx(objective)


def test_the_env_objective_beside_a_selection_keeps_its_own_name():
    rec = best_record(10, "lexicographic", [0, 0, 44.5], SELECT)
    assert rec["eval_objective"] == 12.0 and rec["objective"] == pytest.approx(deadline_objective(44.5, 0.5))


def test_deadline_objective_prices_a_miss_as_a_job_hour():
    assert deadline_objective(10.0, 1.0) == pytest.approx(10.6)  # 1 % of jobs missed × 60 min
    assert objective_of("lexicographic", [0, 0, 10.0], {"select_mean_wait_min": 10.0, "select_miss_pct": 0.0}) == 10.0


def test_files_from_before_the_schema_are_read_as_what_they_were(tmp_path):
    sb3, jax = tmp_path / "sb3", tmp_path / "jax"
    sb3.mkdir(), jax.mkdir()
    (sb3 / "best.json").write_text(json.dumps({"timesteps": 10, "objective": 12.5, "miss_pct": 3.0}))
    (jax / "best.json").write_text(json.dumps({"timesteps": 10, "select_key": [1.0, 2.0, 40.0], **SELECT}))
    assert read_best(sb3)["select_key"] == [12.5] and selection_objective(sb3) == 12.5
    assert read_best(jax)["select_rule"] == "lexicographic"
    assert selection_objective(jax) == pytest.approx(deadline_objective(44.5, 0.5))


def test_no_file_unreadable_file_or_bad_rule_say_what(tmp_path):
    assert read_best(tmp_path) is None
    with pytest.raises(FileNotFoundError, match="no held-out evaluation"):
        selection_objective(tmp_path)
    (tmp_path / "best.json").write_text("{not json")
    with pytest.raises(ConfigError, match="best.json is not valid JSON"):
        read_best(tmp_path)
    (tmp_path / "best.json").write_text(json.dumps({"steps": 3}))
    with pytest.raises(ConfigError, match=r"holds \['steps'\], not a run's best.json"):
        read_best(tmp_path)
    with pytest.raises(ConfigError, match="select_rule"):
        best_record(1, "median", [1.0], {})
    with pytest.raises(ValueError, match="lacks"):
        write_best(tmp_path, {"timesteps": 1})
