"""Fan-out and resume: executors agree, interrupted runs resume, only missing cells run."""

import pandas as pd
import pytest

from studies.cgrsp.programme import runner
from studies.cgrsp.programme.grids import build_cells, configure
from studies.cgrsp.programme.runner import cell_key, cell_store, run_cells, run_experiment

TINY = {"n_jobs": 25}
DROP = ["cell_wall_s"]  # the only column allowed to differ between runs


def tiny(seeds=(0, 1, 2), **kw):
    return configure("tight", policies=["fifo", "edf"], seeds=list(seeds), values=[0.2, 0.8], base_params=TINY, **kw)


def counting(monkeypatch):
    ran = []
    real = runner.simulate_cell

    def spy(**cell):
        ran.append((cell["policy"], cell["seed"], tuple(sorted(cell["params"].items()))))
        return real(**cell)

    monkeypatch.setattr(runner, "simulate_cell", spy)
    return ran


def test_serial_and_process_give_identical_rows(tmp_path):
    cells = build_cells(tiny())
    a, ra = run_cells(cells, cell_store(tmp_path / "a"), executor="serial", progress=False)
    b, rb = run_cells(cells, cell_store(tmp_path / "b"), executor="process", workers=2, progress=False)
    assert ra.n_run == rb.n_run == len(cells) == 12
    pd.testing.assert_frame_equal(a.drop(columns=DROP), b.drop(columns=DROP))
    assert list(a["policy"]) == [c["policy"] for c in cells]  # rows in cell order
    assert list(a["tight_fraction"]) == [c["params"]["tight_fraction"] for c in cells]


def test_resume_runs_only_missing_cells(tmp_path, monkeypatch):
    store = cell_store(tmp_path / "cells")
    ran = counting(monkeypatch)
    part, r1 = run_experiment(tiny(seeds=(0, 1)), tmp_path, store=store, executor="serial", progress=False)
    assert r1.n_run == 8 and len(ran) == 8
    ran.clear()
    full, r2 = run_experiment(tiny(seeds=(0, 1, 2)), tmp_path, store=store, executor="serial", progress=False)
    assert (r2.n_run, r2.n_cached) == (4, 8)
    assert sorted({s for _, s, _ in ran}) == [2]  # only seed 2 was simulated
    assert len(full) == 12 and full["seed"].tolist().count(2) == 4
    again = full[full["seed"] < 2].drop(columns=["experiment"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(again, part.drop(columns=["experiment"]).reset_index(drop=True))
    assert (tmp_path / "tight" / "results.parquet").is_file()


def test_interrupted_run_keeps_finished_cells(tmp_path, monkeypatch):
    store = cell_store(tmp_path / "cells")
    real = runner.simulate_cell
    calls = []

    def flaky(**cell):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(**cell)

    monkeypatch.setattr(runner, "simulate_cell", flaky)
    cells = build_cells(tiny())
    with pytest.raises(KeyboardInterrupt):
        run_cells(cells, store, executor="serial", progress=False, flush_every=2)
    assert len(store.keys()) == 3  # three finished cells survived, flushed on the way out
    (store.root / ".chunk-half-written.parquet.tmp").write_bytes(b"garbage")  # a dead temp file
    monkeypatch.setattr(runner, "simulate_cell", real)
    df, rep = run_cells(cells, store, executor="serial", progress=False)
    assert (rep.n_run, rep.n_cached) == (9, 3)
    clean, _ = run_cells(cells, cell_store(tmp_path / "clean"), executor="serial", progress=False)
    pd.testing.assert_frame_equal(df.drop(columns=DROP), clean.drop(columns=DROP))


def test_cell_key_depends_on_every_input():
    base = cell_key("fifo", "surge", 0, {"c_max": 5}, version="v")
    assert base == cell_key("fifo", "surge", 0, {"c_max": 5}, version="v")
    assert (
        len(
            {
                base,
                cell_key("edf", "surge", 0, {"c_max": 5}, version="v"),
                cell_key("fifo", "hectic", 0, {"c_max": 5}, version="v"),
                cell_key("fifo", "surge", 1, {"c_max": 5}, version="v"),
                cell_key("fifo", "surge", 0, {"c_max": 7}, version="v"),
                cell_key("fifo", "surge", 0, {"c_max": 5}, version="w"),
            }
        )
        == 6
    )
    # a parameter or knob at its default value is the same cell as no override (shared by experiments)
    assert cell_key("spt_rescue", "hectic", 3, {"c_max": 5, "theta": 600}, version="v") == cell_key(
        "spt_rescue", "hectic", 3, {}, version="v"
    )
    assert cell_key("rh", "hectic", 3, {"rh_weights": [0.5, 0.5]}, version="v") == cell_key(
        "rh", "hectic", 3, {}, version="v"
    )
    assert cell_key("spt_rescue", "hectic", 3, {"theta": 60.0}, version="v") != cell_key(
        "spt_rescue", "hectic", 3, {}, version="v"
    )
    assert cell_key("fifo", "hectic", 3, {"n_jobs": 950}, version="v") == cell_key("fifo", "hectic", 3, {}, version="v")


def test_shared_cells_are_simulated_once(tmp_path, monkeypatch):
    store = cell_store(tmp_path / "cells")
    ran = counting(monkeypatch)
    kw = dict(policies=["fifo", "edf"], seeds=[0, 1, 2], base_params=TINY)
    run_experiment(configure("validation", **kw), tmp_path, store=store, executor="serial", progress=False)
    n = len(ran)
    _, rep = run_experiment(configure("objective", **kw), tmp_path, store=store, executor="serial", progress=False)
    assert n == 6 and len(ran) == 6 and rep.n_cached == 6


@pytest.mark.slow
def test_ray_gives_the_same_numbers(tmp_path):
    pytest.importorskip("ray")
    import ray

    cells = build_cells(tiny())
    a, _ = run_cells(cells, cell_store(tmp_path / "a"), executor="serial", progress=False)
    try:
        b, rep = run_cells(cells, cell_store(tmp_path / "b"), executor="ray", progress=False)
    finally:
        ray.shutdown()
    assert rep.n_run == len(cells)
    pd.testing.assert_frame_equal(a.drop(columns=DROP), b.drop(columns=DROP))
