"""``train.py`` to its end in a fresh process: the Quickstart, the SB3 algos, experiments and scenarios (tiny)."""

import pytest

from tests.rl.train_runs import RUNS, check_run, check_sweep, run, run_folders, shipped

SB3_RUNS = [n for n in RUNS if not n.startswith("jax")]


def test_train_runs_cover_every_shipped_config():
    covered: dict[str, set[str]] = {}
    for r in RUNS.values():
        for group, names in r.covers.items():
            covered.setdefault(group, set()).update(names)
    for group in ("algo", "experiment", "scenario"):
        assert covered.get(group) == shipped(group), (group, shipped(group) ^ covered.get(group, set()))


@pytest.mark.e2e
@pytest.mark.parametrize("name", SB3_RUNS)
def test_train_py_runs_to_its_end(name, tmp_path, trainer):
    proc, out = run(name, tmp_path, trainer)
    assert proc.returncode == 0, proc.stderr[-4000:]
    folders = run_folders(name, out)
    assert len(folders) == max(len(v) for v in RUNS[name].covers.values())
    for folder in folders:
        check_run(folder, jax=False)
    if RUNS[name].multirun:
        check_sweep(out, len(folders))
    if name == "quickstart":  # the last lines say what happened and how to look
        tail = proc.stdout.strip().splitlines()[-5:]
        assert tail[0].split("Verdict: ")[1].startswith("ppo against the strongest baseline"), tail
        assert any(
            line.strip() == f"learning curves against every heuristic: tensorboard --logdir {out / 'tb'}"
            for line in tail
        ), tail
