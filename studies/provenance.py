"""What made a study's output folder: each command run on it and the commit of the code that ran it.

A study that writes ``<out>/rows.csv`` calls :func:`record` first, so ``<out>/commands.json`` lists
every command that added rows there (a resumable study may be run several times on one folder, with
other ``--regimes`` or ``--seeds``), each with ``git rev-parse HEAD`` of the checkout and whether
its tracked files had changes. The result pages' tables (:mod:`studies.results`) show these
commands beside the rows they made.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout whose code runs the study


def checkout() -> dict[str, object]:
    """``{"commit": HEAD, "dirty": tracked files changed}`` of the checkout; ``commit`` None outside git."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
        status = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        )
    except OSError:  # no git on this machine
        return {"commit": None, "dirty": None}
    if head.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def record(out: Path, study: str, argv: Sequence[str] | None) -> list[dict[str, object]]:
    """Append ``python -m studies <study> <argv>`` and the checkout to ``out/commands.json``; the list.

    ``argv`` None is the process's own (``sys.argv[1:]``). A command already listed with the same
    commit is not listed twice (a resumed run).
    """
    from gpu_sched_env.core.io import atomic_write_json

    args = list(sys.argv[1:] if argv is None else argv)
    entry = {"command": shlex.join(["python", "-m", "studies", study, *args]), **checkout()}
    path = out / "commands.json"
    listed = json.loads(path.read_text()) if path.is_file() else []
    if entry not in listed:
        listed.append(entry)
        atomic_write_json(path, listed)
    return listed
