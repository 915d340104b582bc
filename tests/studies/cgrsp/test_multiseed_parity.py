"""``train.py train.seeds=[...]`` (ppo_jax side by side) trains the networks the studies' multi-seed training does."""

import json

import numpy as np
import pandas as pd

from gpu_sched_agents.rl.entry import train
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


def test_train_py_seeds_select_by_the_objective_as_the_studies_do(tmp_path):
    """``algo.select_by=objective`` on JAX selection days: the studies' pick, its table and network, bit for bit."""
    select = ["algo.select_days=4", "algo.select_every=128"]
    run = tmp_path / "run"
    train(cfg_for(run, *JAX, *select, "algo.select_by=objective", "train.seeds=[0,3]", "train.final_eval_seeds=0"))
    paths, _ = train_seeds(
        cfg_for(tmp_path / "unused", *JAX), [0, 3], tmp_path / "study", select_every=128, select_days=4
    )
    for s in (0, 3):
        studied = pd.read_csv(tmp_path / "study" / f"seed{s}_select.csv")
        curve = pd.read_csv(run / f"seed{s}" / "learning_curve.csv")
        assert curve.timesteps.tolist() == studied.steps.tolist() == [128, 256]
        for c in ("mean_wait_min", "miss_pct", "objective"):
            np.testing.assert_array_equal(curve[f"select_{c}"], studied[c])
        best = json.loads((run / f"seed{s}" / "best.json").read_text())
        assert best["select_rule"] == "objective" and best["timesteps"] == int(studied.steps[studied.picked].iloc[0])
        assert best["objective"] == studied.objective[studied.picked].iloc[0]
        mine, theirs = np.load(run / f"seed{s}" / "best_model.npz"), np.load(paths[s])
        for k in mine.files:
            np.testing.assert_array_equal(mine[k], theirs[k])
