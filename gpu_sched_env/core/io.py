"""Atomic file writes so an interrupted run never leaves a half-written result."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd


def _umask() -> int:
    """The process's umask (read once: reading it means setting it, which is not thread-safe)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()
FILE_MODE = 0o666 & ~_UMASK  # what open() would give a new file (0644 under the usual umask 022)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``.

    The file gets the mode a plain ``open()`` would give it (:data:`FILE_MODE`), not the
    0600 of ``mkstemp``'s temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Atomically write UTF-8 text."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def print_and_write(text: str, out: str | os.PathLike | None = None) -> None:
    """Print a study's table and, when ``out`` is given, write it there too (atomically)."""
    if out:
        atomic_write_text(out, text)
    print(text)


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Atomically write JSON (sorted keys, indented)."""
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def atomic_write_table(path: str | os.PathLike, df: pd.DataFrame) -> Path:
    """Atomically write a DataFrame as CSV or Parquet, chosen by the file suffix."""
    path = Path(path)
    if path.suffix == ".parquet":
        import io as _io

        buf = _io.BytesIO()
        df.to_parquet(buf, index=False)
        return atomic_write_bytes(path, buf.getvalue())
    if path.suffix == ".csv":
        return atomic_write_text(path, df.to_csv(index=False))
    raise ValueError(f"table path {str(path)!r}: suffix must be .csv or .parquet")


def replace_doc_section(path: str | os.PathLike, key: str, body: str) -> Path:
    """Atomically replace the text between ``<!-- key:start -->`` and ``<!-- key:end -->``.

    Lets a script keep a generated table inside a hand-written Markdown file. Raises
    ``ValueError`` naming the file and the key when either marker is missing.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    start, end = f"<!-- {key}:start -->", f"<!-- {key}:end -->"
    i, j = text.find(start), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{path}: markers {start!r} ... {end!r} not found (in that order)")
    return atomic_write_text(path, text[: i + len(start)] + "\n" + body.strip("\n") + "\n" + text[j:])
