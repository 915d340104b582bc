"""``python -m studies bench jax --json``: the four figures in one JSON line (tiny sizes)."""

import json

import pytest

from studies.commands import main

KEYS = {"env_steps_per_s", "ref_env_steps_per_s", "ppo_fps", "sb3_ppo_fps"}


@pytest.mark.slow  # ~2 min here: two JAX compiles and a MaskablePPO rollout
def test_bench_jax_json_last_line_has_the_keys(capsys):
    argv = [
        "bench",
        "jax",
        "--day",
        "quiet",
        "--batch",
        "4",
        "8",
        "--env-steps",
        "5",
        "--ref-steps",
        "50",
        "--ppo-updates",
        "1",
        "--ppo-envs",
        "4",
        "--ppo-n-steps",
        "8",
        "--sb3-steps",
        "64",
        "--json",
    ]
    assert main(argv) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    row = json.loads(last)
    assert KEYS <= set(row) and all(row[k] > 0 for k in KEYS)
    ratio = row["env_steps_per_s"] / row["ref_env_steps_per_s"]
    assert abs(row["env_ratio"] - ratio) <= 0.01 + 0.01 * ratio  # rounded figures, same run
    assert row["ppo_n_envs"] == 4 and row["ppo_n_steps"] == 8 and row["batch"] == [4, 8]
    assert row["env_steps_per_s"] == max(row["env_steps_per_s_4"], row["env_steps_per_s_8"])


def test_bench_jax_refuses_a_zero_size(capsys):
    with pytest.raises(SystemExit) as e:
        main(["bench", "jax", "--batch", "1024", "0"])
    assert e.value.code == 2
    assert "--batch = 0: must be ≥ 1" in capsys.readouterr().err
