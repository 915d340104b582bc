"""Every command spelling the README and docs name has a run at its smallest budget in the table (fast tier).

The runs themselves (``-m e2e``) are ``tests/test_documented_runs_rules.py`` and
``tests/test_documented_runs_learners.py``; the table is :data:`tests.documented_runs.RUNS`.
"""

from __future__ import annotations

from gpu_sched_env.core.commands import Group
from tests.documented_runs import DOORS, RUNS, command_words
from tests.test_documented_commands import _resolve, documented

BATCHES = ("rules", "learners")  # the batches of the two e2e files


def _spelled() -> dict[str, list[str]]:
    return {" ".join([door, *words]): pages for (door, words), pages in documented().items()}


def test_every_documented_spelling_has_a_run_and_no_run_is_stale():
    spelled = _spelled()
    missing = [f"{s} (in {', '.join(sorted(set(p)))})" for s, p in sorted(spelled.items()) if s not in RUNS]
    stale = sorted(set(RUNS) - set(spelled))
    assert missing == [], "documented commands without a run in tests/documented_runs.py:\n" + "\n".join(missing)
    assert stale == [], "runs of commands the pages no longer name:\n" + "\n".join(stale)


def test_each_run_is_its_command_at_work_not_its_help():
    bad = []
    for spelling, run in RUNS.items():
        door, words = command_words(spelling)
        assert door in DOORS
        _, entry, rest = _resolve(door, words)
        n = len(words) - len(rest)
        argv = list(run.argv)
        if argv[:n] != list(words[:n]):
            bad.append(f"{spelling}: argv {argv} does not start with {list(words[:n])}")
        elif isinstance(entry, Group):  # a group named alone: its usage
            if argv[n:] != ["--help"] or not run.stdout:
                bad.append(f"{spelling}: a group's run is its --help, with its usage on stdout")
        else:
            if "--help" in argv or "-h" in argv:
                bad.append(f"{spelling}: runs --help, not the command")
            if rest and argv[n : n + len(rest)] != rest and not run.stands_for:
                bad.append(f"{spelling}: the spelled {rest} are neither its next arguments nor explained (stands_for)")
            if not run.files and not run.stdout:
                bad.append(f"{spelling}: asserts neither a file nor its stdout")
        text = " ".join([*run.argv, *run.files])
        if ("{run}" in text) != run.needs_run:
            bad.append(f"{spelling}: uses {{run}} iff needs_run")
        if ("{from}" in text) != bool(run.uses):
            bad.append(f"{spelling}: uses {{from}} iff it names the entry it reads (uses)")
        earlier = list(RUNS)[: list(RUNS).index(spelling)]
        if run.uses and (run.uses not in earlier or RUNS[run.uses].batch != run.batch):
            bad.append(f"{spelling}: uses {run.uses!r}, which is no earlier entry of its batch")
        if run.rewrites and not run.copy:
            bad.append(f"{spelling}: rewrites names no copied page")
        if run.batch not in BATCHES:
            bad.append(f"{spelling}: batch {run.batch!r} is run by no test file ({BATCHES})")
        writes = [a for a in run.argv if a in ("docs", "runs") or a.startswith(("docs/", "runs/", "/"))]
        if writes:
            bad.append(f"{spelling}: names a path outside its temporary folders: {writes}")
    assert bad == [], "\n".join(bad)
