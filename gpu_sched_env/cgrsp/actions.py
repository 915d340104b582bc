"""Action schemes of ``CGRSP-v0``: each owns its space's layout, its state, mask and decoding.

The env (:mod:`gpu_sched_env.cgrsp.env`) only coordinates, and the calls go one way: it asks
its scheme for the mask, lets it decode an action (:meth:`ActionScheme.choose`: the
``(job, slot)`` to dispatch, or None for the no-op), dispatches, and then advances the
simulator until the scheme is :meth:`~ActionScheme.ready` for the agent again, telling it of
each new decision point (:meth:`~ActionScheme.on_advance`). A scheme never calls the env.
Whatever depends on the scheme (what a heuristic plan can do now, the design variants of a
study, the slot the observation marks as offered) is asked of the scheme, never decided by
comparing ``action_mode`` elsewhere. ``ACTION_SCHEMES`` maps each ``action_mode`` to its
class (HighwayEnv's action factory is the model).

* :class:`JointActions` (``joint``): ``Discrete(K·C + 1)``, ``a = i·C + s`` puts window
  position ``i`` on slot ``s``; ``K·C`` is *wait* (advance to the next event).
* :class:`SlotOffers` (``slot``): ``Discrete(K + 1)``, the idle slots of a decision point are
  offered one at a time; ``a = i`` puts window position ``i`` on the offered slot, ``K``
  leaves it idle (``hold``: until the next decision point, or until its stock changes).
* :class:`~gpu_sched_env.cgrsp.held.HeldDeferrals` (``joint_hold``): ``Discrete(K·C + T + 1)``,
  the joint actions plus *hold GPU type g* (:mod:`gpu_sched_env.cgrsp.held`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np

from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.core.errors import InvalidActionError

Pair = tuple[int, int]  # (job id, slot)


class ActionScheme:
    """Base of the action schemes: ``K`` window positions, ``C`` slots; the last action is the no-op."""

    mode: ClassVar[str] = ""
    noop_name: ClassVar[str] = ""
    holds_slots: ClassVar[bool] = False  # its no-op leaves one slot idle (so ``hold`` applies)

    def __init__(self, window: int, c_max: int, hold: str = "event") -> None:
        self.K, self.C, self.hold = int(window), int(c_max), hold
        self.n_actions = self.size() + 1
        self.wait_action = self.n_actions - 1

    @classmethod
    def build(cls, window: int, params: Any, hold: str = "event") -> ActionScheme:
        """The scheme for a window of ``window`` jobs on the simulator's ``params`` (its fleet)."""
        return cls(window, params.c_max, hold)

    @staticmethod
    def check_config(config: Any) -> None:
        """Raise ConfigError for an env config this scheme cannot express (called when the config is built)."""

    def size(self) -> int:  # number of dispatch actions
        raise NotImplementedError

    # --- what the env calls (the scheme never calls the env back)
    def reset(self, sim: Simulator) -> None:
        """A new day (the env then advances until :meth:`ready`)."""

    def choose(self, sim: Simulator, win: np.ndarray, a: int) -> Pair | None:
        """Take the legal action ``a``: the ``(job, slot)`` the env dispatches, None for the no-op."""
        raise NotImplementedError

    def ready(self, sim: Simulator) -> bool:
        """Whether the agent decides now (else the env advances the simulator and asks again)."""
        raise NotImplementedError

    def on_advance(self, sim: Simulator, alive: bool) -> None:
        """The simulator reached a new decision point (or the end of the day)."""

    @property
    def offered(self) -> int | None:
        """The slot this scheme offers now (the observation marks it), None if it offers none."""
        return None

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        """Boolean mask over the actions for a window of ``n_window`` jobs."""
        raise NotImplementedError

    def marked(self, sim: Simulator) -> list[int]:
        """Slots the observation's ``offered`` column marks besides :attr:`offered` (none by default)."""
        return []

    def pair(self, win: np.ndarray, a: int) -> Pair:
        """``(job, slot)`` of the dispatch action ``a``."""
        raise NotImplementedError

    def encode(self, pos: int, slot: int) -> int:
        """The action putting window position ``pos`` on ``slot``."""
        raise NotImplementedError

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        """Why the in-range action ``a`` is illegal now (for the error message)."""
        raise NotImplementedError

    # --- what agents and studies ask (instead of comparing ``action_mode``)
    def doable_now(self, plan: Iterable[Pair]) -> list[Pair]:
        """The entries of a ``(job, slot)`` plan that one action of this scheme can carry out now."""
        return list(plan)

    def rule_choice(self, plan: Iterable[Pair], act: Any) -> Pair | None:
        """What a rule with this ``plan`` does now, as a ``(job, slot)`` pair (None: the no-op).

        ``act()`` is the rule agent's action as a pair (None for the no-op): the joint scheme
        takes it; a scheme that offers a slot takes the plan's job for that slot, even one
        beyond the window (what the rule would do were the window unbounded).
        """
        return act()

    @staticmethod
    def simpler_designs(config: Any) -> dict[str, Any]:
        """Variants of an env config with simpler action designs (name -> config), for design-cost studies."""
        return {}

    def _noop_stalls(self) -> str:
        return f"{self.noop_name} is illegal: nothing is left to happen, so it would stall the day"


class JointActions(ActionScheme):
    """``a = i·C + s``: window position ``i`` to slot ``s``; ``K·C`` waits for the next event."""

    mode = "joint"
    noop_name = "wait"

    def __init__(self, window: int, c_max: int, hold: str = "event") -> None:
        super().__init__(window, c_max, hold)
        self._wait = False  # the agent chose to wait: advance once, whatever the state

    def size(self) -> int:
        return self.K * self.C

    def reset(self, sim: Simulator) -> None:
        self._wait = False

    def choose(self, sim: Simulator, win: np.ndarray, a: int) -> Pair | None:
        if a == self.wait_action:
            self._wait = True
            return None
        return self.pair(win, a)

    def ready(self, sim: Simulator) -> bool:
        if self._wait:  # wait: advance to the next event (the next decision point)
            self._wait = False
            return False
        return bool(sim.n_idle and sim.waiting)  # another assignment is possible at this instant

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        m = np.zeros(self.n_actions, bool)
        if n_window and sim.n_idle:
            m[: n_window * self.C].reshape(n_window, self.C)[:] = np.array(sim.slot_job) < 0
            m[-1] = sim.has_future_event()
        return m

    def pair(self, win: np.ndarray, a: int) -> Pair:
        i, s = divmod(a, self.C)
        return int(win[i]), s

    def encode(self, pos: int, slot: int) -> int:
        return pos * self.C + slot

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        if a == self.wait_action:
            why = self._noop_stalls()
        else:
            i, s = divmod(a, self.C)
            if i >= win.size:
                why = f"window position {i} is empty (the window holds {win.size} jobs)"
            else:
                why = f"slot {s} is busy with job {sim.slot_job[s]}"
        return f"{why} (action = window position × {self.C} + slot, no-op = {self.wait_action})"


class SlotOffers(ActionScheme):
    """One idle slot offered at a time; the no-op leaves it idle (``hold`` says for how long)."""

    mode = "slot"
    noop_name = "leaving the offered slot idle"
    holds_slots = True

    def __init__(self, window: int, c_max: int, hold: str = "event") -> None:
        super().__init__(window, c_max, hold)
        self._offered: int | None = None
        self._declined: set[int] = set()  # left idle at this instant
        self.held: dict[int, int] = {}  # hold="stock": slot -> the stock level it was left idle under

    def size(self) -> int:
        return self.K

    @property
    def offered(self) -> int | None:
        return self._offered

    def reset(self, sim: Simulator) -> None:
        self._offered, self._declined, self.held = None, set(), {}

    def choose(self, sim: Simulator, win: np.ndarray, a: int) -> Pair | None:
        if a != self.wait_action:
            return self.pair(win, a)
        self._declined.add(self._offered)  # type: ignore[arg-type]
        if self.hold == "stock":
            self.held[self._offered] = _level(sim, self._offered)  # type: ignore[arg-type]
        return None

    def ready(self, sim: Simulator) -> bool:
        """Offer the next idle slot neither declined nor held; not ready (advance) when none is left.

        Held slots are let go when nothing else can happen (no arrival or completion is
        left), so that the day never stalls.
        """
        while True:
            nxt = next(self._offerable(sim), None) if sim.waiting else None
            if nxt is not None:
                self._offered = nxt
                return True
            if not (self.held and sim.waiting and not sim.has_future_event()):
                return False
            self.held.clear()
            self._declined = set()

    def on_advance(self, sim: Simulator, alive: bool) -> None:
        self._declined = set()
        if self.held:  # a new decision point: let go of the slots whose stock status changed
            self.held = {s: lv for s, lv in self.held.items() if alive and _level(sim, s) == lv}
        if not alive:
            self._offered = None

    def _offerable(self, sim: Simulator) -> Iterator[int]:
        """Idle slots that may be offered now (not declined at this instant, not held)."""
        sj, declined, held = sim.slot_job, self._declined, self.held
        return (s for s in range(self.C) if sj[s] < 0 and s not in declined and s not in held)

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        m = np.zeros(self.n_actions, bool)
        if n_window and sim.n_idle and self._offered is not None:
            m[:n_window] = True
            others = sum(1 for _ in self._offerable(sim)) > 1
            m[-1] = others or sim.has_future_event()
        return m

    def pair(self, win: np.ndarray, a: int) -> Pair:
        return int(win[a]), int(self._offered)  # type: ignore[arg-type]

    def encode(self, pos: int, slot: int) -> int:
        if slot != self._offered:
            raise InvalidActionError(
                f"slot {slot} is not the offered slot ({self._offered}); in slot mode an action only fills the offered "
                "slot"
            )
        return pos

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        why = (
            self._noop_stalls()
            if a == self.wait_action
            else f"window position {a} is empty (the window holds {win.size} jobs)"
        )
        return f"{why} (action = window position on offered slot {self._offered}, no-op = {self.wait_action})"

    def doable_now(self, plan: Iterable[Pair]) -> list[Pair]:
        return [(j, s) for j, s in plan if s == self._offered]

    def rule_choice(self, plan: Iterable[Pair], act: Any) -> Pair | None:
        return next(iter(self.doable_now(plan)), None)

    @staticmethod
    def simpler_designs(config: Any) -> dict[str, Any]:
        """``hold=event`` (when the design holds slots longer) and the joint scheme."""
        out = {"hold=event": config.replace(hold="event")} if config.hold != "event" else {}
        return out | {"joint": config.replace(action_mode=JointActions.mode, hold="event")}


def _level(sim: Simulator, slot: int) -> int:
    return sim.stock[sim.fleet.slot_type[slot]]


__all__ = ["ActionScheme", "JointActions", "Pair", "SlotOffers"]
