import numpy as np
import pytest

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.edge.model import jetson_cluster, task_arrays
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.profiles import default_profiles
from gpu_sched_env.edge.sim import DeviceTimeline, peak_usage, simulate
from gpu_sched_env.edge.workload import random_workloads, split_tasks, tasks_from_workloads
from tests.edge.hand_tasks import ONE_ORIN
from tests.edge.hand_tasks import hand_task as _t


def test_hand_computed_fifo_timeline():
    # A 60 %/10 min and B 40 %/5 min co-run from 0; C (50 %) waits for A (B's end frees
    # only 40 %), runs 10..18; D (10 %, 1 min) could fit at 5 but FIFO keeps it behind C.
    tasks = [_t("A", 10, 60), _t("B", 5, 40), _t("C", 8, 50), _t("D", 1, 10)]
    plan = Plan("hand", tuple(tasks), (0, 0, 0, 0), (0, 1, 2, 3))
    sim = simulate(plan, ONE_ORIN)
    s = sim.schedule.set_index("task")
    assert list(s.start_s / 60) == [0, 0, 10, 10]
    assert list(s.end_s / 60) == [10, 5, 18, 11]
    assert sim.makespan_s == 18 * 60 and sim.total_comp_s == 24 * 60
    t, u = sim.utilisation[0]
    assert list(t / 60) == [0, 5, 10, 11, 18] and list(u) == pytest.approx([1.0, 0.6, 0.6, 0.5, 0.0])
    # GPU-busy integral: 5*1 + 5*0.6 + 1*0.6 + 7*0.5 = 12.1 min over 18 min
    assert sim.mean_utilisation()[0] == pytest.approx(12.1 / 18)


def test_memory_limits_concurrency():
    tasks = [_t("A", 10, 10, mem=10.0), _t("B", 10, 10, mem=10.0)]  # 20 GB > 16 GB
    sim = simulate(Plan("m", tuple(tasks), (0, 0), (0, 1)), ONE_ORIN)
    assert list(sim.schedule.start_s / 60) == [0, 10]


def test_order_decides_queue():
    tasks = [_t("A", 10, 60), _t("B", 5, 60)]
    sim = simulate(Plan("o", tuple(tasks), (0, 0), (1, 0)), ONE_ORIN)
    assert list(sim.schedule.start_s / 60) == [5, 0]


def test_capacity_never_exceeded_random_plans():
    c = jetson_cluster()
    tab = default_profiles()
    for seed in range(5):
        rng = np.random.default_rng(seed)
        tasks = split_tasks(tasks_from_workloads(random_workloads(40, rng), tab, c), 4.0)
        *_, fits = task_arrays(tasks, c)
        dev = tuple(int(rng.choice(np.flatnonzero(f))) for f in fits)
        order = tuple(int(i) for i in rng.permutation(len(tasks)))
        sim = simulate(Plan("r", tuple(tasks), dev, order), c)
        peak = peak_usage(sim, c)
        assert (peak.peak_mem_gb <= peak.mem_gb + 1e-9).all()
        assert (peak.peak_gpu_pct <= peak.gpu_cap + 1e-9).all()
        assert sim.makespan_s == pytest.approx(sim.schedule.end_s.max())
        assert sim.total_comp_s == pytest.approx(sim.schedule.duration_s.sum())
        assert (sim.mean_utilisation() <= 1 + 1e-9).all()


def test_invalid_plans_raise():
    tasks = [_t("A", 10, 60, mem=20.0)]
    with pytest.raises(ConfigError, match="does not fit"):
        simulate(Plan("x", tuple(tasks), (0,), (0,)), ONE_ORIN)
    ok = [_t("A", 10, 60)]
    with pytest.raises(ConfigError, match="permutation"):
        simulate(Plan("x", tuple(ok), (0,), (1,)), ONE_ORIN)
    with pytest.raises(ConfigError, match="allowed 0..0"):
        simulate(Plan("x", tuple(ok), (3,), (0,)), ONE_ORIN)
    with pytest.raises(ConfigError, match="never fits"):
        DeviceTimeline(4.0, 100.0).add(60.0, 5.0, 10.0)
