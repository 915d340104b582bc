"""Every command the README and docs name exists in the one command tree and answers ``--help``.

The pages' code (fenced blocks and inline spans, a span's text joined across its line breaks) is read for
``gpu-sched …``, ``python -m studies …`` (also behind a path: ``.venv/bin/python -m studies …``), the
checkout's entry point (``train.py``) and ``scripts/…``; each spelling is
resolved against the tables (:data:`gpu_sched_env.cli.GPU_SCHED`, :data:`studies.commands.STUDIES`)
and each command it reaches runs ``--help`` in this process (the entry points in a child).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_sched_env.cli import GPU_SCHED
from gpu_sched_env.core.commands import Command, Group, dispatch, find, walk
from studies.commands import PROG, STUDIES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOORS = {"gpu-sched": GPU_SCHED, PROG: STUDIES}
FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.S | re.M)
SPAN = re.compile(r"`([^`]+)`")  # an inline span may wrap across lines (Markdown joins them with a space)
# a door (python behind a path such as .venv/bin/), then the words that may name commands (lower-case names,
# and a part's flag with its name: ``reward --part scale``, ``versus-rule --engine jax``; other options and
# placeholders stop it)
SPELLING = re.compile(
    r"(?<![\w/.~-])(gpu-sched|(?:[\w.~-]*/)*python3? -m studies)"
    r"((?:[ \t]+(?:--(?:part|engine)[ \t]+)?[a-z][a-z0-9_-]*)*)"
)
# the pages' made-up commands: docs/architecture.md's recipe for a new environment ``Foo`` (``foo-experiment``)
EXAMPLE = re.compile(r"^foo(?:-|$)")
ENTRY = re.compile(r"(?<![\w-])(?:python3?|bash|sh)[ \t]+((?:scripts/)?[\w-]+\.(?:py|sh))\b")


def _code(text: str) -> list[str]:
    """The code of a Markdown page: fenced blocks, then inline spans outside them."""
    blocks = [m[2] for m in FENCE.finditer(text)]
    return blocks + [re.sub(r"[ \t]*\n[ \t]*", " ", span) for span in SPAN.findall(FENCE.sub("", text))]


def documented() -> dict[tuple[str, tuple[str, ...]], list[str]]:
    """``(door, words) -> pages`` for every command spelling the pages hold."""
    out: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for page in PAGES:
        for code in _code(page.read_text(encoding="utf-8")):
            for door, words in SPELLING.findall(code):
                door = PROG if "studies" in door else door
                if not any(EXAMPLE.match(w) for w in words.split()):
                    out.setdefault((door, tuple(words.split())), []).append(page.name)
    return out


def entry_points() -> dict[str, list[str]]:
    """``file -> pages`` for every checkout file run by name (``train.py``, ``scripts/setup.sh``)."""
    out: dict[str, list[str]] = {}
    for page in PAGES:
        for code in _code(page.read_text(encoding="utf-8")):
            for f in ENTRY.findall(code):
                out.setdefault(f, []).append(page.name)
    return out


def _resolve(door: str, words: tuple[str, ...]) -> tuple[str, Command | Group, list[str]]:
    n, entry = find(DOORS[door], words)
    return " ".join([door, *words[:n]]), entry, list(words[n:])


def test_the_pages_name_commands_of_both_doors():
    spellings = documented()
    doors = {d for d, _ in spellings}
    assert doors == {"gpu-sched", PROG}, doors  # the parser sees real text
    assert ("gpu-sched", ("compare",)) in spellings


def test_every_documented_spelling_names_a_command():
    unknown = []
    for (door, words), pages in sorted(documented().items()):
        spelled, entry, rest = _resolve(door, words)
        # a group may be named alone (its usage lists the rest); a lower-case word after it is a typo
        if isinstance(entry, Group) and rest:
            where = ", ".join(sorted(set(pages)))
            unknown.append(f"{door} {' '.join(words)} (in {where}): {spelled} has no {rest[0]!r}")
    assert unknown == [], "\n".join(unknown)


def test_every_documented_command_has_its_one_spelling():
    """A default part is spelled without its flag (``reward``, not ``reward --part step``): one spelling per job."""
    canonical = {s for s, _ in _commands()}
    other = []
    for (door, words), pages in sorted(documented().items()):
        spelled, entry, _ = _resolve(door, words)
        if isinstance(entry, Command) and spelled not in canonical:
            other.append(f"{' '.join([door, *words])} (in {', '.join(sorted(set(pages)))}): spelled {spelled!r}")
    assert other == [], "commands spelled otherwise than their one spelling:\n" + "\n".join(other)


def _available(c: Command) -> bool:
    return importlib.util.find_spec(c.module.split(".")[0]) is not None and _module_found(c.module)


def _module_found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _commands() -> list[tuple[str, Command]]:
    return [*walk(GPU_SCHED, "gpu-sched"), *walk(STUDIES, PROG)]


@pytest.mark.parametrize("spelling,command", _commands(), ids=[s for s, _ in _commands()])
def test_every_command_answers_help(spelling, command, capsys):
    """Every command of both tables (so every documented one) prints its usage under its own spelling."""
    door = PROG if spelling.startswith(PROG) else "gpu-sched"
    words = spelling[len(door) :].split()
    if not _available(command):  # a plug-in of a package not installed here says so instead
        assert dispatch(DOORS[door], [*words, "--help"], door) == 2
        assert "not available" in capsys.readouterr().err
        pytest.skip(f"{command.module} is not installed here")
    try:
        code = dispatch(DOORS[door], [*words, "--help"], door)
    except SystemExit as e:  # argparse's --help
        code = e.code
    assert code in (0, None), spelling
    assert capsys.readouterr().out.startswith(f"usage: {spelling}"), spelling


@pytest.mark.e2e
def test_every_documented_file_exists_and_entry_points_answer_help():
    named = entry_points()
    assert "train.py" in named and "scripts/setup.sh" in named  # the parser sees real text
    missing = [f"{f} (in {', '.join(sorted(set(p)))})" for f, p in named.items() if not (ROOT / f).is_file()]
    assert missing == [], "the docs run files that do not exist:\n" + "\n".join(missing)
    for f in sorted(f for f in named if f.endswith(".py")):
        r = subprocess.run([sys.executable, f, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{f} --help: {r.stderr[-2000:]}"
