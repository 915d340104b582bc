"""``train.py`` to its end in a fresh process: the ppo_jax experiments that select on JAX days (tiny).

Apart from tests/rl/test_train_runs_jax.py so that the two xdist workers share the JAX runs.
"""

import pytest

from tests.rl.train_runs import SELECTING, check_jax_runs, run


@pytest.mark.e2e
@pytest.mark.parametrize("name", SELECTING)
def test_train_py_runs_to_its_end(name, tmp_path, trainer):
    check_jax_runs(name, *run(name, tmp_path, trainer))
