"""``action_mode="when"`` in JAX: dispatch the rule's base order's next pair, or wait (:mod:`gpu_sched_env.cgrsp.when`).

``a = 0`` dispatches the first entry of SPT+Rescue's plan (each job on the idle slot with the
least expected delay + W̄, :func:`~gpu_sched_env.cgrsp.jax.rules.rescue_plan`) made on the state
as it is, ``a = 1`` waits. The plan's first job is a subqueue's head (within a subqueue the
deadline order and the plan's order agree), so it is dispatched through that subqueue; the
``offered`` column of the observation marks the pair's slot and the ``offer`` block repeats its row
(as the ``slot`` design shows its offered slot). Equal to CGRSP-v0's
:class:`~gpu_sched_env.cgrsp.when.LearnedTiming` (``tests/cgrsp/jax/test_when_jax.py``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.jax.env import DESIGNS, JaxCGRSP
from gpu_sched_env.cgrsp.jax.legal import host_index, legalise, not_an_index
from gpu_sched_env.cgrsp.jax.mix import resolve
from gpu_sched_env.cgrsp.jax.obs import observe
from gpu_sched_env.cgrsp.jax.types import EnvParams, EnvState, day_of
from gpu_sched_env.core.errors import ConfigError, InvalidActionError


def next_pair(env: JaxCGRSP, s: EnvState, params: EnvParams) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """``(subqueue, slot, exists)`` of the base order's next pair on ``s`` (no deferral; the deferring rules' slot)."""
    from gpu_sched_env.cgrsp.jax.rules import SLOT_SCORE, rescue_plan

    jobs, slots, length = rescue_plan(env, params, s, s.ptr, s.slot_job < 0, SLOT_SCORE, first=True)
    day = day_of(s, params)
    j = jnp.maximum(jobs[0], 0)
    sub = 2 * day.cx[j] + day.tight[j].astype(jnp.int32)
    return sub.astype(jnp.int32), slots[0], length > 0


def _raise_illegal(action, invalid, mask) -> None:
    """The checked mode's host callback: InvalidActionError for the first illegal action."""
    invalid = np.asarray(invalid)
    if not invalid.any():
        return
    idx = tuple(np.argwhere(invalid)[0])
    v, m = np.asarray(action)[idx], np.asarray(mask)[idx]
    bad = not_an_index(v, 2)
    if bad is not None:
        raise InvalidActionError(f"{bad} in the when design (0 dispatches the base order's next pair, 1 waits)")
    a = host_index(v)
    if not 0 <= a < 2:
        why = "out of range: the actions are 0 (dispatch the base order's next pair) and 1 (wait)"
    elif a == 0:
        why = "no job waits or no slot is idle"
    else:
        why = "waiting would end the day with jobs never run" if m[0] else "nothing can be dispatched now"
    raise InvalidActionError(f"action {a} is illegal in the when design: {why}")


class JaxWhen(JaxCGRSP):
    """CGRSP-v0's ``when`` design (build it with :meth:`JaxCGRSP.from_config`)."""

    def __init__(self, cfg, dtype=None, records: bool = True, mix=None, checked: bool = False) -> None:
        super().__init__(cfg, dtype, records, mix, checked)
        self.n_actions = 2
        self.wait_action = 1
        self._twin: JaxCGRSP | None = None

    @property
    def rule_env(self) -> JaxCGRSP:
        """The joint design of the same config (the JAX rules' action space), built once."""
        if self.is_mixed:
            raise ConfigError(
                "a mixed env of action_mode = 'when' has no joint twin here; play the rules on "
                "JaxCGRSP.mixed of the joint design"
            )
        if self._twin is None:
            self._twin = JaxCGRSP.from_config(self.cfg.replace(action_mode="joint"), self.dtype, self.records)
        return self._twin

    def _obs(self, s: EnvState, params: EnvParams) -> jnp.ndarray:
        params = resolve(s, params)
        wj, ws, k = self._window(s, params)
        _, slot, ok = next_pair(self, s, params)
        ok = ok & ~s.done
        offered = (jnp.arange(self.spec.c) == slot) & ok
        return observe(self.spec, params, s, wj, ws, k, self.K, self.rows, self.model, offered, (slot, ok))

    def _action_mask(self, s: EnvState, params: EnvParams | None = None) -> jnp.ndarray:
        m = super()._action_mask(s, params)  # the joint mask: a pair is legal iff a job waits and a slot is idle
        return jnp.stack([jnp.any(m[:-1]), m[-1]])

    def _decode(self, s: EnvState, params: EnvParams, action) -> tuple:
        """``(subqueue, slot, dispatch?, invalid)`` of an action; an illegal one plays its substitute (*wait*, else 0).

        The substitute is :func:`~gpu_sched_env.cgrsp.jax.legal.legalise`'s, as in every design.
        """
        mask = self._action_mask(s, params)
        a, invalid = legalise(mask, action)
        if self.checked:
            jax.debug.callback(_raise_illegal, jnp.asarray(action), invalid, mask)
        sub, slot, ok = next_pair(self, s, params)
        do = (a == 0) & ok
        return jnp.where(do, sub, -1), slot, do, invalid

    def _step(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """One action of the when design (no auto-reset)."""
        params = resolve(s, params)
        return self._transition(s, params, *self._decode(s, params, action))

    def _step_autoreset(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """:meth:`JaxCGRSP.step_autoreset` for this design."""
        p_s = resolve(s, params)
        s, reward, info = self._move(s, p_s, *self._decode(s, p_s, action))
        done = s.done
        s_r = self._reset_state(key, params)
        s = jax.tree_util.tree_map(lambda x, y: jnp.where(done, x, y), s_r, s)
        return self._obs(s, params), s, reward, done, info


DESIGNS["when"] = JaxWhen

__all__ = ["JaxWhen", "next_pair"]
