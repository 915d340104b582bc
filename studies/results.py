r"""The result pages' tables, rendered from the rows the studies wrote, as the leaderboard is from its reports.

    python -m studies results --add runs/parity_main --as parity_main   # store a study's output, rewrite the pages
    python -m studies results                                           # rewrite every page's tables from the store
    python -m studies results --check                                   # exit 1 naming each table that differs

The store, ``docs/results/<key>/``, holds what a study wrote in its ``--out`` folder, without its
networks: ``rows.csv`` (and the generalist's ``month.csv``), ``commands.json`` (each command that added
rows there, with the commit and processor that ran it, :mod:`studies.provenance`) and ``settings.json``
where the study writes one. A docs page shows a stored table between ``<!-- results:<key>:start -->``
and ``<!-- results:<key>:end -->``: the commands that made it, then the study's own Markdown table of
the rows (:data:`RENDER`, by the study the commands name: parity, generalist, ablation). Nothing in a
block is written by hand; ``--check`` (a fast test runs it) fails when a block is not the render of
its stored rows, when a page names a key the store lacks, and when a stored key is on no page.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from gpu_sched_env.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "docs" / "results"
DOCS = ROOT / "docs"
KEPT = ("rows.csv", "month.csv", "commands.json", "settings.json")  # what a stored folder keeps of a study's output
BLOCK = re.compile(r"<!-- results:([A-Za-z0-9_.-]+):start -->\n(.*?)<!-- results:\1:end -->\n", re.S)
KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _parity(folder: Path) -> str:
    from studies.cgrsp.learning.parity import page_table

    return page_table(pd.read_csv(folder / "rows.csv"))


def _generalist(folder: Path) -> str:
    from studies.cgrsp.learning.generalist import page_table

    month = folder / "month.csv"
    months = pd.read_csv(month) if month.is_file() else pd.DataFrame(columns=["seed", "budget", "stock"])
    return page_table(pd.read_csv(folder / "rows.csv"), months)


def _ablation(folder: Path) -> str:
    from studies.cgrsp.learning.ablation import page_table

    settings = folder / "settings.json"
    if not settings.is_file():
        raise ConfigError(f"{folder}: no settings.json (the ablation's selection and test settings are read there)")
    return page_table(pd.read_csv(folder / "rows.csv"), json.loads(settings.read_text()))


# study → its table of a stored folder
RENDER: dict[str, Callable[[Path], str]] = {"parity": _parity, "generalist": _generalist, "ablation": _ablation}


def commands(folder: Path) -> list[dict[str, object]]:
    """``folder/commands.json``'s entries; ConfigError naming the folder where it is missing or malformed."""
    path = folder / "commands.json"
    if not path.is_file():
        raise ConfigError(f"{folder}: no commands.json (an output folder of a study that records its commands)")
    listed = json.loads(path.read_text())
    if not (isinstance(listed, list) and listed and all(isinstance(e, dict) and "command" in e for e in listed)):
        raise ConfigError(f"{path}: expected a non-empty list of {{'command': ..., 'commit': ...}} entries")
    return listed


def study_of(folder: Path) -> str:
    """The study whose commands made ``folder`` (one of :data:`RENDER`); ConfigError otherwise."""
    names = {shlex.split(str(e["command"]))[3] for e in commands(folder)}  # python -m studies NAME ...
    if len(names) != 1 or not names <= RENDER.keys():
        raise ConfigError(
            f"{folder}: made by {', '.join(sorted(names))}; a stored folder is one study's, allowed: "
            f"{', '.join(RENDER)}"
        )
    return names.pop()


def block(folder: Path) -> str:
    """A page's block for a stored folder: the commands (with their commits) that made it, then the table."""
    listed = commands(folder)
    made = []
    for e in listed:
        commit = str(e.get("commit") or "unknown")[:12] + (" with uncommitted changes" if e.get("dirty") else "")
        made.append(f"# commit {commit}, on {e.get('cpu') or 'an unrecorded processor'}\n{e['command']}")
    return (
        f"Rows: [`docs/results/{folder.name}/rows.csv`](results/{folder.name}/rows.csv), made by\n\n"
        "```bash\n" + "\n".join(made) + "\n```\n\n" + RENDER[study_of(folder)](folder)
    )


def pages(docs: Path = DOCS) -> dict[Path, list[str]]:
    """Each docs page holding results blocks, with the keys it shows, in order."""
    found = {}
    for page in sorted(docs.glob("*.md")):
        keys = BLOCK.findall(page.read_text(encoding="utf-8"))
        if keys:
            found[page] = [k for k, _ in keys]
    return found


def rendered(page: Path, store: Path = STORE) -> str:
    """``page``'s text with each results block rewritten from the store; ConfigError for a key the store lacks."""
    text = page.read_text(encoding="utf-8")

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        if not (store / key / "rows.csv").is_file():
            raise ConfigError(f"{page.name}: results block {key!r} has no stored rows ({store / key}/rows.csv)")
        return f"<!-- results:{key}:start -->\n{block(store / key).rstrip()}\n<!-- results:{key}:end -->\n"

    return BLOCK.sub(sub, text)


def differences(docs: Path = DOCS, store: Path = STORE) -> list[str]:
    """One line per problem: a block that is not its render, a stored key on no page."""
    problems, shown = [], set()
    for page, keys in pages(docs).items():
        shown.update(keys)
        if rendered(page, store) != page.read_text(encoding="utf-8"):
            problems.append(f"{page.name}: a results block is not its rows' render; run: python -m studies results")
    stored = {p.parent.name for p in store.glob("*/rows.csv")}
    for k in sorted(stored - shown):
        problems.append(f"{store / k}: stored but on no page (show it between <!-- results:{k}:start/end -->)")
    return problems


def add(out: Path, key: str, store: Path = STORE, replace: bool = False) -> Path:
    """Copy a study's ``out`` folder's kept files into ``store/key``, whole; a ConfigError before anything is written.

    The files are staged in a folder beside it and renamed into place, so an interrupted copy leaves
    the stored folder as it was.
    """
    if not KEY.fullmatch(key):
        raise ConfigError(f"--as {key!r}: a key is letters, digits, '_', '-' and '.', starting with a letter or digit")
    if not (out / "rows.csv").is_file():
        raise ConfigError(f"--add {out}: no rows.csv there (a study's --out folder)")
    study_of(out)
    target = store / key
    if target.exists() and not replace:
        raise ConfigError(f"--as {key}: {target} is stored already; pass --replace to overwrite it")
    store.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(dir=store, prefix=f".{key}."))  # the whole folder or nothing
    for name in KEPT:
        if (out / name).is_file():
            shutil.copyfile(out / name, staged / name)
    staged.chmod(0o755)
    if target.exists():  # replaced whole: a file the new folder lacks would be read as its own
        old = target.rename(store / f".{key}.old")
        staged.rename(target)
        shutil.rmtree(old)
    else:
        staged.rename(target)
    return target


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line, checked (argparse exits with a message naming the option)."""
    ap = argparse.ArgumentParser(prog="python -m studies results", description=__doc__.splitlines()[0])
    ap.add_argument("--add", type=Path, metavar="OUT", help="a study's --out folder to store (its rows, commands)")
    ap.add_argument("--as", dest="key", help="the stored folder's name, docs/results/<key>/ (with --add)")
    ap.add_argument("--replace", action="store_true", help="with --add: overwrite a stored folder of that key")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each block that differs")
    ap.add_argument("--docs", type=Path, default=DOCS, help="the folder of the pages (default: the checkout's docs/)")
    ap.add_argument("--store", type=Path, default=None, help="the stored folders (default: <docs>/results)")
    args = ap.parse_args(argv)
    args.store = args.docs / "results" if args.store is None else args.store
    if (args.add is None) != (args.key is None):
        ap.error("--add OUT and --as KEY go together")
    if args.check and args.add is not None:
        ap.error("--check writes nothing: give it alone")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Store, rewrite or check the result pages' tables; the exit status (a refusal is the dispatcher's: status 2)."""
    from gpu_sched_env.core.io import atomic_write_text

    args = parse_args(argv)
    if args.check:
        problems = differences(args.docs, args.store)
        for line in problems:
            print(line)
        return 1 if problems else 0
    if args.add is not None:
        print(f"stored {add(args.add, args.key, args.store, replace=args.replace)}")
    for page in pages(args.docs):
        text = rendered(page, args.store)
        if text != page.read_text(encoding="utf-8"):
            atomic_write_text(page, text)
            print(f"rewritten {page}")
    return 0
