"""The legality of an action: one mask for every (row, slot) action space, and the substitute of an illegal action.

Every step function of :class:`~gpu_sched_env.cgrsp.jax.env.JaxCGRSP` goes through
:func:`pair_mask` and :func:`legalise` (``JaxCGRSP._legal``), so an action the mask forbids
has one defined effect whatever the entry point; :func:`raise_illegal` is the checked mode's
host callback, :func:`why_illegal` its message.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.jax.core import Spec, n_idle
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState, n_jobs_of
from gpu_sched_env.core.errors import InvalidActionError


def pair_mask(spec: Spec, s: EnvState, rows: jnp.ndarray, params: EnvParams | None = None) -> jnp.ndarray:
    """The mask of a (row, slot) action space: ``rows`` (bool[R], a row holds a job) × idle slot, then *wait*.

    A row is a window position (:func:`~gpu_sched_env.cgrsp.jax.obs.action_mask`) or a
    subqueue (``JaxCGRSP.step_subqueue``). *Wait* is legal while a future event exists (a job
    to arrive or a busy slot): waiting with none would end the day with jobs never run.
    Nothing is legal once the day is over.
    """
    idle = s.slot_job < 0
    ok = jnp.any(rows) & (n_idle(s) > 0)
    pairs = rows[:, None] & idle[None, :]
    future = (s.n_arrived < (spec.n if params is None else n_jobs_of(spec.n, params))) | jnp.any(~idle)
    return jnp.concatenate([(pairs & ok).reshape(-1), jnp.atleast_1d(future & ok)])


def action_index(action, n: int) -> jnp.ndarray:
    """``action`` as an int32 index, −1 where it is no element of ``Discrete(n)`` (never a legal index).

    An element is an integer in [0, n − 1] of an integer dtype, as CGRSP-v0 takes it
    (``core.errors.resolve_action``). Integers that int32 holds exactly (every signed one of at
    most 32 bits, unsigned ones below 32 bits) are cast as they are: the mask's comparison with
    ``arange(n)`` already finds out-of-range values, and legal actions take the path they always
    took. Wider or unsigned 32-bit integers are compared in their own dtype first, since a cast
    would wrap 2**32 + 1 to 1. A float (1.7, NaN, and 1.0 too), a boolean or any other dtype is
    never an element: nothing is truncated or rounded. The dtype is static, so the branch costs
    nothing at run time.

    Without ``jax_enable_x64``, JAX narrows 64-bit inputs to 32 bits at the jit boundary, before
    any of this runs: a NumPy int64 of 2**32 + 1 then arrives as 1 (a Python int that large is
    refused by JAX itself). Under x64 it arrives whole and is flagged.
    """
    x = jnp.asarray(action)
    dt = x.dtype
    if not jnp.issubdtype(dt, jnp.integer) or dt == jnp.bool_:
        return jnp.full(x.shape, -1, jnp.int32)
    bits = jnp.iinfo(dt).bits
    if bits < 32 or (bits == 32 and jnp.issubdtype(dt, jnp.signedinteger)):
        return x.astype(jnp.int32)
    return jnp.where((x >= 0) & (x < n), x, -1).astype(jnp.int32)


def legalise(mask: jnp.ndarray, action: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``(action played, invalid)``: ``action`` where ``mask`` allows it, else its substitute.

    The substitute is *wait* (the mask's last action, the no-op: nothing is dispatched, the
    clock moves to the next event) when the mask allows it, else the lowest legal action (the
    first window position or subqueue on the lowest idle slot). Why: *wait* changes nothing
    the policy chose, and is illegal only when no job is left to arrive and no slot is busy,
    where waiting would end the day with jobs never run; a dispatch is then the only way on,
    and the lowest one is a fixed, documented choice. ``invalid`` is False on a finished day
    (nothing is legal there; every action is ignored). An action that is no element of the
    space (out of range in any integer dtype, a float such as 1.7 or NaN: :func:`action_index`) is
    illegal too and plays the substitute, never a wrapped or truncated index.
    """
    n = mask.shape[-1]
    a = action_index(action, n)
    legal = jnp.any(mask & (jnp.arange(n) == a))  # a comparison, not a gather (cheaper under vmap); False out of range
    sub = jnp.where(mask[n - 1], n - 1, jnp.argmax(mask)).astype(jnp.int32)
    return jnp.where(legal, a, sub), ~legal & jnp.any(mask)


def host_index(value) -> int | None:
    """A host-side action value as an ``int`` where it has an integer dtype (not bool), else None.

    For the checked mode's messages: they name the action as it was given (1.7, nan, 4294967297).
    """
    v = np.asarray(value).reshape(())
    return int(v) if v.dtype.kind in "iu" else None


def not_an_index(value, n: int) -> str | None:
    """The message for an action value that is no integer, naming it and what is allowed (None where it is one)."""
    if host_index(value) is not None:
        return None
    v = np.asarray(value).reshape(()).item()
    return f"action {v!r} is not an action index: the actions are the integers 0 … {n - 1}"


def why_illegal(c: int, what: str, action, mask: np.ndarray, rows: np.ndarray, slot_job: np.ndarray) -> str:
    """Why ``action`` is illegal in a (row, slot) space of ``c`` slots whose rows are ``what`` (host side, NumPy)."""
    n = mask.shape[0]
    bad = not_an_index(action, n)
    if bad is not None:
        return f"{bad} ({n - 1} waits)"
    action = host_index(action)
    if not 0 <= action < n:
        return f"action {action} is out of range: the actions are 0 … {n - 1} ({n - 1} waits)"
    if action == n - 1:
        return (
            f"action {action} (wait) is illegal: no job is left to arrive and no slot is busy, "
            "so waiting would end the day with jobs never run"
        )
    i, sl = divmod(action, c)
    head = f"action {action} ({what} {i} on slot {sl}) is illegal"
    if not rows[i]:
        return f"{head}: {what} {i} holds no job ({int(rows.sum())} of {rows.size} hold one)"
    if slot_job[sl] >= 0:
        return f"{head}: slot {sl} is busy (job {int(slot_job[sl])})"
    return f"{head}: the mask forbids it"


def raise_illegal(c: int, what: str, action, invalid, mask, rows, slot_job) -> None:
    """The checked mode's host callback: raise InvalidActionError for the first illegal action (any batch shape)."""
    invalid = np.asarray(invalid)
    if not invalid.any():
        return
    idx = tuple(np.argwhere(invalid)[0])
    arr = lambda x: np.asarray(x)[idx]  # noqa: E731  (this env's row of a batched argument)
    raise InvalidActionError(why_illegal(c, what, arr(action), arr(mask), arr(rows), arr(slot_job)))


__all__ = ["action_index", "host_index", "legalise", "not_an_index", "pair_mask", "raise_illegal", "why_illegal"]
