"""Atomic file writes so an interrupted run never leaves a half-written result.

Also the output checks every command runs on its output paths before it computes anything
(:func:`check_output_file`, :func:`check_output_dir`): a path that cannot be written is a
one-line :class:`~gpu_sched_env.core.errors.ConfigError` naming the option, not an ``OSError``
after the work is done.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.core.errors import ConfigError


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


def file_sha256(path: str | os.PathLike) -> str:
    """The hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _writable_folder(flag: str, path: Path, folder: Path) -> None:
    """Refuse unless the folders down to ``folder`` are (or can become) folders this process writes in.

    The deepest part of ``folder`` that exists must be a folder, and one in which a file can be
    created: checked by creating (and removing) an empty one, which is the only test that holds
    for every case (root's permissions, read-only mounts, /proc).
    """
    given = f"{flag} {str(path)!r}"
    base = folder
    while not base.exists():
        if base.is_symlink():  # a dangling link where a folder would be created
            raise ConfigError(f"{given}: {str(base)!r} is a broken link; allowed: a path in a writable folder")
        base = base.parent
    if not base.is_dir():
        raise ConfigError(f"{given}: {str(base)!r} is a file, not a folder; allowed: a path in a writable folder")
    try:
        fd, probe = tempfile.mkstemp(dir=base, prefix=".write-check-")
    except OSError as e:
        raise ConfigError(
            f"{given}: cannot write in {str(base)!r} ({e.strerror or e}); allowed: a path in a writable folder"
        ) from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(flag: str, path: str | os.PathLike, suffixes: Iterable[str] | None = None) -> Path:
    """``path`` as an output file of option ``flag``, checked before anything is computed.

    Raises:
        ConfigError: a suffix not in ``suffixes`` (case as given), a path that is a folder, a
            parent that is a file, or a folder this process cannot write in.
    """
    path = Path(path)
    if suffixes is not None:
        allowed = tuple(suffixes)
        if path.suffix not in allowed:
            raise ConfigError(
                f"{flag} {str(path)!r}: the suffix {path.suffix or '(none)'!r} is not allowed; allowed: "
                + ", ".join(allowed)
            )
    if path.is_dir():
        raise ConfigError(f"{flag} {str(path)!r}: is a folder; allowed: a file path")
    _writable_folder(flag, path, path.parent)
    return path


def check_output_dir(flag: str, path: str | os.PathLike, files: Iterable[str] = ()) -> Path:
    """``path`` as an output folder of option ``flag`` (to hold ``files``), checked before anything is computed.

    Raises:
        ConfigError: a path that is a file (or has a file among its parents), a folder this
            process cannot write in, or one of ``files`` that exists there as a folder.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{flag} {str(path)!r}: is a file; allowed: a folder")
    _writable_folder(flag, path, path)
    for name in files:
        if (path / name).is_dir():
            raise ConfigError(f"{flag} {str(path)!r}: {str(path / name)!r} is a folder; allowed: a file there")
    return path
