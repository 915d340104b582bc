"""One resume store for every scenario's experiments: content-keyed rows in atomic Parquet chunks.

A *cell* is one unit of work of an experiment (a simulated CGRSP day, an edge scheduling
point, a MIG data set). Its key is a hash of its configuration (a JSON-able mapping) and of
the store's *code version*: the package version plus a hash of the source files that decide
the cell's numbers. Changing any of them gives new keys, so stale results are never reused;
they are simply not found (and stay on disk until the folder is removed).

Finished cells are appended as Parquet *chunks* ``<root>/chunk-*.parquet``, each written
atomically (temporary dot-prefixed file + rename): a half-written chunk is never read. A cell
may have several rows (all carry its key); when two chunks hold the same key (two runs that
raced), the first chunk's rows win.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.core.io import atomic_write_table

KEY = "key"  # the column that holds each row's cell key

# The heuristics' folder is `agents/` in a checkout and `gpu_sched_agents/` where the wheel is
# installed; both hash under the checkout's name, so the fingerprint is the same in either.
_INSTALLED_AS = {"agents/": "gpu_sched_agents/"}
# A file moved without a change to its code hashes under its old name (new path -> old path),
# so a move does not make the stores' finished cells stale; add an entry with the move.
MOVED: dict[str, str] = {"gpu_sched_env/cgrsp/bounds.py": "studies/cgrsp/bounds.py"}


@lru_cache(maxsize=32)
def source_fingerprint(patterns: tuple[str, ...]) -> str:
    """Hash of the files matching ``patterns`` (globs relative to the repository root).

    Raises ``FileNotFoundError`` for a pattern that matches nothing: a fingerprint that
    silently skipped a folder would not invalidate anything when that folder changes.
    """
    import gpu_sched_env

    root = Path(gpu_sched_env.__file__).resolve().parent.parent
    h = hashlib.sha1()
    for pattern in patterns:
        files = sorted(root.glob(pattern))
        prefix = next((p for p in _INSTALLED_AS if pattern.startswith(p)), None)
        if not files and prefix is not None:
            installed = _INSTALLED_AS[prefix]
            files = sorted(root.glob(installed + pattern[len(prefix) :]))
            names = [prefix + f.relative_to(root / installed).as_posix() for f in files]
        else:
            names = [f.relative_to(root).as_posix() for f in files]
        if not files:
            raise FileNotFoundError(f"source_fingerprint: no file matches {pattern!r} under {root}")
        for name, f in zip(names, files):
            h.update(MOVED.get(name, name).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def user_cache_dir() -> Path:
    """The project's folder in the user's cache: ``$XDG_CACHE_HOME/gpu_sched_env`` (``~/.cache/...`` when unset).

    Where pip keeps its cache: a fresh clone on the same machine finds what an earlier one stored.
    """
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu_sched_env"


def package_version() -> str:
    """The installed package's version (``gpu_sched_env.__version__``): part of every code version."""
    import gpu_sched_env

    return gpu_sched_env.__version__


def code_version(sources: Sequence[str]) -> str:
    """``<package version>+<hash of the sources>``: what a stored cell's numbers depend on besides its config."""
    import gpu_sched_env

    return f"{gpu_sched_env.__version__}+{source_fingerprint(tuple(sources))}"


def config_key(config: Mapping[str, Any], version: str) -> str:
    """Stable key of a cell's configuration under a code version (order of the mapping is irrelevant)."""
    blob = json.dumps({"config": dict(config), "v": version}, sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:20]


class CellStore:
    """Append-only store of finished cells under ``root``, keyed by config and code version.

    Args:
        root: folder of the chunk files (created on the first write).
        sources: globs of the source files whose code decides a cell's numbers; the code
            version is the package version plus their hash.
        version: the code version itself (instead of ``sources``; tests use a fixed one).
    """

    def __init__(self, root: str | os.PathLike, sources: Sequence[str] = (), *, version: str | None = None) -> None:
        if version is None and not sources:
            raise ValueError("CellStore: give the source globs that decide a cell's numbers (or a version)")
        self.root = Path(root)
        self._sources = tuple(sources)
        self._version = version
        self._n = 0

    @property
    def version(self) -> str:
        """The code version mixed into every key."""
        if self._version is None:
            self._version = code_version(self._sources)
        return self._version

    def key(self, config: Mapping[str, Any]) -> str:
        """Key of a cell with this configuration under the store's code version."""
        return config_key(config, self.version)

    def chunks(self) -> list[Path]:
        """Finished chunk files (temporary files are dot-prefixed and never matched)."""
        return sorted(self.root.glob("chunk-*.parquet")) if self.root.is_dir() else []

    def load(self) -> pd.DataFrame:
        """Every stored row; for a key stored in several chunks, the first chunk's rows."""
        parts = [pd.read_parquet(f).assign(_chunk=i) for i, f in enumerate(self.chunks())]
        if not parts:
            return pd.DataFrame({KEY: pd.Series([], dtype=str)})
        df = pd.concat(parts, ignore_index=True)
        first = df.groupby(KEY)["_chunk"].transform("min")
        return df[df["_chunk"] == first].drop(columns="_chunk").reset_index(drop=True)

    def keys(self) -> set[str]:
        """Keys of the stored cells."""
        parts = [pd.read_parquet(f, columns=[KEY])[KEY] for f in self.chunks()]
        return set(pd.concat(parts)) if parts else set()

    def rows(self, keys: Sequence[str]) -> pd.DataFrame:
        """The stored rows of ``keys``, in that order (a key's rows in their stored order).

        Raises ``KeyError`` naming a key that is not stored.
        """
        stored = self.load()
        missing = [k for k in dict.fromkeys(keys) if k not in set(stored[KEY])]
        if missing:
            raise KeyError(f"{len(missing)} cells are not in the store {self.root} (e.g. key {missing[0]})")
        if not stored[KEY].duplicated().any():  # one row per cell: a plain look-up
            return stored.set_index(KEY).loc[list(keys)].reset_index()
        by_key = dict(tuple(stored.groupby(KEY, sort=False)))
        parts = [by_key[k] for k in keys]
        return pd.concat(parts, ignore_index=True) if parts else stored.iloc[:0]

    def write_chunk(self, rows: Sequence[Mapping[str, Any]]) -> Path | None:
        """Write ``rows`` (each with its ``key``) as one new chunk atomically (nothing for an empty list)."""
        if not rows:
            return None
        if any(KEY not in r for r in rows):
            raise ValueError(f"CellStore.write_chunk: every row needs a {KEY!r} column")
        self._n += 1
        name = f"chunk-{time.time_ns()}-{os.getpid()}-{self._n:04d}.parquet"
        return atomic_write_table(self.root / name, pd.DataFrame(list(rows)))

    def writer(self, flush_every: int = 200, flush_s: float = 15.0) -> ChunkWriter:
        """A buffer that writes a chunk every ``flush_every`` rows or ``flush_s`` seconds and on exit."""
        return ChunkWriter(self, flush_every, flush_s)


class ChunkWriter:
    """Buffered rows of finished cells; use as a context manager so that an interrupt keeps them."""

    def __init__(self, store: CellStore, flush_every: int, flush_s: float) -> None:
        self.store, self.flush_every, self.flush_s = store, flush_every, flush_s
        self._buf: list[Mapping[str, Any]] = []
        self._last = time.monotonic()

    def add(self, key: str, rows: Iterable[Mapping[str, Any]]) -> None:
        """Add one cell's rows under ``key``; flush when the buffer is due."""
        self._buf.extend({**r, KEY: key} for r in rows)
        if len(self._buf) >= self.flush_every or time.monotonic() - self._last >= self.flush_s:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one chunk."""
        self.store.write_chunk(self._buf)
        self._buf, self._last = [], time.monotonic()

    def __enter__(self) -> ChunkWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()


REFERENCE_CACHE = "GPU_SCHED_REFERENCE_CACHE"  # "0": neither read nor store deterministic reference results


def reference_cache(name: str, sources: Sequence[str]) -> CellStore | None:
    """The cross-run store ``<user cache>/<name>`` of a deterministic reference (None under ``REFERENCE_CACHE=0``).

    For results that depend only on their cell's configuration and the code in ``sources`` (a
    rule's days, a heuristic's days): every run on this machine shares them.
    """
    if os.environ.get(REFERENCE_CACHE, "1") == "0":
        return None
    return CellStore(user_cache_dir() / name, sources)


def stored_rows(
    store: CellStore | None,
    cells: Mapping[Any, Mapping[str, Any]],
    compute: Any,
    unit: str,
) -> pd.DataFrame:
    """The rows of every cell of ``cells`` (id → configuration): stored ones read, the others computed and stored.

    ``compute(ids)`` returns the rows of those cells, each with its id in column ``unit``; the
    result holds the stored and the new rows (no key column), in no particular order. Without a
    store everything is computed.
    """
    ids = list(cells)
    if store is None:
        return compute(ids)
    keys = {u: store.key(c) for u, c in cells.items()}
    stored = store.load()
    have = set(stored[KEY]) & set(keys.values())
    todo = [u for u in ids if keys[u] not in have]
    parts = [stored[stored[KEY].isin(have)].drop(columns=KEY)] if have else []
    if todo:
        new = compute(todo)
        store.write_chunk([{**r, KEY: keys[r[unit]]} for r in new.to_dict("records")])
        parts.append(new)
    return pd.concat(parts, ignore_index=True)


def in_grid_order(rows: pd.DataFrame, policies: Sequence[str], seeds: Sequence[int]) -> pd.DataFrame:
    """Rows of a policy × seed grid (e.g. :func:`stored_rows`' stored and new ones) policy-major, seeds in order.

    The order ``gpu_sched_env.cgrsp.batch.run_grid`` computes them in. (Here, not in ``batch.py``:
    that file's hash keys the simulator's stored cells, and an order helper does not change a day.)
    """
    policies, seeds = list(policies), [int(s) for s in seeds]
    order = rows.policy.map(policies.index) * len(seeds) + rows.seed.astype(int).map(seeds.index)
    return rows.iloc[order.to_numpy().argsort(kind="stable")].reset_index(drop=True)


__all__ = [
    "KEY",
    "REFERENCE_CACHE",
    "CellStore",
    "ChunkWriter",
    "code_version",
    "config_key",
    "in_grid_order",
    "package_version",
    "reference_cache",
    "source_fingerprint",
    "stored_rows",
    "user_cache_dir",
]
