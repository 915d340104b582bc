"""Throwaway venvs that see some of this interpreter's installed packages, linked in (the install tests)."""

from __future__ import annotations

import re
import subprocess
import sysconfig
import venv
from collections.abc import Iterable
from pathlib import Path


def venv_with_links(path: Path, entries: Iterable[Path], *also: Path) -> Path:
    """A fresh venv at ``path`` (no pip) whose path ends with links to ``entries`` (site-packages files/folders).

    The entries are linked into one folder that a ``.pth`` file appends to the venv's path, after
    the venv's own site-packages (``also``: more folders after it); ``.pth`` files are never
    linked, so an editable install cannot leak in, and the first entry of a name wins.
    Returns the venv's python.
    """
    venv.EnvBuilder(with_pip=False).create(path)
    python = path / "bin" / "python"
    deps = path / "deps"
    deps.mkdir()
    for entry in entries:
        if entry.exists() and entry.suffix != ".pth" and not (deps / entry.name).exists():
            (deps / entry.name).symlink_to(entry)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "zz_shared_deps.pth").write_text("".join(f"{p}\n" for p in (deps, *also)))
    return python


def venv_seeing_site(path: Path, hidden: re.Pattern, *also: Path) -> Path:
    """:func:`venv_with_links` to the entries of this interpreter's site-packages that ``hidden`` does not match."""
    sites = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    entries = [e for site in sites for e in sorted(Path(site).iterdir()) if not hidden.match(e.name)]
    return venv_with_links(path, entries, *also)
