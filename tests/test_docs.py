"""The README stays a short overview, every relative link in it and in docs/ resolves, the
generated import graph and the layout block in docs/architecture.md are current, every page is
in the site's nav, reference pages carry no dates (the journal does), and every public module
has an API page."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from studies import docs_graph as ig

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
QUICKSTART = [
    "bash scripts/setup.sh && .venv/bin/python train.py algo=ppo day=hectic",
    '.venv/bin/python -m pytest -m "not slow and not e2e" -q',
]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"README has no '## {heading}' section"
    return m.group(1)


def test_readme_quickstart_has_exactly_the_two_commands() -> None:
    section = _section(README.read_text(encoding="utf-8"), "Quickstart")
    blocks = re.findall(r"^```(?:bash|sh)?\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) == 1, f"Quickstart should hold one code block, found {len(blocks)}"
    assert [line for line in blocks[0].splitlines() if line.strip()] == QUICKSTART


def test_ci_runs_the_readmes_test_command_and_the_e2e_tier() -> None:
    """CI calls the README's test command as written, then every test it leaves out but ``slow``."""
    steps = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert QUICKSTART[1] in steps
    assert steps.index(".venv/bin/python -m pytest -m e2e -q") > steps.index(QUICKSTART[1])
    assert '-m "not slow and not e2e"' in QUICKSTART[1]  # the two together: every test not marked slow


README_LIMIT = 120


def test_readme_is_short() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= README_LIMIT, f"README.md has {n} lines; move detail into docs/ (limit {README_LIMIT})"


def _links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))  # links inside code blocks are code
    text = re.sub(r"`[^`\n]*`", "", text)
    return [a or b for a, b in LINK.findall(text)]


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for link in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link) or link.startswith("#"):
            continue  # external URLs, mailto:, and anchors on the same page (mkdocs --strict checks those)
        target = (page.parent / link.split("#", 1)[0]).resolve()
        if not target.exists():
            broken.append(link)
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files: {broken}"


def test_link_checker_sees_links() -> None:
    """The checker is not vacuous: it finds the README's links to docs/ and to a figure."""
    links = _links(README)
    assert "docs/training.md" in links and "docs/architecture.md" in links
    assert any(link.startswith("figures/") for page in DOCS.glob("*.md") for link in _links(page))


def test_architecture_import_graph_is_current() -> None:
    text = ig.PAGE.read_text(encoding="utf-8")
    assert ig.render_page(text, ig.graph()) == text, "docs/architecture.md is stale: run python -m studies docs-graph"


def test_import_graph_reads_imports(tmp_path: Path) -> None:
    """On a tiny package: eager, lazy and relative imports, and the one-way layer rule."""
    pkg = tmp_path / "gpu_sched_env"
    (pkg / "core").mkdir(parents=True)
    (pkg / "cgrsp").mkdir()
    (tmp_path / "agents").mkdir()
    (tmp_path / "scripts").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "errors.py").write_text("class ConfigError(ValueError): ...\n")
    (pkg / "cgrsp" / "__init__.py").write_text("from .sim import run\n")
    (pkg / "cgrsp" / "sim.py").write_text(
        "from gpu_sched_env.core.errors import ConfigError\n\ndef run():\n    from . import render\n"
    )
    (pkg / "cgrsp" / "render.py").write_text("")
    (tmp_path / "agents" / "__init__.py").write_text("import gpu_sched_env.cgrsp.sim as s\n")
    (tmp_path / "studies" / "mig").mkdir(parents=True)
    (tmp_path / "studies" / "mig" / "experiment.py").write_text("def main():\n    import gpu_sched_env.core.errors\n")
    for f in ("train.py",):
        (tmp_path / f).write_text("")
    out = ig.graph(tmp_path)
    assert "n_gpu_sched_agents --> n_gpu_sched_env_cgrsp" in out
    assert "n_gpu_sched_env_cgrsp --> n_gpu_sched_env_core" in out
    assert "n_sim -.-> n_render" in out  # lazy, inside a function
    assert "n_cgrsp___init__ --> n_sim" in out  # relative, from the package's __init__
    assert "n_gpu_sched_env_core -->" not in out
    assert "n_studies_mig -.-> n_gpu_sched_env_core" in out  # studies/ is an importer, one node per folder
    assert "n_studies_mig --> n_gpu_sched_agents" not in out and '["studies.mig.experiment' not in out  # no modules
    page = "a\n" + ig.BEGIN + "\nold\n" + ig.END + "\nb\n"
    assert ig.render_page(page, "new") == "a\n" + ig.BEGIN + "\nnew\n" + ig.END + "\nb\n"


def test_every_public_module_has_an_api_page() -> None:
    documented = set()
    for page in (DOCS / "api").glob("*.md"):
        documented |= set(re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.M))
    missing = [
        name
        for name in ig.discover()
        if not any(part.startswith("_") for part in name.split("."))
        and name not in documented
        and not any(d.startswith(name + ".") for d in documented)  # e.g. only its env class
    ]
    assert not missing, f"modules without an API page (add '::: NAME' to a docs/api/*.md page): {missing}"


MACHINE_PATH = re.compile(r"(?<![\w.])/(work|home|root|tmp|opt|Users)/[\w./-]+")


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_name_no_machine_paths(page: Path) -> None:
    """Files are named relative to the repository (``../shared/spec/cgrsp.md``), never by one machine's path."""
    found = [m.group(0) for m in MACHINE_PATH.finditer(page.read_text(encoding="utf-8"))]
    assert not found, f"{page.name}: {found}"


# --- Reference pages against the journal ---------------------------------------------------

JOURNAL = DOCS / "journal"
_MONTH = (
    r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
)
DATE = re.compile(
    rf"(?<![\w-])(?:20\d\d-[01]\d-[0-3]\d|(?:{_MONTH})\.?(?: [0-3]?\d(?:st|nd|rd|th)?,?)? 20\d\d)(?![\w-])"
)
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")


def _reference_pages() -> list[Path]:
    """README.md and every docs/ page outside docs/journal/ and docs/api/."""
    return [README] + [
        p for p in sorted(DOCS.rglob("*.md")) if not p.is_relative_to(JOURNAL) and not p.is_relative_to(DOCS / "api")
    ]


@pytest.mark.parametrize("page", _reference_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_reference_pages_carry_no_dates(page: Path) -> None:
    """Reference pages describe the code as it is, every number beside the command that regenerates it, and carry
    no date: no ISO date (2026-11-27) and no month with a year (Nov 2026). When a number was measured, what was
    tried and what a number used to be go to a dated entry of docs/journal/ (the rule: docs/journal/index.md).
    Link targets are not read, so a reference page may link to a journal entry's anchor."""
    found = []
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        for m in DATE.finditer(LINK_TARGET.sub("]()", line)):
            found.append(f"line {n}: {m.group(0)!r}")
    assert not found, f"{page.relative_to(ROOT)} holds dates (move the dated text to docs/journal/): {found}"


def test_date_check_sees_dates() -> None:
    """The date pattern is not vacuous: it finds the forms the rule forbids, and not numbers that only look alike."""
    for text in ("measured 2026-11-27 on", "in Nov 2026 we", "on November 27, 2026", "(Sep 2025)"):
        assert DATE.search(LINK_TARGET.sub("]()", text)), text
    for text in ("Markov 2000 s", "[entry](journal/learning.md#2026-11-27-x)", "commit 2026-abc", "20000-20029"):
        assert not DATE.search(LINK_TARGET.sub("]()", text)), text
    assert any(DATE.search(p.read_text(encoding="utf-8")) for p in JOURNAL.glob("*.md")), "the journal holds the dates"


# --- The site's nav ------------------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's !!python tags (slugify, fence formats) read as nothing: only the nav is wanted."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _nav_pages(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for item in node for p in _nav_pages(item)]
    if isinstance(node, dict):
        return [p for value in node.values() for p in _nav_pages(value)]
    return []


def test_every_page_is_in_the_nav() -> None:
    nav = _nav_pages(yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)["nav"])
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert not pages - set(nav), f"pages missing from mkdocs.yml's nav: {sorted(pages - set(nav))}"
    assert not set(nav) - pages, f"nav entries without a page: {sorted(set(nav) - pages)}"


@pytest.mark.slow
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    """The site builds with warnings as errors (broken links and #anchors included), as .ci/run builds it."""
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mkdocs is not installed (extra 'docs')")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert out.returncode == 0, out.stderr[-4000:]


# --- docs/architecture.md's layout block against the tree ----------------------------------

LAYOUT_BEGIN, LAYOUT_END = "<!-- layout:begin", "<!-- layout:end -->"
LAYOUT_STRICT = ("gpu_sched_env", "agents", "studies", "conf")  # every folder below these must be named
SKIP_DIRS = {"__pycache__"}


def parse_layout(block: str) -> tuple[set[str], set[str]]:
    """The (files, folders) a layout block names, as paths from the root.

    One entry a line, two spaces per level, a folder with a trailing ``/``; the name part ends at the first run of
    two spaces and may list several names (``train.py, evaluate.py``); a line indented deeper than its entry's
    level allows continues the entry above it.
    """
    files: set[str] = set()
    folders: set[str] = set()
    stack: list[str] = []  # the folder path of each level
    for line in block.splitlines():
        if not line.strip() or line.strip().startswith("```"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent % 2 or indent // 2 > len(stack):
            continue  # a description's continuation
        level = indent // 2
        del stack[level:]
        names = [n.strip() for n in re.split(r"\s{2,}", line.strip(), maxsplit=1)[0].split(",")]
        for name in names:
            path = "/".join([*stack, name.rstrip("/")])
            (folders if name.endswith("/") else files).add(path)
        if len(names) == 1 and names[0].endswith("/"):
            stack.append(names[0].rstrip("/"))
    return files, folders


def _layout_block() -> str:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    assert LAYOUT_BEGIN in text and LAYOUT_END in text, "docs/architecture.md lost its layout:begin/end markers"
    return text.split(LAYOUT_BEGIN, 1)[1].split("-->", 1)[1].split(LAYOUT_END, 1)[0]


def _repo_folders() -> set[str]:
    """Every folder holding a tracked or untracked-but-not-ignored file (hidden folders left out)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tree's folders are read with git ls-files")
    folders = set()
    for f in out.splitlines():
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            if parts[i - 1].startswith(".") or parts[i - 1] in SKIP_DIRS:
                break
            folders.add("/".join(parts[:i]))
    return {f for f in folders if (ROOT / f).is_dir()}


def layout_differences(files: set[str], folders: set[str], tree: set[str], root: Path) -> list[str]:
    """What a layout block gets wrong against a tree: names that do not exist, folders it leaves out."""
    wrong = [f"named but missing: {p}/" for p in sorted(folders) if p not in tree]
    wrong += [f"named but missing: {p}" for p in sorted(files) if not (root / p).is_file()]
    must = {f for f in tree if "/" not in f or f.split("/")[0] in LAYOUT_STRICT}
    wrong += [f"in the tree but not named: {p}/" for p in sorted(must - folders)]
    return wrong


def test_architecture_layout_is_the_tree() -> None:
    files, folders = parse_layout(_layout_block())
    wrong = layout_differences(files, folders, _repo_folders(), ROOT)
    assert not wrong, "docs/architecture.md's layout block differs from the repository:\n  " + "\n  ".join(wrong)


def test_layout_check_sees_a_new_and_a_missing_folder(tmp_path: Path) -> None:
    """On a tiny tree: a folder added under a checked tree, or named but gone, is reported by name."""
    block = "```\ngpu_sched_env/   the library\n  core/          events,\n"
    block += "                 RNG streams\n  cli.py\ntests/\n```\n"
    files, folders = parse_layout(block)
    assert folders == {"gpu_sched_env", "gpu_sched_env/core", "tests"} and files == {"gpu_sched_env/cli.py"}
    (tmp_path / "gpu_sched_env" / "core").mkdir(parents=True)
    (tmp_path / "gpu_sched_env" / "cli.py").write_text("")
    tree = {"gpu_sched_env", "gpu_sched_env/core", "gpu_sched_env/jax", "tests", "tests/sub"}
    assert layout_differences(files, folders, tree, tmp_path) == ["in the tree but not named: gpu_sched_env/jax/"]
    assert layout_differences(files, folders | {"gpu_sched_env/gone"}, tree - {"gpu_sched_env/jax"}, tmp_path) == [
        "named but missing: gpu_sched_env/gone/"
    ]
