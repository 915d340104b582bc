import itertools

import numpy as np
import pytest

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.ilp import (
    SolverConfig,
    baseline_ilp_schedule,
    membatch_schedule,
    solve_round,
)
from gpu_sched_env.edge.llf import fcfs_llf_schedule, llf_pick, top_k
from gpu_sched_env.edge.model import Profile, Task, jetson_cluster, task_arrays
from gpu_sched_env.edge.profiles import default_profiles
from gpu_sched_env.edge.sim import peak_usage, simulate
from gpu_sched_env.edge.workload import random_workloads, tasks_from_workloads

# three devices: nano (4 GB), xavier_nx (16 GB), orin_nx (16 GB, the head participating)
SMALL = jetson_cluster(include_head=True, units={"nano": 1, "xavier_nx": 1, "orin_nx": 1})


def _random_tasks(rng, n):
    tasks = []
    for i in range(n):
        base = int(rng.integers(5, 60))  # [min] on the orin
        mem = float(rng.choice([0.5, 1.0, 2.0, 3.0, 5.0, 8.0]))
        prof = {
            "orin_nx": Profile(base * 60.0, float(rng.choice([20, 30, 40, 60])), mem),
            "xavier_nx": Profile(int(base * 1.6) * 60.0, float(rng.choice([30, 40, 50, 70])), mem),
            "nano": Profile(base * 3 * 60.0, float(rng.choice([40, 60, 90])), mem),
        }
        tasks.append(Task(f"r{i}", f"w{i}", prof, arrival=i))
    return tasks


def _brute_force(tasks, cluster, objective, finish):
    t, g, m, fits = task_arrays(tasks, cluster)
    n, d = t.shape
    best = None
    for a in itertools.product(range(-1, d), repeat=n):
        a = np.array(a)
        if any(a[i] >= 0 and not fits[i, a[i]] for i in range(n)):
            continue
        ok = all(m[a == j, j].sum() <= cluster.devices[j].mem_gb + 1e-9 and g[a == j, j].sum() <= 100 + 1e-9
                 for j in range(d))
        if not ok:
            continue
        placed = int((a >= 0).sum())
        per_dev = [t[a == j, j] for j in range(d)]
        cmax = max(((x.max() if finish == "max" else x.sum()) if len(x) else 0.0) for x in per_dev)
        total = sum(x.sum() for x in per_dev)
        key = (-placed, cmax, total) if objective == "makespan" else (-placed, total)
        best = key if best is None or key < best else best
    return best


def _key(assign, tasks, cluster, objective, finish):
    t, *_ = task_arrays(tasks, cluster)
    per_dev = [t[assign == j, j] for j in range(cluster.n)]
    cmax = max(((x.max() if finish == "max" else x.sum()) if len(x) else 0.0) for x in per_dev)
    total = sum(x.sum() for x in per_dev)
    placed = int((assign >= 0).sum())
    return (-placed, cmax, total) if objective == "makespan" else (-placed, total)


@pytest.mark.parametrize("objective", ["makespan", "total"])
@pytest.mark.parametrize("finish", ["max", "sum"])
def test_round_ilp_optimum_equals_brute_force(objective, finish):
    rng = np.random.default_rng(42)
    cfg = SolverConfig(time_limit_s=5.0, finish=finish)
    for trial in range(6):
        tasks = _random_tasks(rng, 4 + trial % 3)  # 4..6 tasks x 3 devices
        assign, rep = solve_round(tasks, SMALL, objective, cfg)
        assert rep.status == "OPTIMAL" and rep.optimal and rep.gap == pytest.approx(0.0)
        assert _key(assign, tasks, SMALL, objective, finish) == pytest.approx(_brute_force(tasks, SMALL, objective, finish))


def test_hand_solved_round():
    # A: Orin 10 min, Xavier 30 min; B: Orin 35 min, Xavier 50 min; 60 % + 50 % GPU cannot
    # share a device, and neither fits the Nano (6 GB). A-Orin/B-Xavier: makespan 50, total
    # 60; A-Xavier/B-Orin: makespan 35, total 65. So the makespan ILP and the total-time ILP
    # must disagree.
    def task(name, orin_min, xavier_min, gpu):
        p = {"orin_nx": Profile(orin_min * 60, gpu, 6.0), "xavier_nx": Profile(xavier_min * 60, gpu, 6.0),
             "nano": Profile(99 * 60, gpu, 6.0)}
        return Task(name, name, p)

    tasks = [task("A", 10, 30, 60), task("B", 35, 50, 50)]
    xavier, orin = 1, 2
    a_mk, r_mk = solve_round(tasks, SMALL, "makespan", SolverConfig())
    assert list(a_mk) == [xavier, orin] and r_mk.round_makespan_s == 35 * 60
    a_tot, r_tot = solve_round(tasks, SMALL, "total", SolverConfig())
    assert list(a_tot) == [orin, xavier] and r_tot.round_makespan_s == 50 * 60
    # A third task that cannot fit beside either this round is left for the next round.
    tasks.append(task("C", 5, 5, 60))
    a3, r3 = solve_round(tasks, SMALL, "makespan", SolverConfig())
    assert (a3 >= 0).sum() == 2 and r3.n_assigned == 2
    plan = membatch_schedule(tasks, SMALL, split_threshold_gb=16.0)  # no split: 6 GB < 16 GB
    assert sorted(plan.round) == [0, 0, 1]


def _round_capacity_ok(plan, cluster, gpu=True):
    t, g, m, _ = task_arrays(plan.tasks, cluster)
    dev = np.array(plan.device)
    rnd = np.array(plan.round)
    for r in set(plan.round):
        for j in range(cluster.n):
            sel = (rnd == r) & (dev == j)
            assert m[sel, j].sum() <= cluster.devices[j].mem_gb + 1e-9
            assert not gpu or g[sel, j].sum() <= 100 + 1e-9


def test_schedulers_place_everything_and_respect_capacity():
    c = jetson_cluster()
    tab = default_profiles()
    tasks = tasks_from_workloads(random_workloads(30, stream(1, "tasks")), tab, c)
    mb = membatch_schedule(tasks, c)
    for plan in (mb, baseline_ilp_schedule(tasks, c), fcfs_llf_schedule(tasks, c, stream(1, "fcfs_llf"))):
        assert {t.parent for t in plan.tasks} == {t.id for t in tasks}
        assert all(t.mem_gb <= c.min_mem_gb + 1e-9 for t in plan.tasks)  # all three split: shards fit a Nano
        assert any(t.n_parts > 1 for t in plan.tasks)
        if plan.reports:  # the baseline ILP checks memory only (the study's five-task example)
            _round_capacity_ok(plan, c, gpu=plan.name == "membatch")
            assert all(r.status in ("OPTIMAL", "FEASIBLE") for r in plan.reports)
            assert all(r.optimal == (r.status == "OPTIMAL") for r in plan.reports)
        sim = simulate(plan, c)
        peak = peak_usage(sim, c)
        assert (peak.peak_mem_gb <= peak.mem_gb + 1e-9).all() and (peak.peak_gpu_pct <= 100 + 1e-9).all()
    assert max(mb.batch) >= 1  # 30 tasks exceed 64 GB: more than one batch
    assert list(mb.batch) == sorted(mb.batch)  # batches processed in sequence
    assert list(mb.round) == sorted(mb.round)


def test_membatch_deterministic_and_tiny_limit_still_places_all():
    c = jetson_cluster()
    tasks = tasks_from_workloads(random_workloads(25, stream(2, "tasks")), default_profiles(), c)
    a, b = membatch_schedule(tasks, c), membatch_schedule(tasks, c)
    assert a.device == b.device and a.order == b.order
    tiny = membatch_schedule(tasks, c, SolverConfig(time_limit_s=1e-6))
    assert len(tiny.tasks) == len(a.tasks)
    assert all(r.status in ("OPTIMAL", "FEASIBLE", "UNKNOWN") for r in tiny.reports)
    assert all(not r.optimal for r in tiny.reports if r.status != "OPTIMAL")


def test_baseline_ignores_committed_gpu_share_membatch_does_not():
    # two 64 % sub-tasks: the baseline stacks them on the fastest device (memory fits), MemBatch
    # may not put them in one round on one device
    prof = {"nano": Profile(600.0, 64.0, 2.0), "xavier_nx": Profile(300.0, 64.0, 2.0),
            "orin_nx": Profile(100.0, 64.0, 2.0)}
    tasks = [Task(f"t{i}", "w", prof, arrival=i) for i in range(2)]
    c = jetson_cluster()
    orin = [j for j, d in enumerate(c.devices) if d.dtype == "orin_nx"][0]
    base = baseline_ilp_schedule(tasks, c)
    assert base.device == (orin, orin) and set(base.round) == {0}
    assert simulate(base, c).makespan_s == 200.0  # they cannot co-run: one after the other
    mb = membatch_schedule(tasks, c)
    assert mb.device.count(orin) == 1 and simulate(mb, c).makespan_s == 300.0


def test_llf_ranking_rules():
    rng = np.random.default_rng(0)
    fits = np.array([True, True, True, False])
    load = np.array([5.0, 1.0, 0.5, 0.0])
    local = np.array([True, False, False, False])
    # k = 1: locality beats load
    assert llf_pick(load, local, fits, 1, rng) == 0
    # no locality: least loaded among those that fit (device 3 does not fit)
    assert llf_pick(load, np.zeros(4, bool), fits, 1, rng) == 2
    picks = {llf_pick(load, np.zeros(4, bool), fits, 2, np.random.default_rng(s)) for s in range(40)}
    assert picks == {1, 2}  # random among the top 2
    assert top_k(7, 0.2, 2) == 2 and top_k(20, 0.2, 2) == 4 and top_k(3, 0.2, 5) == 3
    with pytest.raises(ConfigError):
        top_k(7, 1.5, 1)


def test_solver_config_validation():
    with pytest.raises(ConfigError, match="finish"):
        SolverConfig(finish="avg")
    with pytest.raises(ConfigError, match="time_limit_s"):
        SolverConfig(time_limit_s=0)
    with pytest.raises(ConfigError, match="objective"):
        solve_round([], SMALL, "cost", SolverConfig())


def test_task_that_fits_nowhere_is_an_error():
    big = Task("big", "w", {dt: Profile(60.0, 50.0, 20.0) for dt in ("nano", "xavier_nx", "orin_nx")})
    with pytest.raises(ConfigError, match="fit no device"):
        baseline_ilp_schedule([big], SMALL, split=False)
    with pytest.raises(ConfigError, match="fit no device"):
        fcfs_llf_schedule([big], SMALL, stream(0, "fcfs_llf"), split=False)
    for plan in (membatch_schedule([big], SMALL), baseline_ilp_schedule([big], SMALL),
                 fcfs_llf_schedule([big], SMALL, stream(0, "fcfs_llf"))):
        assert len(plan.tasks) == 5  # all three split it into 5 shards of 4 GB
