"""Validation errors that say what was wrong, the value given, and what is allowed.

Every scenario validates its configuration through these helpers so the messages have one
shape: ``<where>.<field> = <value!r>: <what is allowed>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np


class ConfigError(ValueError):
    """A configuration, parameter, file or CLI value is invalid."""


class InvalidActionError(ValueError):
    """An environment action is not legal in the current state."""


class ResetNeededError(RuntimeError):
    """``step()`` was called before ``reset()`` or after the episode ended.

    Every env of the package raises it (a ``RuntimeError``, as gymnasium's own envs do);
    through ``gymnasium.make`` the order-enforcing wrapper raises ``gymnasium.error.ResetNeeded``
    before the first ``reset()``.
    """


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
        raise ConfigError(f"unknown {section}: {', '.join(unknown)}; allowed: {', '.join(allowed) or 'none'}")


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
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise ConfigError(f"{where} = {value!r} is not a number")
    if integer and not isinstance(value, (int, np.integer)):
        # 5.0 is refused too: a float where a count belongs is a caller's bug, not a count
        raise ConfigError(f"{where} = {value!r} must be an integer (int), got {type(value).__name__}")
    fv = float(value)
    if not math.isfinite(fv):
        raise ConfigError(f"{where} = {value!r} must be a finite number")
    lo_ok = lo is None or (fv > lo if lo_open else fv >= lo)
    hi_ok = hi is None or (fv < hi if hi_open else fv <= hi)
    if not (lo_ok and hi_ok):
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        lo_s = "-inf" if lo is None else f"{lo:g}"
        hi_s = "inf" if hi is None else f"{hi:g}"
        raise ConfigError(f"{where} = {value!r} is out of range; allowed: {left}{lo_s}, {hi_s}{right}")
    return int(value) if integer else value


def check_mapping(section: str, value: Any) -> Mapping[str, Any]:
    """Raise unless ``value`` is a mapping (for nested config sections)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{section} must be a mapping, got {type(value).__name__}: {value!r}")
    return value


def check_action(action: Any, n: int, mask: np.ndarray | None = None, why: Callable[[int], str] | None = None) -> int:
    """Return ``action`` as an ``int`` if it is one legal action index, else raise.

    Accepted: a Python or NumPy integer, or a 0-d or one-element 1-d integer array (what SB3
    passes) or sequence. Floats, strings, bools, ``None``, arrays of other sizes or dtypes and
    arrays of more dimensions (``np.array([[a]])``: a batch of actions given to one env) raise
    :class:`InvalidActionError` naming the value and what is allowed; nothing is rounded or
    squeezed. Every env of the project checks its actions here, so they refuse alike.

    Args:
        action: the action given to ``step()``.
        n: size of the ``Discrete`` action space.
        mask: legal actions now (boolean, length ``n``); ``None`` allows all of ``0..n-1``.
        why: ``why(a)`` explains why the in-range action ``a`` is illegal (for the message).
    """
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        a = int(action)
    else:
        arr = np.asarray(action, dtype=object if action is None else None)
        if arr.size != 1 or arr.ndim > 1 or arr.dtype.kind not in "iu":
            shape = f", shape {arr.shape}" if arr.ndim > 1 else ""
            raise InvalidActionError(
                f"action {action!r} ({type(action).__name__}{shape}) is not allowed; allowed: one integer in "
                f"[0, {n - 1}] (Python or NumPy integer, or a 0-d or 1-element 1-d integer array)"
            )
        a = int(arr.reshape(()))
    if not 0 <= a < n:
        raise InvalidActionError(f"action {a} is out of range; allowed: integers in [0, {n - 1}]")
    if mask is not None and not mask[a]:
        legal = np.flatnonzero(mask).tolist()
        reason = why(a) if why is not None else "masked out now"
        raise InvalidActionError(f"action {a} is illegal: {reason}; legal actions now: {legal}")
    return a


def check_kwargs(given: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    """Raise :class:`ConfigError` for keyword arguments ``where`` does not take."""
    check_keys(given, allowed, section=f"{where} arguments")


def check_seed(seed: Any) -> int | None:
    """``reset(seed=...)`` as a Python ``int`` (NumPy integers too) or ``None``; else raise.

    Gymnasium's own seeding refuses NumPy integers (``np.arange(10)`` as seeds); the envs of
    the package take them.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(
            f"reset seed = {seed!r} is not allowed; allowed: None or a non-negative integer (Python or NumPy)"
        )
    return int(seed)


def check_options(options: Mapping[str, Any] | None, allowed: Iterable[str] = ()) -> dict[str, Any]:
    """``reset(options=...)`` as a dict; unknown keys raise :class:`ConfigError`."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"reset options = {options!r} must be a mapping or None")
    check_keys(options, allowed, section="reset options")
    return dict(options)
