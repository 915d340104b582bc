"""Output folders a command owns: a manifest of what it wrote there, and a lock while it writes.

A command may write into a folder when

* the folder does not exist (it is created) or is empty, or
* the folder holds a manifest (:data:`MANIFEST`, JSON) naming the same command and the same
  owner (for ``gpu-sched evaluate``: the same policy), or
* ``force`` is given (``--force``): the command writes beside the files there.

Anything else is refused with a :class:`~gpu_sched_env.core.errors.ConfigError` naming the
folder (:func:`check`, which writes nothing). Whatever the case, a command replaces or deletes
only files its manifest records as its own: a file of the same name that it did not write is
refused by name, ``force`` or not, so no user file is ever lost.

A :class:`ConfigError` raised while the command writes a folder that :func:`claim` created (a
bad input only the work itself finds, such as a policy that returns an illegal action) removes
the command's files and that folder again: a refused command leaves nothing behind.

While a command writes a folder it holds an exclusive, non-blocking ``fcntl.flock`` on
:data:`LOCKFILE` inside it (:func:`claim`): a second writer of the same folder is refused
naming the folder and the process that holds it. The lock is the operating system's: it goes
with the process, so a killed writer never leaves the folder locked.

    plan = check(out, "gpu-sched evaluate", {"policy": ...}, files=["report.md"], force=args.force)
    with claim(plan) as folder:        # created, locked, manifest written (the files recorded)
        ...write out / "report.md"...
        folder.remove_own("days/old.csv")   # deletes a file only if the manifest records it
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_json

MANIFEST = ".gpu-sched.json"
LOCKFILE = ".gpu-sched.lock"
SCHEMA = "gpu_sched_env/outdir/1"
OURS = frozenset({MANIFEST, LOCKFILE})  # the folder's own bookkeeping: never a user's file

# the manifest a folder made before manifests existed would have had (None: it is not one)
Legacy = Callable[[Path], "dict[str, Any] | None"]


def read_manifest(path: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest of folder ``path`` (None when there is none; ConfigError when it is not readable JSON)."""
    f = Path(path) / MANIFEST
    if not f.is_file():
        return None
    try:
        data = json.loads(f.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(
            f"{f}: not a readable manifest ({type(e).__name__}: {e}); move it away or remove it"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("files", []), list):
        raise ConfigError(f"{f}: not a manifest of gpu-sched (schema {SCHEMA}); move it away or remove it")
    return data


def _first_user_file(path: Path) -> str | None:
    """A file (or folder) in ``path`` that is not the folder's bookkeeping, relative; None when there is none."""
    for top, dirs, names in os.walk(path):  # lazily, a folder's own files first: a large folder is not listed whole
        dirs.sort()
        for name in sorted(names):
            rel = (Path(top) / name).relative_to(path).as_posix()
            if rel not in OURS:
                return rel
    return None


@dataclass
class Plan:
    """What :func:`check` found: the folder may be written by ``command`` for ``owner`` (see :func:`claim`)."""

    path: Path
    command: str
    owner: dict[str, Any]
    files: tuple[str, ...]  # what the command will write (relative paths), recorded as its own
    flag: str
    info: dict[str, Any] = field(default_factory=dict)  # more to note in the manifest (the protocol …)
    force: bool = False
    legacy: Legacy | None = None
    ours: frozenset[str] = frozenset()  # the files the manifest there records as this command's


def _describe(owner: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v!r}" for k, v in owner.items() if v is not None) or "owner"


def check(
    path: str | os.PathLike,
    command: str,
    owner: Mapping[str, Any],
    *,
    files: Iterable[str] = (),
    force: bool = False,
    flag: str = "--out",
    info: Mapping[str, Any] | None = None,
    legacy: Legacy | None = None,
) -> Plan:
    """Raise ConfigError unless ``command`` may write ``files`` into folder ``path`` for ``owner``; writes nothing.

    ``owner``: what the folder's results belong to (JSON-able; compared whole). ``legacy``: for a
    folder without a manifest, the manifest the command's earlier versions would have written
    (they wrote none; its ``source`` names the file it was read from), or None. ``flag`` names
    the option in the messages.
    """
    path = Path(path)
    where = f"{flag} {str(path)!r}"
    owner = json.loads(json.dumps(dict(owner), default=str))
    files = tuple(dict.fromkeys(Path(f).as_posix() for f in files))
    plan = Plan(path, command, owner, files, flag, dict(info or {}), force, legacy)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{where} is a file; pass a folder")
    if not path.exists():
        parent = path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise ConfigError(f"{where}: cannot be created, {str(parent)!r} is a file")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise ConfigError(f"{where}: cannot be created, {str(parent)!r} is not writable; choose another {flag}")
        return plan
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{where}: the folder is not writable; choose another {flag}")
    manifest = read_manifest(path)
    if manifest is None and legacy is not None:
        manifest = legacy(path)
    source = manifest.get("source", MANIFEST) if manifest else MANIFEST  # the file that says who wrote the folder
    if manifest is None:
        user = _first_user_file(path)
        if user is not None and not force:
            raise ConfigError(
                f"{where} holds files {command} did not write (e.g. {user!r}; no {MANIFEST} there): pass --force "
                f"to write beside them (none is replaced or deleted) or choose another {flag}"
            )
    elif manifest.get("command") != command:
        if not force:
            raise ConfigError(
                f"{where} belongs to {manifest.get('command')!r} (its {source}), not {command}: choose another "
                f"{flag} or pass --force to write beside its files (none is replaced or deleted)"
            )
    else:
        if manifest.get("owner") != owner and not force:
            theirs = manifest.get("owner") if isinstance(manifest.get("owner"), dict) else {}
            raise ConfigError(
                f"{where} holds the results of another {_describe(theirs)} (its {source}), not of "
                f"{_describe(owner)}: choose another {flag} or pass --force to write into it (its files are replaced)"
            )
        plan.ours = frozenset(str(f) for f in manifest.get("files", []))  # this command wrote them
    for rel in files:
        if rel not in plan.ours and (path / rel).exists():
            raise ConfigError(
                f"{where}: {rel!r} is there and {command} did not write it; nothing it did not write is replaced "
                f"(--force or not): move it or choose another {flag}"
            )
    return plan


def _holder(lock: Path) -> str:
    try:
        h = json.loads(lock.read_text())
        return f"pid {h['pid']}: {h['what']}, since {h['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


class Folder:
    """A claimed output folder: its path, and what its manifest records as the command's own."""

    def __init__(self, plan: Plan, manifest: dict[str, Any]) -> None:
        self.plan, self.path, self._manifest = plan, plan.path, manifest

    @property
    def files(self) -> list[str]:
        """The files the manifest records as the command's (relative; some may be gone)."""
        return list(self._manifest["files"])

    def own(self, rel: str | os.PathLike) -> bool:
        """Whether the manifest records ``rel`` (relative to the folder) as the command's."""
        return Path(rel).as_posix() in self._manifest["files"]

    def record(self, rels: Iterable[str | os.PathLike]) -> None:
        """Record more files as the command's (before they are written)."""
        new = [Path(r).as_posix() for r in rels]
        clash = [r for r in new if r not in self._manifest["files"] and (self.path / r).exists()]
        if clash:
            raise ConfigError(
                f"{self.plan.flag} {str(self.path)!r}: {clash[0]!r} is there and {self.plan.command} did not write "
                "it; nothing it did not write is replaced: move it"
            )
        self._manifest["files"] = sorted(set(self._manifest["files"]) | set(new))
        self._write()

    def remove_own(self, rel: str | os.PathLike) -> bool:
        """Delete ``rel`` if the manifest records it as the command's; returns whether a file was deleted."""
        f = self.path / rel
        if not self.own(rel) or not f.is_file():
            return False
        f.unlink()
        return True

    def _write(self) -> None:
        self._manifest["updated"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        atomic_write_json(self.path / MANIFEST, self._manifest)


@contextmanager
def claim(plan: Plan) -> Iterator[Folder]:
    """Create and lock ``plan``'s folder, check it again under the lock, write its manifest; unlock on exit.

    Raises ConfigError when another process holds the folder's lock (naming the folder and that
    process), when the folder cannot be created, or when it changed hands since :func:`check`.
    """
    import fcntl

    path, where = plan.path, f"{plan.flag} {str(plan.path)!r}"
    made = [p for p in (path, *path.parents) if not p.exists()]  # the folders this claim creates
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / LOCKFILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise ConfigError(f"{where}: cannot be created or written ({e.strerror or e})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            raise ConfigError(
                f"{where} is being written by another process ({_holder(path / LOCKFILE)}): wait for it to finish "
                f"or choose another {plan.flag}"
            ) from None
        label = plan.info.get("label") or _describe(plan.owner)
        holder = {"pid": os.getpid(), "what": f"{plan.command} {label}", "since": time.strftime("%H:%M:%S")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode(), 0)
        # the folder may have changed hands between check() and the lock: the lock holder's view decides
        again = check(
            path,
            plan.command,
            plan.owner,
            files=plan.files,
            force=plan.force,
            flag=plan.flag,
            info=plan.info,
            legacy=plan.legacy,
        )
        old = read_manifest(path) or {}
        mine = old.get("command") == plan.command and old.get("owner") == again.owner
        manifest = {
            "schema": SCHEMA,
            "command": plan.command,
            "owner": again.owner,
            **again.info,
            "created": (old.get("created") if mine else None) or time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "files": sorted(again.ours | set(again.files)),
        }
        if old and not mine:  # --force over another's manifest: what it recorded stays on record
            manifest["previous"] = {k: old.get(k) for k in ("command", "owner", "created", "files")}
        folder = Folder(again, manifest)
        folder._write()
        try:
            yield folder
        except ConfigError:
            if made:  # a bad input found while writing a folder it made: the folder goes, as if never claimed
                _remove(folder, made)
            raise
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _remove(folder: Folder, made: list[Path]) -> None:
    """Delete the command's files in ``folder`` and the folders in ``made`` that are left empty."""
    for rel in [*folder.files, MANIFEST, LOCKFILE]:
        f = folder.path / rel
        if f.is_file():
            f.unlink()
    for d in sorted({p for p in folder.path.rglob("*") if p.is_dir()}, key=lambda p: -len(p.parts)):
        if not any(d.iterdir()):
            d.rmdir()
    for d in made:  # innermost first
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()


__all__ = ["LOCKFILE", "MANIFEST", "SCHEMA", "Folder", "Plan", "check", "claim", "read_manifest"]
