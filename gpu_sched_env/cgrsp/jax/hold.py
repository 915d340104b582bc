"""``action_mode="joint_hold"`` in JAX: the joint actions plus "hold GPU type g" (:mod:`gpu_sched_env.cgrsp.held`).

Actions: ``a = i·C + s`` (``i < 3``) as the joint design, ``a = 3·C + g`` holds type ``g``
(``g < T``), ``a = 3·C + T`` waits. The state carries ``held`` (bool[T]) and ``held_level``
(the stock status each type was held under). A step dispatches or holds, then advances
until an idle slot is not held while a job waits (:meth:`JaxHold._settle`): at each decision
point of the simulator the holds whose type's status changed, or whose laxity trigger fires,
are released (:func:`release`); when nothing else can happen every hold is let go. The
observation marks the idle slots not held in the ``offered`` column of ``slots``. Equal to
CGRSP-v0's :class:`~gpu_sched_env.cgrsp.held.HeldDeferrals` (``tests/cgrsp/jax/test_joint_hold_jax.py``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gpu_sched_env.cgrsp.fleet import HIGH
from gpu_sched_env.cgrsp.jax import core
from gpu_sched_env.cgrsp.jax.core import INF, band_of, n_waiting
from gpu_sched_env.cgrsp.jax.env import DESIGNS, JaxCGRSP
from gpu_sched_env.cgrsp.jax.legal import host_index, legalise, not_an_index
from gpu_sched_env.cgrsp.jax.mix import resolve
from gpu_sched_env.cgrsp.jax.obs import defer_cost, heads, next_event_gap, observe
from gpu_sched_env.cgrsp.jax.types import REWARD_PARTS, EnvParams, EnvState, day_of, n_jobs_of
from gpu_sched_env.core.errors import InvalidActionError


def free_slots(params: EnvParams, s: EnvState) -> jnp.ndarray:
    """Idle slots not held (bool[C])."""
    return (s.slot_job < 0) & ~s.held[params.slot_type]


def future_event(spec: core.Spec, params: EnvParams, s: EnvState) -> jnp.ndarray:
    """Whether an arrival or a completion is still to come (``Simulator.has_future_event``)."""
    return (s.n_arrived < n_jobs_of(spec.n, params)) | jnp.any(s.slot_job >= 0)


def laxity_trigger(env: JaxCGRSP, params: EnvParams, s: EnvState) -> jnp.ndarray:
    """Per GPU type (bool[T]): some waiting job's laxity on it is below its ``defer_cost`` (the hold's release test)."""
    spec = env.spec
    present, j, _ = heads(s, params, env.class_order, spec.n)
    day = day_of(s, params)
    d = jnp.where(present, day.deadline[j], INF)  # the earliest deadline per class: its least laxity
    laxity = jnp.min(d[:, None] - s.t - params.wbar[day.cx[j]], axis=0)  # f[T] [s]
    gap = next_event_gap(spec, params, s, s.slot_job >= 0)
    cost = defer_cost(params, band_of(params, s.t), gap, spec.markov is not False)
    return laxity < cost


def release(env: JaxHold, params: EnvParams, s: EnvState) -> jnp.ndarray:
    """The holds kept at a new decision point: status unchanged and no laxity trigger (``HeldDeferrals.on_advance``)."""
    return s.held & (s.stock == s.held_level) & ~laxity_trigger(env, params, s) & ~s.done


def _raise_illegal(action, invalid, mask, kc: int, n_hold: int) -> None:
    """The checked mode's host callback for this design: InvalidActionError for the first illegal action."""
    invalid = np.asarray(invalid)
    if not invalid.any():
        return
    idx = tuple(np.argwhere(invalid)[0])
    v, m = np.asarray(action)[idx], np.asarray(mask)[idx]
    n = m.shape[0]
    bad = not_an_index(v, n)
    if bad is not None:
        raise InvalidActionError(f"{bad} in the joint_hold design ({n - 1} waits)")
    a = host_index(v)
    if not 0 <= a < n:
        why = f"out of range: the actions are 0 … {n - 1} ({n - 1} waits)"
    elif a < kc:
        why = "the window position holds no job, the slot is busy or held, or no dispatch is possible"
    elif a < kc + n_hold:
        why = f"type {a - kc} is held already or has no idle slot, or holding it would stall the day"
    else:
        why = "waiting would end the day with jobs never run, or nothing is waiting"
    raise InvalidActionError(f"action {a} is illegal in the joint_hold design: {why}")


class JaxHold(JaxCGRSP):
    """CGRSP-v0's ``joint_hold`` design (build it with :meth:`JaxCGRSP.from_config`)."""

    def __init__(self, cfg, dtype=None, records: bool = True, mix=None, checked: bool = False) -> None:
        super().__init__(cfg, dtype, records, mix, checked)
        self.n_hold = self.spec.t  # one hold action per GPU type
        self.n_actions = self.K * self.spec.c + self.n_hold + 1
        self.wait_action = self.n_actions - 1

    def _start_state(self, day, idx, params: EnvParams) -> EnvState:
        s = super()._start_state(day, idx, params)
        return s.replace(held=jnp.zeros(self.spec.t, bool), held_level=jnp.zeros(self.spec.t, jnp.int32))

    def _obs(self, s: EnvState, params: EnvParams) -> jnp.ndarray:
        params = resolve(s, params)
        wj, ws, k = self._window(s, params)
        offered = free_slots(params, s) & ~s.done
        return observe(self.spec, params, s, wj, ws, k, self.K, self.rows, self.model, offered)

    def _action_mask(self, s: EnvState, params: EnvParams | None = None) -> jnp.ndarray:
        params = resolve(s, self.default_params if params is None else params)
        _, _, k = self._window(s, params)
        idle = s.slot_job < 0
        free = free_slots(params, s)
        ok = (k > 0) & jnp.any(free)
        pairs = (jnp.arange(self.K)[:, None] < k) & free[None, :]
        future = future_event(self.spec, params, s)
        own = params.slot_type[None, :] == jnp.arange(self.spec.t)[:, None]  # (T, C)
        hold = ~s.held & (s.stock != HIGH) & jnp.any(idle & own, axis=1) & (future | jnp.any(free & ~own, axis=1))
        return jnp.concatenate([(pairs & ok).reshape(-1), hold & ok, jnp.atleast_1d(future & ok)])

    def _decode(self, s: EnvState, params: EnvParams, action) -> tuple:
        """``(state with the hold applied, subqueue, slot, dispatch?, wait?, invalid)`` of an action.

        An illegal action plays its substitute as in the joint design (:func:`.legal.legalise`:
        *wait*, the last action, where legal, else the lowest legal action); ``checked`` raises.
        """
        c, kc = self.spec.c, self.K * self.spec.c
        mask = self._action_mask(s, params)
        a, invalid = legalise(mask, action)
        if self.checked:
            jax.debug.callback(_raise_illegal, jnp.asarray(action), invalid, mask, kc, self.n_hold)
        disp = a < kc
        g = a - kc
        hold = (g >= 0) & (g < self.n_hold)
        sel = (jnp.arange(self.spec.t) == g) & hold & ~s.done
        s = s.replace(held=s.held | sel, held_level=jnp.where(sel, s.stock, s.held_level))
        _, ws, _ = self._window(s, params)
        sub = jnp.where(disp, ws[jnp.clip(a // c, 0, self.K - 1)], -1)
        return s, sub, a % c, disp, ~disp & ~hold, invalid

    def _step(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """One action of the joint_hold design (no auto-reset; an illegal one plays its substitute)."""
        params = resolve(s, params)
        s, sub, slot, disp, wait, invalid = self._decode(s, params, action)
        return self._transition(s, params, sub, slot, disp, invalid, wait)

    def _step_autoreset(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """:meth:`JaxCGRSP.step_autoreset` for this design."""
        p_s = resolve(s, params)
        s, sub, slot, disp, wait, invalid = self._decode(s, p_s, action)
        s, reward, info = self._move(s, p_s, sub, slot, disp, invalid, wait)
        done = s.done
        s_r = self._reset_state(key, params)
        s = jax.tree_util.tree_map(lambda x, y: jnp.where(done, x, y), s_r, s)
        return self._obs(s, params), s, reward, done, info

    def _settle(self, s: EnvState, params: EnvParams, force) -> tuple:
        """Advance (at least once when ``force``) until an idle slot is not held while a job waits.

        After each advance (a new decision point) the holds are re-examined (:func:`release`);
        when every idle slot is held and nothing else can happen, every hold is let go instead.
        """
        sp = self.spec

        def ready(st):
            return (n_waiting(st) > 0) & jnp.any(free_slots(params, st))

        def cond(c):
            st, f, _, _ = c
            return ~st.done & (f | ~ready(st))

        def body(c):
            st, f, raw, tm = c
            stall = ~f & jnp.any(st.held) & (n_waiting(st) > 0) & ~future_event(sp, params, st)
            st, r, m = core.advance(sp, params, st, ~stall)
            held = jnp.where(stall, False, release(self, params, st))
            return st.replace(held=held), jnp.zeros((), bool), raw + r, tm + m

        raw0 = jnp.zeros(len(REWARD_PARTS), s.t.dtype)
        s, _, raw, tm = lax.while_loop(cond, body, (s, jnp.asarray(force, bool), raw0, jnp.zeros((), jnp.int32)))
        return s, raw, tm


DESIGNS["joint_hold"] = JaxHold

__all__ = ["JaxHold", "free_slots", "future_event", "release"]
