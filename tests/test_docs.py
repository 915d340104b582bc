"""The README stays a short overview, every relative link in it and in docs/ resolves, the
generated import graph in docs/architecture.md is current, and every public module has an
API page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from studies import docs_graph as ig

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
QUICKSTART = [
    "bash scripts/setup.sh && .venv/bin/python train.py algo=ppo day=hectic",
    '.venv/bin/python -m pytest -m "not slow" -q',
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


def test_readme_is_short() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n < 160, f"README.md has {n} lines; move detail into docs/ (limit 160)"


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
    assert ig.render_page(text, ig.graph()) == text, "docs/architecture.md is stale: run python scripts/import_graph.py"


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
