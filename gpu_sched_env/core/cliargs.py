"""Command-line values shared by every CLI: ``--param NAME=VALUE`` and Python-literal values."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from gpu_sched_env.core.errors import ConfigError


def literal(text: str) -> Any:
    """``text`` as a Python literal (numbers, tuples, lists, booleans); anything else stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_param(text: str, allowed: str | Callable[[], str] = "a parameter name") -> tuple[str, Any]:
    """``NAME=VALUE`` → ``(NAME, literal(VALUE))``.

    Args:
        text: one ``--param`` argument.
        allowed: what NAME may be, for the error message (a callable is only called then).

    Raises:
        ConfigError: no ``=``, or an empty NAME.
    """
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        what = allowed() if callable(allowed) else allowed
        raise ConfigError(f"--param {text!r}: expected NAME=VALUE with NAME {what}")
    return name.strip(), literal(value)


def parse_params(texts: Iterable[str], allowed: str | Callable[[], str] = "a parameter name") -> dict[str, Any]:
    """Every ``--param`` argument as one dict (a repeated NAME: the last value wins)."""
    return dict(parse_param(t, allowed) for t in texts)


__all__ = ["literal", "parse_param", "parse_params"]
