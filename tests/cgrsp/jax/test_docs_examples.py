"""The Python blocks of docs/cgrsp_env.md's "The JAX fast path" (with its adapters' section) run exactly as written.

Each fenced ``python`` block is self-contained: every name it reads it defines or imports (checked
statically, in the fast tier). Under ``-m e2e`` each block runs in a fresh namespace with JAX's
defaults (float32, as a reader has them), and each top-level ``print(...)  # text`` prints the
start of its comment: the documented numbers (the observation's 233 floats, 16 actions ...) are
the measured ones. Running them compiles the hectic day's programs (and rejax's PPO), tens of
seconds: hence e2e.
"""

import ast
import builtins
import contextlib
import io
import re
from pathlib import Path

import jax
import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "cgrsp_env.md"
SECTION = ("## The JAX fast path", "\n## ")  # from this heading to the next of its level


def _blocks() -> list[tuple[str, int, str]]:
    """``(id, first line number, code)`` of each ``python`` block of the section."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION[0])
    end = text.find(SECTION[1], start + len(SECTION[0]))
    body = text[start : end if end >= 0 else len(text)]
    line0 = text[:start].count("\n") + 1
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```$", body, flags=re.S | re.M):
        line = line0 + body[: m.start()].count("\n") + 1
        code = m.group(1)
        heading = re.findall(r"^#+ (.+)$", body[: m.start()], flags=re.M)[-1]
        slug = "-".join(re.findall(r"[a-z]+", heading.lower())[:3])
        out.append((f"{slug}-line{line}", line, code))
    return out


BLOCKS = _blocks()


def test_the_section_has_its_examples():
    assert len(BLOCKS) >= 4, [b[0] for b in BLOCKS]
    joined = "\n".join(code for _, _, code in BLOCKS)
    for needed in ("from gpu_sched_env.cgrsp.jax.gymnax import make", "jumanji", "rejax.PPO.create", "JaxCGRSP"):
        assert needed in joined, needed


def _unbound(code: str) -> set[str]:
    """Names the block reads but neither assigns, imports nor finds among the builtins."""
    tree = ast.parse(code)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store | ast.Del) else read).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound


@pytest.mark.parametrize(("name", "line", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_block_is_self_contained(name, line, code):
    assert not _unbound(code), f"docs/cgrsp_env.md:{line} reads undefined names {sorted(_unbound(code))}"


def _printed_claims(code: str) -> list[str]:
    """The comment of each top-level ``print(...)  # comment`` line, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", code, flags=re.M)]


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "line", "code"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_block_runs_as_written(name, line, code):
    out = io.StringIO()
    with jax.enable_x64(False), contextlib.redirect_stdout(out):
        exec(compile(code, f"docs/cgrsp_env.md:{line}", "exec"), {"__name__": "__docs__"})  # noqa: S102
    printed = out.getvalue().splitlines()
    claims = _printed_claims(code)
    assert len(printed) == len(claims), (printed, claims)
    for got, claim in zip(printed, claims, strict=True):
        assert claim.startswith(got), f"docs/cgrsp_env.md:{line}: printed {got!r}, the comment says {claim!r}"
