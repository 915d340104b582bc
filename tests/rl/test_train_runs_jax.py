"""``train.py`` to its end in a fresh process: the JAX path's main job and the ppo_jax experiments (tiny).

The experiments that select on JAX days are in tests/rl/test_train_runs_jax_select.py, so that
the two xdist workers share the JAX runs.
"""

import json

import pytest

from tests.rl.train_runs import RUNS, SELECTING, check_jax_runs, run


@pytest.mark.e2e
@pytest.mark.parametrize("name", [n for n in RUNS if n.startswith("jax") and n not in SELECTING])
def test_train_py_runs_to_its_end(name, tmp_path, trainer):
    proc, out = run(name, tmp_path, trainer)
    check_jax_runs(name, proc, out)
    if name == "jax_main":  # the JAX main job's last lines, and its pick in the one best.json schema
        assert "Verdict: ppo_jax against the strongest baseline" in proc.stdout
        assert json.loads((out / "best.json").read_text())["select_rule"] == "lexicographic"
    if name == "jax_seeds":  # each seed's verdict, the parent's summary and TensorBoard command
        assert proc.stdout.count("Verdict: ppo_jax against the strongest baseline") == 2
        assert f"tensorboard --logdir {out}" in proc.stdout and (out / "seeds.csv").is_file()
