"""What made a study's output folder: each command that added rows there, and the code and processor that ran it.

A study calls :func:`record` each time it writes new rows into ``<out>/rows.csv``, so
``<out>/commands.json`` lists every command that added rows there (a resumable study may be run
several times on one folder, with other ``--regimes`` or ``--seeds``; a rerun that finds its rows
there adds nothing), each with ``git rev-parse HEAD`` of the checkout, whether its tracked files had
changes, and the processor it ran on (a trained network's numbers depend on the CPU's math
kernels). The result pages' tables (:mod:`studies.results`) show these commands beside the rows.
"""

from __future__ import annotations

import functools
import json
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout whose code runs the study


@functools.cache
def checkout() -> dict[str, object]:
    """``{"commit": HEAD, "dirty": tracked files changed}`` of the checkout; ``commit`` None outside git.

    Read once per process: a study calls it as it starts, so a commit made while it runs is not
    named as the code that ran.
    """
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


def processor() -> str:
    """The CPU it ran on, e.g. ``"AMD EPYC (x86_64, AVX-512)"``: a learned network depends on its math kernels."""
    model, flags = "", ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and not model:
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = value
    except OSError:  # not Linux: the platform's own name
        model = platform.processor()
    isa = "AVX-512" if " avx512f" in f" {flags}" else "AVX2" if " avx2" in f" {flags}" else ""
    return f"{model or 'unknown'} ({', '.join(x for x in (platform.machine(), isa) if x)})"


def record(out: Path, study: str, argv: Sequence[str] | None) -> list[dict[str, object]]:
    """Append ``python -m studies <study> <argv>``, the checkout and the processor to ``out/commands.json``; the list.

    ``argv`` None is the process's own (``sys.argv[1:]``). A command already listed with the same
    commit is listed once (a resumed run), with this run's fields.
    """
    from gpu_sched_env.core.io import atomic_write_json

    args = list(sys.argv[1:] if argv is None else argv)
    entry = {"command": shlex.join(["python", "-m", "studies", study, *args]), **checkout(), "cpu": processor()}
    path = out / "commands.json"
    listed = json.loads(path.read_text()) if path.is_file() else []
    same = [e for e in listed if (e["command"], e.get("commit")) == (entry["command"], entry["commit"])]
    if same != [entry]:
        listed = [e for e in listed if e not in same] + [entry]
        atomic_write_json(path, listed)
    return listed


def merge(out: Path, folders: Sequence[Path]) -> list[dict[str, object]]:
    """Append to ``out/commands.json`` the commands of ``folders`` whose rows were merged into ``out``'s; the list."""
    from gpu_sched_env.core.io import atomic_write_json

    path = out / "commands.json"
    listed = json.loads(path.read_text()) if path.is_file() else []
    for folder in folders:
        theirs = folder / "commands.json"
        for entry in json.loads(theirs.read_text()) if theirs.is_file() else []:
            if entry not in listed:
                listed.append(entry)
    atomic_write_json(path, listed)
    return listed
