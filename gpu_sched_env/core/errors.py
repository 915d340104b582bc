"""Validation errors that say what was wrong, the value given, and what is allowed.

Every scenario validates its configuration through these helpers so the messages have one
shape: ``<where>.<field> = <value!r>: <what is allowed>``. The envs' actions go through one
check here too (:class:`ActionGate`, :func:`resolve_action`): what an action that is not an
element of the action space raises, and what an in-range action the mask forbids does under
each ``illegal_action`` mode.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, get_args

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
    try:
        fv = float(value)
    except OverflowError:  # an int beyond float's range (10**400) is no finite number either
        fv = math.inf
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


IllegalAction = Literal["substitute", "raise"]
ILLEGAL_ACTION_MODES: tuple[str, ...] = get_args(IllegalAction)
DEFAULT_ILLEGAL_ACTION: IllegalAction = "substitute"


def check_illegal_action(value: Any) -> str:
    """The ``illegal_action`` setting of every env: ``value`` if it is one of :data:`ILLEGAL_ACTION_MODES`, else raise.

    ``"substitute"`` (the default): an in-range action the mask forbids is played as its
    documented substitute (:func:`substitute_action`) and flagged ``info["invalid_action"]``;
    ``"raise"``: it raises :class:`InvalidActionError`, as the envs did before the setting.
    """
    if not isinstance(value, str) or value not in ILLEGAL_ACTION_MODES:  # a str first: `in` on an array compares
        raise ConfigError(f"illegal_action = {value!r} is not known; allowed: {', '.join(ILLEGAL_ACTION_MODES)}")
    return value


def substitute_action(mask: np.ndarray, noop: int | None = None) -> int:
    """The action played for a masked-out one: ``noop`` where ``mask`` allows it, else the lowest legal action.

    The rule of CGRSP's JAX twin (``gpu_sched_env.cgrsp.jax.legal.legalise``) with ``noop`` its
    *wait*, so both engines play an illegal action alike. Envs whose layout has no no-op pass
    ``None`` (the lowest legal action).

    Raises:
        InvalidActionError: no action is legal (nothing to substitute).
    """
    if noop is not None and mask[noop]:
        return int(noop)
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise InvalidActionError("no action is legal now, so an illegal one has no substitute")
    return int(legal[0])


def resolve_action(
    action: Any,
    n: int,
    mask: np.ndarray | None,
    why: Callable[[int], str] | None = None,
    *,
    illegal_action: str,
    noop: int | None = None,
) -> tuple[int, bool]:
    """``(action played, invalid)`` for one ``step()``: the shared action check of every env.

    ``action`` must be an element of ``Discrete(n)``, one integer in ``[0, n-1]`` (the forms
    :func:`check_action` accepts); anything else raises :class:`InvalidActionError` in both
    modes. An in-range action that ``mask`` forbids raises too under ``illegal_action="raise"``;
    under ``"substitute"`` it is played as :func:`substitute_action` of ``mask`` and ``noop``,
    and ``invalid`` is True. Nothing is changed before the action is known to be playable.

    Args:
        action: the action given to ``step()``.
        n: size of the ``Discrete`` action space.
        mask: legal actions now (boolean, length ``n``); ``None`` allows all of ``0..n-1``.
        why: ``why(a)`` explains why the in-range action ``a`` is illegal (for the message).
        illegal_action: ``"substitute"`` or ``"raise"`` (:func:`check_illegal_action`).
        noop: the layout's no-op, the preferred substitute (``None``: the lowest legal action).
    """
    a = _action_index(action, n)
    if mask is None or mask[a]:
        return a, False
    if check_illegal_action(illegal_action) == "substitute":
        return substitute_action(mask, noop), True
    legal = np.flatnonzero(mask).tolist()
    reason = why(a) if why is not None else "masked out now"
    raise InvalidActionError(f"action {a} is illegal: {reason}; legal actions now: {legal}")


def check_action(action: Any, n: int, mask: np.ndarray | None = None, why: Callable[[int], str] | None = None) -> int:
    """Return ``action`` as an ``int`` if it is one legal action index, else raise.

    Accepted: a Python or NumPy integer, or a 0-d or one-element 1-d integer array (what SB3
    passes) or sequence. Floats, strings, bools, ``None``, arrays of other sizes or dtypes and
    arrays of more dimensions (``np.array([[a]])``: a batch of actions given to one env) raise
    :class:`InvalidActionError` naming the value and what is allowed; nothing is rounded or
    squeezed. An illegal action raises too: :func:`resolve_action` with ``illegal_action="raise"``
    (every env checks its actions there, so they refuse alike).

    Args:
        action: the action given to ``step()``.
        n: size of the ``Discrete`` action space.
        mask: legal actions now (boolean, length ``n``); ``None`` allows all of ``0..n-1``.
        why: ``why(a)`` explains why the in-range action ``a`` is illegal (for the message).
    """
    return resolve_action(action, n, mask, why, illegal_action="raise")[0]


def _action_index(action: Any, n: int) -> int:
    """``action`` as an ``int`` in ``[0, n-1]``, else InvalidActionError naming the value and what is allowed."""
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
    return a


class ActionGate:
    """One env's handling of illegal actions: its mode, its no-op, the episode's count, the end's mask.

    Every env of the package holds one (``illegal_action`` from its config) and calls
    :meth:`take` in ``step()``, :meth:`reset` in ``reset()``, puts :meth:`info` in every step's
    info and shows :meth:`end_mask` as its mask once the episode is over.

    Attributes:
        mode: ``"substitute"`` or ``"raise"`` (checked).
        n: size of the ``Discrete`` action space.
        noop: the layout's no-op (the preferred substitute and the action the end's mask
            marks), ``None`` where it has none (then action 0 / the lowest legal action).
        n_invalid: illegal actions substituted since the last :meth:`reset`.
    """

    def __init__(self, mode: str, n: int, noop: int | None = None) -> None:
        self.mode = check_illegal_action(mode)
        self.n = int(n)
        self.noop = noop
        self.n_invalid = 0

    def reset(self) -> None:
        """A new episode: the count starts again."""
        self.n_invalid = 0

    def take(self, action: Any, mask: np.ndarray, why: Callable[[int], str] | None = None) -> tuple[int, bool]:
        """``(action played, invalid)`` (:func:`resolve_action`); counts a substituted action."""
        a, invalid = resolve_action(action, self.n, mask, why, illegal_action=self.mode, noop=self.noop)
        self.n_invalid += invalid
        return a, invalid

    def info(self, invalid: bool) -> dict[str, Any]:
        """What every step's info carries: ``invalid_action`` (this step's) and ``n_invalid`` (the episode's so far)."""
        return {"invalid_action": bool(invalid), "n_invalid": self.n_invalid}

    def end_mask(self) -> np.ndarray:
        """The mask once the episode is over.

        ``"substitute"``: the no-op (action 0 where the layout has none) marked legal, so vector
        envs and maskable samplers reading the final observation's mask find an action (``step()``
        still raises ResetNeededError there). ``"raise"``: all False, as before the setting.
        """
        mask = np.zeros(self.n, bool)
        if self.mode == "substitute":
            mask[0 if self.noop is None else self.noop] = True
        return mask


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
