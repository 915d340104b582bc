"""Griffe extension for the docs site: render the docstrings' Sphinx roles as links.

The docstrings are Google style with Markdown, plus Sphinx roles such as
``:class:`~gpu_sched_env.core.errors.ConfigError``` that Markdown would print literally. This
extension (loaded by mkdocstrings, see ``mkdocs.yml``) turns each role into an *optional*
cross-reference: a link where the target is documented on the site, plain code otherwise, so
an unknown target never fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|mod|meth|func|attr|data|obj|exc|const):`(~?)([^`<>]+?)`")


def rewrite(text: str) -> str:
    """Replace every Sphinx role in ``text`` by an optional autorefs link (``~`` shows the last name)."""

    def repl(m: re.Match[str]) -> str:
        target = m[2].strip()
        title = target.rsplit(".", 1)[-1] if m[1] else target
        return f'<autoref identifier="{target}" optional><code>{title}</code></autoref>'

    return ROLE.sub(repl, text)


class SphinxRoles(griffe.Extension):
    """Rewrite the roles in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Called once per loaded object."""
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
