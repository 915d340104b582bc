"""A throwaway venv that sees this interpreter's third-party packages but the ones a test hides (an install's test)."""

from __future__ import annotations

import re
import subprocess
import sysconfig
import venv
from pathlib import Path


def venv_seeing_site(path: Path, hidden: re.Pattern, *also: Path) -> Path:
    """A fresh venv at ``path`` (no pip) whose path ends with this interpreter's site-packages, less ``hidden``.

    The site-packages entries whose names ``hidden`` does not match are linked into one folder that
    a ``.pth`` file appends to the venv's path, after the venv's own site-packages (``also``: more
    folders after it); ``.pth`` files are never linked, so an editable install cannot leak in.
    Returns the venv's python.
    """
    venv.EnvBuilder(with_pip=False).create(path)
    python = path / "bin" / "python"
    deps = path / "deps"
    deps.mkdir()
    for site in dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")):
        for entry in Path(site).iterdir():
            if not hidden.match(entry.name) and entry.suffix != ".pth" and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "zz_shared_deps.pth").write_text("".join(f"{p}\n" for p in (deps, *also)))
    return python
