"""Learned timing on the rule's order (``action_mode="when"``): dispatch the base order's next pair, or wait.

The strongest rule, ``spt_rescue_defer_exp``, makes two choices at a decision point: *which* job
goes on *which* slot (SPT+Rescue's job order; each job on the idle slot with the least expected
delay + W̄) and *when* to leave a slot idle (its deferral test). In this design the agent makes
only the second, and the first is the rule's:

* ``a = 0``: dispatch the base order's next pair: the first entry of ``spt_rescue_defer_exp``'s
  plan with its deferral off (``defer="none"``), made on the state as it is now;
* ``a = 1``: *wait* (the no-op: advance to the next event), as in ``joint``.

Dispatching is legal when a job waits and a slot is idle; *wait* when an event is still to come
(as in ``joint``). The observation is the joint design's, with the slot the next pair would take
marked in the ``offered`` column of ``slots`` and its row repeated in ``offer`` (as the ``slot``
design shows its offered slot): the status of the slot at stake, without a lookup. Playing
*wait* exactly when the rule's plan is empty (its deferral holds every idle slot) comes within
0.5 % of ``spt_rescue_defer_exp``'s mean wait on hectic days, fresh and Markov stock
(``tests/cgrsp/jax/test_when_jax.py``; not exactly: the next pair is planned on the state as it
is, the rule plans once per decision point), so the rule lies inside this design, within half
the parity margin: a learner has to find the deferral, not the order. A learner in this design
is labelled as such (its job order is a published heuristic's, not learned).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from gpu_sched_env.cgrsp.actions import JointActions, Pair
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.core.errors import InvalidActionError

BASE_RULE = "spt_rescue_defer_exp"  # its plan with the deferral off is the base order
BASE_KNOBS = {"defer": "none"}
DISPATCH = 0


class LearnedTiming(JointActions):
    """``Discrete(2)``: 0 dispatches the base order's next pair, 1 waits (module docstring)."""

    mode = "when"

    def __init__(self, window: int, c_max: int, hold: str = "event", params: Any = None) -> None:
        super().__init__(window, c_max, hold)
        self._params = params
        self._policy: Any = None
        self._sim: Simulator | None = None

    @classmethod
    def build(cls, window: int, params: Any, hold: str = "event") -> LearnedTiming:
        return cls(window, params.c_max, hold, params=params)

    def size(self) -> int:
        return 1

    def reset(self, sim: Simulator) -> None:
        from gpu_sched_env.cgrsp.policies import build_policy
        from gpu_sched_env.core.rng import stream

        super().reset(sim)
        self._sim = sim
        self._policy = build_policy(BASE_RULE, self._params, **BASE_KNOBS)
        self._policy.reset(sim.view, stream(0, "cgrsp/policy"))  # the rule is deterministic: the stream is unused

    def next_pair(self, sim: Simulator) -> Pair | None:
        """The base order's next ``(job, slot)`` now (None when no job waits or no slot is idle)."""
        if not (sim.n_idle and sim.waiting):
            return None
        plan = self._policy.decide(sim.view)
        return (int(plan[0][0]), int(plan[0][1])) if plan else None

    def _now(self) -> Pair | None:
        """:meth:`next_pair` of the current day (None before the first reset)."""
        return None if self._sim is None else self.next_pair(self._sim)

    def choose(self, sim: Simulator, win: np.ndarray, a: int) -> Pair | None:
        if a == self.wait_action:
            self._wait = True
            return None
        return self.next_pair(sim)

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        m = np.zeros(self.n_actions, bool)
        if sim.n_idle and sim.waiting:
            m[DISPATCH] = True
            m[-1] = sim.has_future_event()
        return m

    @property
    def offered(self) -> int | None:
        """The slot the next pair would take: the observation marks it and repeats its row in ``offer``."""
        nxt = self._now()
        return None if nxt is None else nxt[1]

    def pair(self, win: np.ndarray, a: int) -> Pair:
        nxt = self._now()
        if nxt is None:
            raise InvalidActionError(f"action {a}: no pair to dispatch now (no job waits or no slot is idle)")
        return nxt

    def encode(self, pos: int, slot: int) -> int:
        """The dispatch action when ``slot`` is the next pair's slot; any other pair is not expressible here."""
        nxt = self._now()
        if nxt is None or nxt[1] != slot:
            raise InvalidActionError(
                f"the pair (window position {pos}, slot {slot}) is not expressible in action_mode = 'when': its only "
                f"dispatch is the base order's next pair {nxt} (or wait)"
            )
        return DISPATCH

    def doable_now(self, plan: Iterable[Pair]) -> list[Pair]:
        """A rule that dispatches anything now dispatches the next pair here (its *when*, the base order's *which*)."""
        nxt = self._now()
        return [nxt] if nxt is not None and list(plan) else []

    def rule_choice(self, plan: Iterable[Pair], act: Any) -> Pair | None:
        return next(iter(self.doable_now(plan)), None)

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        if a == self.wait_action:
            why = self._noop_stalls() if sim.n_idle and sim.waiting else "nothing can be dispatched now"
        else:
            why = "no job waits or no slot is idle"
        return f"{why} (action {DISPATCH} dispatches the base order's next pair, {self.wait_action} waits)"

    @staticmethod
    def simpler_designs(config: Any) -> dict[str, Any]:
        """The joint design (every pair open to the agent)."""
        return {"joint": config.replace(action_mode=JointActions.mode)}


__all__ = ["BASE_KNOBS", "BASE_RULE", "DISPATCH", "LearnedTiming"]
