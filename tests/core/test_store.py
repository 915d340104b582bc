"""The shared resume store: keys follow config and code version, chunks are atomic, cells may have many rows."""

import pandas as pd
import pytest

from gpu_sched_env.core.store import MOVED, CellStore, code_version, config_key, source_fingerprint


def test_key_depends_on_config_and_version_not_on_order():
    a = config_key({"x": 1, "y": "b"}, "v1")
    assert a == config_key({"y": "b", "x": 1}, "v1")
    assert len({a, config_key({"x": 2, "y": "b"}, "v1"), config_key({"x": 1, "y": "b"}, "v2")}) == 3


def test_code_version_is_package_version_plus_source_hash(tmp_path):
    import gpu_sched_env

    v = code_version(("gpu_sched_env/edge/*.py",))
    assert v.startswith(gpu_sched_env.__version__ + "+")
    assert v != code_version(("gpu_sched_env/mig/*.py",))
    # the heuristics hash the same whether found as agents/ (checkout) or gpu_sched_agents/ (wheel)
    assert len(source_fingerprint(("agents/heuristics/edge/__init__.py",))) == 12
    with pytest.raises(FileNotFoundError, match="no_such_folder"):
        source_fingerprint(("no_such_folder/*.py",))
    with pytest.raises(ValueError, match="source globs"):
        CellStore(tmp_path)


def test_a_moved_file_hashes_under_its_old_name(monkeypatch):
    # a move is no change of code: with its entry in MOVED, the stores' finished cells stay current
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert all((root / new).is_file() and not (root / old).exists() for new, old in MOVED.items())
    path = "gpu_sched_env/cgrsp/bounds.py"  # moved from studies/cgrsp/bounds.py (MOVED)
    source_fingerprint.cache_clear()
    here = source_fingerprint((path,))
    monkeypatch.setattr("gpu_sched_env.core.store.MOVED", {path: "studies/cgrsp/old_home.py"})
    source_fingerprint.cache_clear()
    try:
        assert source_fingerprint((path,)) != here  # the name is hashed: the alias is what keeps it
    finally:
        source_fingerprint.cache_clear()


def test_rows_round_trip_with_multi_row_cells_and_first_chunk_wins(tmp_path):
    store = CellStore(tmp_path / "cells", version="v")
    k1, k2 = store.key({"seed": 1}), store.key({"seed": 2})
    with store.writer(flush_every=10**6) as w:
        w.add(k1, [{"method": "a", "m": 1.0}, {"method": "b", "m": 2.0}])
        w.add(k2, [{"method": "a", "m": 3.0}])
        assert store.chunks() == []  # buffered until the writer closes
    assert len(store.chunks()) == 1 and store.keys() == {k1, k2}
    store.write_chunk([{"key": k2, "method": "a", "m": 99.0}])  # a racing duplicate: ignored
    (store.root / ".chunk-half.parquet.tmp").write_bytes(b"garbage")  # a dead temporary file: ignored
    df = store.rows([k2, k1])
    assert df["m"].tolist() == [3.0, 1.0, 2.0] and df["key"].tolist() == [k2, k1, k1]
    with pytest.raises(KeyError, match="1 cells are not in the store"):
        store.rows([k1, store.key({"seed": 3})])


def test_writer_flushes_on_an_exception(tmp_path):
    store = CellStore(tmp_path, version="v")
    with pytest.raises(KeyboardInterrupt), store.writer() as w:
        w.add("k", [{"m": 1}])
        raise KeyboardInterrupt
    pd.testing.assert_frame_equal(store.load(), pd.DataFrame({"m": [1], "key": ["k"]}))


def test_stored_rows_computes_only_the_cells_not_stored_and_serves_them_equal(tmp_path, monkeypatch):
    from gpu_sched_env.core.store import REFERENCE_CACHE, reference_cache, stored_rows

    calls = []

    def compute(ids):
        calls.append(list(ids))
        return pd.DataFrame([{"seed": i, "policy": p, "value": i * 10 + len(p)} for i in ids for p in ("a", "bb")])

    store = CellStore(tmp_path / "s", version="v1")
    cells = {i: {"seed": i, "day": "quiet"} for i in (3, 1, 2)}
    first = stored_rows(store, {3: cells[3]}, compute, "seed")
    both = stored_rows(store, cells, compute, "seed")
    assert calls == [[3], [1, 2]]  # seed 3 was read, not computed again
    again = stored_rows(store, cells, compute, "seed")
    assert calls == [[3], [1, 2]]
    key = ["seed", "policy"]
    pd.testing.assert_frame_equal(
        again.sort_values(key).reset_index(drop=True), compute(sorted(cells)).sort_values(key).reset_index(drop=True)
    )
    assert len(first) == 2 and len(both) == 6
    assert len(stored_rows(CellStore(tmp_path / "s", version="v2"), cells, compute, "seed")) == 6  # new code: new keys
    assert calls[-1] == [3, 1, 2]
    assert len(stored_rows(None, cells, compute, "seed")) == 6 and calls[-1] == [3, 1, 2]  # no store: all computed
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(REFERENCE_CACHE, raising=False)  # tests/conftest.py turns the stores off
    assert reference_cache("x", ["gpu_sched_env/core/store.py"]).root == tmp_path / "cache" / "gpu_sched_env" / "x"
    monkeypatch.setenv(REFERENCE_CACHE, "0")
    assert reference_cache("x", ["gpu_sched_env/core/store.py"]) is None
