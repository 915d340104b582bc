"""The studies train through ``train.py train.seeds=[...]``: each seed's judged actor and table are its run folder's."""

import json

import numpy as np
import pandas as pd
import pytest

from studies.cgrsp.learning.parity import train_seeds
from tests.rl.test_multiseed import JAX, cfg_for


@pytest.mark.e2e  # trains two seeds side by side (docs/tests.md: a training is e2e)
def test_the_studies_export_each_seeds_pick_from_its_run_folder(tmp_path, capsys):
    """``select_by=objective`` on JAX selection days: the table's pick is the lowest objective, best_model exported."""
    out = tmp_path / "study"
    paths, _ = train_seeds(cfg_for(tmp_path / "unused", *JAX), [0, 3], out, select_every=128, select_days=4)
    run = out / "runs" / "seeds0_3"
    assert json.loads((run / "seeds.json").read_text())["seeds"] == [0, 3]
    said = (run / "seed0" / "command.txt").read_text()  # not train.py's command line: no `python train.py` to rerun
    assert said.startswith("# ") and "config.yaml holds the settings" in said
    for s in (0, 3):
        table = pd.read_csv(out / f"seed{s}_select.csv")
        assert table.steps.tolist() == [128, 256] and table.picked.sum() == 1
        assert table.objective[table.picked].iloc[0] == table.objective.min()
        best = json.loads((run / f"seed{s}" / "best.json").read_text())
        assert best["select_rule"] == "objective" and best["timesteps"] == int(table.steps[table.picked].iloc[0])
        mine, theirs = np.load(paths[s]), np.load(run / f"seed{s}" / "best_model.npz")
        for k in mine.files:
            np.testing.assert_array_equal(mine[k], theirs[k])
    assert train_seeds(cfg_for(tmp_path / "unused", *JAX), [0, 3], out)[1] == 0.0  # exported: nothing trains again

    # stopped before its checkpoint (one seed's missing, nothing exported): the group trains again, to the same actors
    kept = {s: np.load(paths[s])["pi_0/kernel"].copy() for s in (0, 3)}
    for s in (0, 3):
        paths[s].unlink()
    for f in (run / "seed3" / "checkpoints").glob("model_*"):
        f.unlink()
    train_seeds(cfg_for(tmp_path / "unused", *JAX), [0, 3], out, select_every=128, select_days=4)
    assert "stopped before its checkpoint; training it again from the start" in capsys.readouterr().out
    for s in (0, 3):
        np.testing.assert_array_equal(np.load(paths[s])["pi_0/kernel"], kept[s])
