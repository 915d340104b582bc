"""``train.py train.seeds=[...]`` (ppo_jax side by side) trains the networks the studies' multi-seed training does."""

import numpy as np

from studies.cgrsp.learning.parity import train_seeds
from tests.rl.test_multiseed import JAX, cfg_for, train_side_by_side


def test_train_py_seeds_are_the_studies_networks_bit_for_bit(tmp_path):
    """One jitted update per step (train.py) and one program of every update (the studies), both vmapped."""
    run = train_side_by_side(tmp_path / "run")
    paths, _ = train_seeds(cfg_for(tmp_path / "unused", *JAX), [0, 3], tmp_path / "study")
    for s in (0, 3):
        mine, theirs = np.load(run / f"seed{s}" / "final_model.npz"), np.load(paths[s])
        assert mine.files == theirs.files
        for k in mine.files:
            np.testing.assert_array_equal(mine[k], theirs[k])
