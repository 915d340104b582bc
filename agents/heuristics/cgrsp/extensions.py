"""Heuristics of our own, beyond the published ten (not in the calibration tables).

They are registered under their names (``simulate("edf_defer_low", ...)``, heuristic agents,
behaviour-cloning teachers) but are not part of ``POLICY_NAMES``, so the published-policy
tables and experiments are unchanged.
"""

from __future__ import annotations

from gpu_sched_agents.heuristics.cgrsp.base import Assignment
from gpu_sched_agents.heuristics.cgrsp.ordering import EDF
from gpu_sched_env.cgrsp.fleet import LOW
from gpu_sched_env.cgrsp.sim import Simulator


class EDFDeferLow(EDF):
    """EDF that leaves a Low-stock idle slot for the next decision point while a slot is busy.

    The stock status is redrawn at every decision point, so a Low-stock slot (600–7 200 s
    provisioning) is usually better left idle for the few seconds until the next event than
    filled now. While another slot is busy a completion is sure to come, so nothing stalls.
    """

    name = "edf_defer_low"

    def decide(self, sim: Simulator) -> list[Assignment]:
        busy = any(j >= 0 for j in sim.slot_job)
        slot_type, stock = sim.fleet.slot_type, sim.stock
        return [(j, s) for j, s in super().decide(sim) if not (busy and stock[slot_type[s]] == LOW)]
