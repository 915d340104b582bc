"""What a CGRSP policy is handed: :class:`SimView`, a read-only window on a running simulator.

Policies follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(view, rng)`` once per run
and ``decide(view)`` at every decision point, with ``view`` the simulator's :class:`SimView`
(``sim.view``, made once with the simulator). The view exposes exactly what a scheduler may
know at a decision point and nothing that changes the run:

========================  ===================================================================
``t``                     the clock [s]
``params``, ``fleet``     the world: parameters (λ, N, weights ...), W̄ table, prices, slot
                          types, delay ranges, stock model
``n_jobs``                jobs of the day (a parameter, like λ)
``n_arrived``             jobs ``0 .. n_arrived - 1`` have arrived (ids are in submit order)
``submit``, ``deadline``, per arrived job (lists of length ``n_arrived``: a job that has not
``complexity``, ``tight``  arrived is not in them, so future arrivals cannot be read)
``waiting``               the waiting job ids in submit order (a read-only mapping)
``dispatched``            job ids in dispatch order (with ``n_arrived``, the log that
                          incremental queues follow)
``slot_job``              the job on each slot, -1 idle
``slot_dispatch``,        per slot: dispatch time and stock level at dispatch of its job
``slot_level``
``n_idle``, ``idle_slots()``  idle slots
``started(slot)``,        provisioning finished (observable), a job's start once it happened
``start_if_started(job)``
``expected_free(slot)``   expected free time from public knowledge
``wbar(job, slot)``       expected run time of ``job`` on ``slot``'s type
``stock``                 every type's stock status at this decision point
``n_decisions``           decision points so far
``has_future_event()``    whether an arrival or a completion is still to come
``done``                  every job has completed
========================  ===================================================================

Not in the view: :meth:`~gpu_sched_env.cgrsp.sim.Simulator.assign` and
:meth:`~gpu_sched_env.cgrsp.sim.Simulator.advance` (a policy returns its plan, the driver
applies it), :meth:`~gpu_sched_env.cgrsp.sim.Simulator.realised` and the workload's
realised run times, provisioning delays and future arrivals, the stock process.

Speed: the view is made once per simulator and its attributes are the simulator's own lists
and bound methods (the per-job lists grow as jobs arrive, at decision points); scalars that
change (``t``, ``stock``, ``n_idle`` ...) are properties, except ``n_arrived``, which the
simulator sets with the per-job lists at each decision point. The lists are read-only
by convention: a policy must not mutate them. Names starting with ``_`` are not part of the
view (Python cannot hide an object from code that goes looking for it; the contract is the
public names, and ``tests/cgrsp/test_view.py`` checks that none of them reaches the rest).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

# the public names of the view (tests check that this is all a policy can see)
VIEW_FIELDS: tuple[str, ...] = (
    "t",
    "params",
    "fleet",
    "n_jobs",
    "n_arrived",
    "submit",
    "deadline",
    "complexity",
    "tight",
    "waiting",
    "dispatched",
    "slot_job",
    "slot_dispatch",
    "slot_level",
    "n_idle",
    "idle_slots",
    "started",
    "start_if_started",
    "expected_free",
    "wbar",
    "stock",
    "n_decisions",
    "has_future_event",
    "done",
)


class SimView:
    """A read-only window on one :class:`~gpu_sched_env.cgrsp.sim.Simulator` (see the module doc).

    Made by the simulator (``sim.view``); the driver (:func:`~gpu_sched_env.cgrsp.sim.run`,
    the env's heuristic agent, the planner's model) hands it to the policy.
    """

    __slots__ = (
        "_sim",
        "params",
        "fleet",
        "n_jobs",
        "n_arrived",
        "submit",
        "deadline",
        "complexity",
        "tight",
        "waiting",
        "dispatched",
        "slot_job",
        "slot_dispatch",
        "slot_level",
        "idle_slots",
        "started",
        "start_if_started",
        "expected_free",
        "wbar",
        "has_future_event",
    )

    def __init__(self, sim: Any) -> None:  # a Simulator (not imported here: sim.py imports this module)
        self._sim = sim
        self.params = sim.params
        self.fleet = sim.fleet
        self.n_jobs = sim.n_jobs
        n = sim.n_arrived  # 0 for a fresh simulator; the planner's model starts mid-day
        self.n_arrived: int = n  # = len(self.submit): set with the lists at each decision point
        self.submit: list[float] = sim.submit[:n]
        self.deadline: list[float] = sim.deadline[:n]
        self.complexity: list[int] = sim.complexity[:n]
        self.tight: list[bool] = sim.tight[:n]
        self.waiting = MappingProxyType(sim.waiting)
        self.dispatched: list[int] = sim.dispatched
        self.slot_job: list[int] = sim.slot_job
        self.slot_dispatch: list[float] = sim.slot_dispatch
        self.slot_level: list[int] = sim.slot_level
        self.idle_slots = sim.idle_slots
        self.started = sim.started
        self.start_if_started = sim.start_if_started
        self.expected_free = sim.expected_free
        self.wbar = sim.wbar
        self.has_future_event = sim.has_future_event

    # plain properties: cheaper than attrgetter("_sim.t") on CPython 3.11+
    @property
    def t(self) -> float:
        """The clock [s]."""
        return self._sim.t

    @property
    def n_idle(self) -> int:
        """Number of idle slots."""
        return self._sim.n_idle

    @property
    def stock(self) -> list[int]:
        """Stock status per GPU type at this decision point."""
        return self._sim.stock

    @property
    def n_decisions(self) -> int:
        """Decision points so far."""
        return self._sim.n_decisions

    @property
    def done(self) -> bool:
        """True once every job has completed."""
        return self._sim.done

    def _catch_up(self, k: int, n: int) -> None:
        """Append jobs ``k .. n - 1`` (arrived since the last call) to the per-job lists (the simulator calls it)."""
        sim = self._sim
        self.n_arrived = n
        if n - k == 1:  # the common case: one arrival since the last decision point
            self.submit.append(sim.submit[k])
            self.deadline.append(sim.deadline[k])
            self.complexity.append(sim.complexity[k])
            self.tight.append(sim.tight[k])
        else:
            self.submit.extend(sim.submit[k:n])
            self.deadline.extend(sim.deadline[k:n])
            self.complexity.extend(sim.complexity[k:n])
            self.tight.extend(sim.tight[k:n])

    def __getstate__(self) -> dict[str, Any]:
        """Pickle/copy the slots, ``waiting`` as the simulator's dict (a mapping proxy does not pickle)."""
        state = {k: getattr(self, k) for k in self.__slots__ if k != "waiting"}
        state["waiting"] = self._sim.waiting
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, MappingProxyType(v) if k == "waiting" else v)

    def __repr__(self) -> str:
        return f"SimView(t={self.t:.1f}, waiting={len(self.waiting)}, idle={self.n_idle})"


__all__ = ["VIEW_FIELDS", "SimView"]
