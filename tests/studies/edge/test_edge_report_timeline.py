"""The report's utilisation steps (studies.edge.report) are the edge simulator's own, on a hand-computed plan.

utilisation_steps rebuilds a device's GPU utilisation from the schedule alone; on the hand-worked
FIFO plan of tests/edge/test_edge_sim.py (whose timeline that test pins) it must give the
simulator's steps.
"""

import pytest

from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.sim import simulate
from studies.edge.report import utilisation_steps
from tests.edge.hand_tasks import ONE_ORIN
from tests.edge.hand_tasks import hand_task as _t


def test_report_utilisation_steps_are_the_simulators_on_the_hand_computed_plan():
    tasks = [_t("A", 10, 60), _t("B", 5, 40), _t("C", 8, 50), _t("D", 1, 10)]
    sim = simulate(Plan("hand", tuple(tasks), (0, 0, 0, 0), (0, 1, 2, 3)), ONE_ORIN)
    t, u = sim.utilisation[0]
    t2, u2 = utilisation_steps(sim.schedule, 0)
    assert list(t2) == list(t) and list(u2) == pytest.approx(list(u))
    assert len(t) == 5  # the four tasks' starts and ends on one device: five steps, really compared
