"""Validation errors that say what was wrong, the value given, and what is allowed.

Every scenario validates its configuration through these helpers so the messages have one
shape: ``<where>.<field> = <value!r>: <what is allowed>``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any


class ConfigError(ValueError):
    """A configuration, parameter, file or CLI value is invalid."""


class InvalidActionError(ValueError):
    """An environment action is not legal in the current state."""


def _where(section: str | None, field: str) -> str:
    return f"{section}.{field}" if section else field


def check_choice(field: str, value: Any, allowed: Iterable[Any], section: str | None = None) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise naming the choices."""
    allowed = list(allowed)
    if value not in allowed:
        raise ConfigError(
            f"{_where(section, field)} = {value!r} is not known; allowed: "
            + ", ".join(repr(a) if not isinstance(a, str) else a for a in allowed)
        )
    return value


def check_keys(given: Iterable[str], allowed: Iterable[str], section: str = "parameters") -> None:
    """Raise if any key in ``given`` is not in ``allowed`` (no silently ignored keys)."""
    allowed = sorted(allowed)
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise ConfigError(
            f"unknown {section}: {', '.join(unknown)}; allowed: {', '.join(allowed)}"
        )


def check_number(
    field: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    integer: bool = False,
    section: str | None = None,
) -> Any:
    """Check a finite number against an (optionally open) interval; return it unchanged."""
    where = _where(section, field)
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise ConfigError(f"{where} = {value!r} is not a number")
    fv = float(value)
    if not math.isfinite(fv):
        raise ConfigError(f"{where} = {value!r} must be a finite number")
    if integer and fv != int(fv):
        raise ConfigError(f"{where} = {value!r} must be an integer")
    lo_ok = lo is None or (fv > lo if lo_open else fv >= lo)
    hi_ok = hi is None or (fv < hi if hi_open else fv <= hi)
    if not (lo_ok and hi_ok):
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        lo_s = "-inf" if lo is None else f"{lo:g}"
        hi_s = "inf" if hi is None else f"{hi:g}"
        raise ConfigError(f"{where} = {value!r} is out of range; allowed: {left}{lo_s}, {hi_s}{right}")
    return int(fv) if integer else value


def check_mapping(section: str, value: Any) -> Mapping[str, Any]:
    """Raise unless ``value`` is a mapping (for nested config sections)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{section} must be a mapping, got {type(value).__name__}: {value!r}")
    return value
