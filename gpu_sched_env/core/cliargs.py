"""Command-line values shared by every CLI: ``--param NAME=VALUE``, Python-literal values, seeds and counts."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from typing import Any

from gpu_sched_env.core.errors import ConfigError


def literal(text: str) -> Any:
    """``text`` as a Python literal (numbers, tuples, lists, booleans); anything else stays a string.

    A bracketed list of bare words, as Hydra writes it (``[cadr_defer_exp,spt]``), is a list of
    their literals.
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text.startswith("[") and text.endswith("]"):
            return [literal(x.strip()) for x in split_top(text[1:-1]) if x.strip()]
        return text


def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets: ``a=1,b=[x,y]`` → ``['a=1', 'b=[x,y]']``."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(ch, 0)
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def parse_param(
    text: str, allowed: str | Callable[[], str] = "a parameter name", flag: str = "--param"
) -> tuple[str, Any]:
    """``NAME=VALUE`` → ``(NAME, literal(VALUE))``.

    Args:
        text: one ``--param`` argument.
        allowed: what NAME may be, for the error message (a callable is only called then).
        flag: the option it came with, for the error message.

    Raises:
        ConfigError: no ``=``, or an empty NAME.
    """
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        what = allowed() if callable(allowed) else allowed
        raise ConfigError(f"{flag} {text!r}: expected NAME=VALUE with NAME {what}")
    return name.strip(), literal(value)


def parse_params(
    texts: Iterable[str], allowed: str | Callable[[], str] = "a parameter name", flag: str = "--param"
) -> dict[str, Any]:
    """Every ``--param`` argument as one dict (a repeated NAME: the last value wins)."""
    return dict(parse_param(t, allowed, flag) for t in texts)


def check_flag_int(flag: str, value: int, lo: int = 0) -> int:
    """An integer option's value, refused below ``lo`` (a seed, a replication, a count).

    Raises:
        ConfigError: ``flag value: allowed: an integer ≥ lo``.
    """
    if value < lo:
        raise ConfigError(f"{flag} {value}: allowed: an integer ≥ {lo}")
    return value


__all__ = ["check_flag_int", "literal", "parse_param", "parse_params", "split_top"]
