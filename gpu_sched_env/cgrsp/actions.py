"""Action schemes of ``CGRSP-v0``: each owns its space's layout, its state, mask and decoding.

The env (:mod:`gpu_sched_env.cgrsp.env`) only coordinates: it asks its scheme for the mask,
lets the scheme apply an action (a dispatch through :meth:`CGRSPEnv.dispatch`, or the no-op)
and tells it when the simulator reaches a new decision point. ``ACTION_SCHEMES`` maps each
``action_mode`` to its class (HighwayEnv's action factory is the model).

* :class:`JointActions` (``joint``): ``Discrete(K·C + 1)``, ``a = i·C + s`` puts window
  position ``i`` on slot ``s``; ``K·C`` is *wait* (advance to the next event).
* :class:`SlotOffers` (``slot``): ``Discrete(K + 1)``, the idle slots of a decision point are
  offered one at a time; ``a = i`` puts window position ``i`` on the offered slot, ``K``
  leaves it idle (``hold``: until the next decision point, or until its stock changes).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

import numpy as np

from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.core.errors import InvalidActionError


class Host(Protocol):
    """What a scheme needs of the env (:class:`~gpu_sched_env.cgrsp.env.CGRSPEnv` provides it)."""

    sim: Simulator
    done: bool
    window_jobs_view: np.ndarray

    def dispatch(self, job: int, slot: int) -> None: ...  # assign now and book the reward parts

    def advance(self) -> None: ...  # to the next decision point, booking the reward parts


class ActionScheme:
    """Base of the action schemes: ``K`` window positions, ``C`` slots; the last action is the no-op."""

    mode: ClassVar[str] = ""
    noop_name: ClassVar[str] = ""

    def __init__(self, window: int, c_max: int, hold: str = "event") -> None:
        self.K, self.C, self.hold = int(window), int(c_max), hold
        self.n_actions = self.size() + 1
        self.wait_action = self.n_actions - 1

    def size(self) -> int:  # number of dispatch actions
        raise NotImplementedError

    # --- what the env calls
    def reset(self, env: Host) -> None:
        """A new day, paused at its first decision point."""

    def apply(self, env: Host, a: int) -> None:
        """Carry out the legal action ``a`` (the env advances the simulator as needed)."""
        raise NotImplementedError

    def on_advance(self, sim: Simulator, alive: bool) -> None:
        """The simulator reached a new decision point (or the end of the day)."""

    @property
    def offered(self) -> int | None:
        """The slot offered now (``slot`` mode), else None."""
        return None

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        """Boolean mask over the actions for a window of ``n_window`` jobs."""
        raise NotImplementedError

    def pair(self, win: np.ndarray, a: int) -> tuple[int, int]:
        """``(job, slot)`` of the dispatch action ``a``."""
        raise NotImplementedError

    def encode(self, pos: int, slot: int) -> int:
        """The action putting window position ``pos`` on ``slot``."""
        raise NotImplementedError

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        """Why the in-range action ``a`` is illegal now (for the error message)."""
        raise NotImplementedError

    def _noop_stalls(self) -> str:
        return f"{self.noop_name} is illegal: nothing is left to happen, so it would stall the day"


class JointActions(ActionScheme):
    """``a = i·C + s``: window position ``i`` to slot ``s``; ``K·C`` waits for the next event."""

    mode = "joint"
    noop_name = "wait"

    def size(self) -> int:
        return self.K * self.C

    def apply(self, env: Host, a: int) -> None:
        sim = env.sim
        if a == self.wait_action:
            env.advance()
            return
        env.dispatch(*self.pair(env.window_jobs_view, a))
        if not (sim.n_idle and sim.waiting):
            env.advance()

    def mask(self, sim: Simulator, n_window: int) -> np.ndarray:
        m = np.zeros(self.n_actions, bool)
        if n_window and sim.n_idle:
            m[: n_window * self.C].reshape(n_window, self.C)[:] = np.array(sim.slot_job) < 0
            m[-1] = sim.has_future_event()
        return m

    def pair(self, win: np.ndarray, a: int) -> tuple[int, int]:
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

    def reset(self, env: Host) -> None:
        self._declined, self.held = set(), {}
        self._offer_next(env)

    def apply(self, env: Host, a: int) -> None:
        if a == self.wait_action:
            self._declined.add(self._offered)  # type: ignore[arg-type]
            if self.hold == "stock":
                self.held[self._offered] = _level(env.sim, self._offered)  # type: ignore[arg-type]
        else:
            env.dispatch(*self.pair(env.window_jobs_view, a))
        self._offer_next(env)

    def on_advance(self, sim: Simulator, alive: bool) -> None:
        self._declined = set()
        if self.held:  # a new decision point: let go of the slots whose stock status changed
            self.held = {s: lv for s, lv in self.held.items() if alive and _level(sim, s) == lv}

    def _offer_next(self, env: Host) -> None:
        """Offer the next idle slot neither declined nor held; advance when none is left.

        Held slots are let go when nothing else can happen (no arrival or completion is
        left), so that the day never stalls.
        """
        sim = env.sim
        while not env.done:
            nxt = next(self._offerable(sim), None) if sim.waiting else None
            if nxt is not None:
                self._offered = nxt
                return
            if self.held and sim.waiting and not sim.has_future_event():
                self.held.clear()
                self._declined = set()
                continue
            env.advance()
        self._offered = None

    def _offerable(self, sim: Simulator) -> Any:
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

    def pair(self, win: np.ndarray, a: int) -> tuple[int, int]:
        return int(win[a]), int(self._offered)  # type: ignore[arg-type]

    def encode(self, pos: int, slot: int) -> int:
        if slot != self._offered:
            raise InvalidActionError(f"slot {slot} is not the offered slot ({self._offered}); in slot mode an action only fills the offered slot")
        return pos

    def why_illegal(self, sim: Simulator, win: np.ndarray, a: int) -> str:
        why = self._noop_stalls() if a == self.wait_action else f"window position {a} is empty (the window holds {win.size} jobs)"
        return f"{why} (action = window position on offered slot {self._offered}, no-op = {self.wait_action})"


def _level(sim: Simulator, slot: int) -> int:
    return sim.stock[sim.fleet.slot_type[slot]]


ACTION_SCHEMES: dict[str, type[ActionScheme]] = {cls.mode: cls for cls in (JointActions, SlotOffers)}

__all__ = ["ACTION_SCHEMES", "ActionScheme", "Host", "JointActions", "SlotOffers"]
