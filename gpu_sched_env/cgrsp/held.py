"""Held deferrals (``action_mode="joint_hold"``): the joint job–slot actions plus "hold GPU type g".

A deferring rule leaves a slot idle while its type's stock status is worse than waiting for
a better one is expected to cost; under persistent stock it keeps doing so for tens of
decisions. With joint actions alone a learner must repeat that choice at every decision
point (and one slip costs a slot-hour); here one action says it once:

* ``a = i·C + s`` (``i < K``): window position ``i`` to idle slot ``s``, as ``joint``.
* ``a = K·C + g`` (``g < T``, the GPU types of the table): *hold type g*: no slot of type ``g``
  is offered (the mask is 0 on them) until the hold is released. The env stays at the same
  instant while an unheld idle slot is left; when every idle slot is held it advances to the
  next decision point, like *wait*.
* ``a = K·C + T``: *wait* (the last action, the no-op: advance to the next event).

A hold on ``g`` is released at a decision point (the simulator's: an idle slot and a waiting
job; the stock is redrawn there) when

1. ``g``'s stock status differs from the one it was held under, or
2. the *laxity trigger* fires: some waiting job ``j`` has ``d_j − t − W̄(κ_j, g) <
   defer_cost_g``, its laxity on type ``g`` below the expected time until a slot of ``g`` left
   idle now starts a job (:func:`gpu_sched_env.cgrsp.stock.defer_cost`, the public stock
   model the deferring rules use, at the gap :func:`~gpu_sched_env.cgrsp.stock.next_event_gap`
   of the busy slots and arrivals). Holding longer is then expected to make ``j`` miss on
   ``g``. (Within a class the earliest deadline has the least laxity, so the class heads decide.)

All holds are let go when nothing else can happen (no arrival or completion is left) while
jobs wait, so a day never stalls. *Hold g* is legal when ``g`` is not held, has an idle slot,
its stock status is not High (a hold waits for a better status, and none is better than High),
and holding it leaves an unheld idle slot or a future event; *wait* as in ``joint``. (A hold at
High can only cost; learners offered one learned to avoid holds everywhere and never held at Low
stock: docs/results_ablation.md.)

The rule ``spt_rescue_defer_exp`` expressed this way: hold each type the rule's deferral test
leaves idle, then dispatch its plan on the rest (``tests/cgrsp/test_joint_hold.py`` measures
how close that comes to ``simulate()``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_env.cgrsp.actions import JointActions, Pair
from gpu_sched_env.cgrsp.fleet import HIGH, Fleet
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.stock import defer_cost, next_event_gap
from gpu_sched_env.core.errors import ConfigError

N_CLASSES = 3  # complexity classes: the window holds at most one head per class


class HeldDeferrals(JointActions):
    """``joint`` plus one *hold type g* action per GPU type (module docstring)."""

    mode = "joint_hold"

    def __init__(self, window: int, c_max: int, hold: str = "event", n_types: int = 0) -> None:
        self.T = int(n_types)
        super().__init__(window, c_max, hold)
        self.held: dict[int, int] = {}  # type -> the stock status it was held under
        self._type: np.ndarray = np.zeros(c_max, np.int64)

    @classmethod
    def build(cls, window: int, params: Any, hold: str = "event") -> HeldDeferrals:
        return cls(window, params.c_max, hold, n_types=len(params.gpu_types))

    @staticmethod
    def check_config(config: Any) -> None:
        """ConfigError for a window or fleet the hold actions cannot express (before anything is built)."""
        if config.window_by != "class" or config.window > N_CLASSES:
            raise ConfigError(
                f"window = {config.window!r} with window_by = {config.window_by!r} is not allowed for action_mode = "
                f"'joint_hold'; allowed: window_by = 'class' and window in 1..{N_CLASSES} (the class heads)"
            )
        p = config.sim_params()
        covered = set(Fleet.from_params(p).slot_type)
        if len(covered) < len(p.gpu_types):
            raise ConfigError(
                f"c_max = {p.c_max} is not allowed for action_mode = 'joint_hold': its slots cover {len(covered)} of "
                f"the {len(p.gpu_types)} GPU types, and each hold action names a type with slots; allowed: c_max ≥ "
                f"{len(p.gpu_types)} with the round-robin slot pattern (or slot_types naming every type)"
            )

    def size(self) -> int:
        return self.K * self.C + self.T

    def reset(self, sim: Simulator) -> None:
        super().reset(sim)
        self.held = {}
        self._type = np.asarray(sim.fleet.slot_type, np.int64)

    # ------------------------------------------------------------------ what the env calls
    def choose(self, sim: Simulator, win: np.ndarray, a: int) -> Pair | None:
        g = a - self.K * self.C
        if 0 <= g < self.T:
            self.held[g] = sim.stock[g]
            return None
        return super().choose(sim, win, a)

    def free(self, sim: Simulator) -> np.ndarray:
        """Idle slots not held (bool per slot): the slots an action may fill now."""
        held = np.zeros(max(self.T, 1), bool)
        held[list(self.held)] = True
        return (np.asarray(sim.slot_job) < 0) & ~held[self._type]

    def ready(self, sim: Simulator) -> bool:
        if self._wait:  # wait: advance to the next event
            self._wait = False
            return False
        if not sim.waiting:
            return False
        if self.free(sim).any():
            return True
        if self.held and not sim.has_future_event():  # nothing else can happen: let every hold go
            self.held = {}
            return True
        return False

    def on_advance(self, sim: Simulator, alive: bool) -> None:
        if not self.held:
            return
        if not alive:
            self.held = {}
            return
        laxity = self._laxity_floor(sim)
        gap = next_event_gap(sim)
        keep = {}
        for g, lv in self.held.items():
            if sim.stock[g] == lv and not laxity[g] < defer_cost(sim, g, gap):
                keep[g] = lv
        self.held = keep

    def _laxity_floor(self, sim: Simulator) -> np.ndarray:
        """Per type g: the least laxity d_j − t − W̄(κ_j, g) over the waiting jobs [s] (inf if none)."""
        d = np.full(N_CLASSES, np.inf)
        for j in sim.waiting:
            k = sim.complexity[j]
            if sim.deadline[j] < d[k]:
                d[k] = sim.deadline[j]
        wbar = np.asarray(sim.fleet.wbar, float)  # (3, T)
        return np.min(d[:, None] - sim.t - wbar, axis=0)

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        m = np.zeros(self.n_actions, bool)
        free = self.free(sim)
        if not (n_window and free.any()):
            return m
        kc = self.K * self.C
        m[: n_window * self.C].reshape(n_window, self.C)[:] = free
        future = sim.has_future_event()
        idle = np.asarray(sim.slot_job) < 0
        for g in range(self.T):
            own = self._type == g
            if g not in self.held and sim.stock[g] != HIGH and (idle & own).any():
                m[kc + g] = future or bool((free & ~own).any())
        m[-1] = future
        return m

    def doable_now(self, plan):
        """The plan's entries on slots not held (a held slot cannot be filled)."""
        held = set(self.held)
        return [(j, s) for j, s in plan if self._type[s] not in held]

    def marked(self, sim: Simulator) -> list[int]:
        """The slots the observation marks as offered: the idle slots not held."""
        return np.flatnonzero(self.free(sim)).tolist()

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        g = a - self.K * self.C
        if not 0 <= g < self.T:
            if a < self.K * self.C and self._type[a % self.C] in self.held and sim.slot_job[a % self.C] < 0:
                return f"slot {a % self.C} is held (its GPU type {self._type[a % self.C]} is held; action = {a})"
            return super().why_illegal(sim, win, a)
        if g in self.held:
            why = f"type {g} is held already"
        elif sim.stock[g] == HIGH:
            why = f"type {g}'s stock status is High (a hold waits for a better status; none is better)"
        elif not ((np.asarray(sim.slot_job) < 0) & (self._type == g)).any():
            why = f"type {g} has no idle slot"
        else:
            why = "holding it would leave no slot to fill and nothing is left to happen (the day would stall)"
        return f"hold type {g} (action {a}) is illegal: {why} (hold actions: {self.K * self.C}..{self.size() - 1})"

    @staticmethod
    def simpler_designs(config: Any) -> dict[str, Any]:
        """The joint design without the hold actions."""
        return {"joint": config.replace(action_mode=JointActions.mode)}


__all__ = ["N_CLASSES", "HeldDeferrals"]
