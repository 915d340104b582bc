import itertools

import numpy as np
import pytest

from gpu_sched_agents.heuristics.edge.ilp import (
    SolverConfig,
    baseline_ilp_schedule,
    membatch_schedule,
    solve_round,
)
from gpu_sched_agents.heuristics.edge.llf import LLFConfig, fcfs_llf_schedule, llf_pick, top_k
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
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


def _brute_force(tasks, cluster, objective, finish, deferral="penalty", committed=None):
    t, g, m, fits = task_arrays(tasks, cluster)
    n, d = t.shape
    committed = np.zeros(d) if committed is None else np.asarray(committed, float)
    tmin = np.where(fits, t, np.inf).min(axis=1)
    best = None
    for a in itertools.product(range(-1, d), repeat=n):
        a = np.array(a)
        if any(a[i] >= 0 and not fits[i, a[i]] for i in range(n)):
            continue
        ok = all(
            m[a == j, j].sum() <= cluster.devices[j].mem_gb + 1e-9 and g[a == j, j].sum() <= 100 + 1e-9
            for j in range(d)
        )
        if not ok:
            continue
        key = _key(a, tasks, cluster, objective, finish, deferral, committed, t, tmin)
        best = key if best is None or key < best else best
    return best


def _key(assign, tasks, cluster, objective, finish, deferral="penalty", committed=None, t=None, tmin=None):
    """The ILP's lexicographic objective of an assignment, computed directly."""
    if t is None:
        t, _, _, fits = task_arrays(tasks, cluster)
        tmin = np.where(fits, t, np.inf).min(axis=1)
    committed = np.zeros(cluster.n) if committed is None else np.asarray(committed, float)
    per_dev = [t[assign == j, j] for j in range(cluster.n)]
    cmax = max(
        committed[j] + ((x.max() if finish == "max" else x.sum()) if len(x) else 0.0) for j, x in enumerate(per_dev)
    )
    total = sum(x.sum() for x in per_dev)
    placed = int((assign >= 0).sum())
    if objective == "makespan":
        return (-placed, cmax, total)
    if deferral == "penalty":
        return (-placed, total)
    return (total + float(sum(tmin[assign < 0] + 1.0)),)  # best_time: deferred tasks at their best time + 1 s


@pytest.mark.parametrize(
    ("objective", "deferral"), [("makespan", "auto"), ("total", "penalty"), ("total", "best_time")]
)
@pytest.mark.parametrize("finish", ["max", "sum"])
def test_round_ilp_optimum_equals_brute_force(objective, deferral, finish):
    rng = np.random.default_rng(42)
    cfg = SolverConfig(time_limit_s=5.0, finish=finish, deferral=deferral)
    for trial in range(6):
        tasks = _random_tasks(rng, 4 + trial % 3)  # 4..6 tasks x 3 devices
        # load-aware rounds: committed finish times per device [s] (whole minutes: exact in CP-SAT's seconds)
        committed = rng.integers(0, 90, SMALL.n) * 60.0 if trial % 2 else None
        assign, rep = solve_round(tasks, SMALL, objective, cfg, committed_s=committed)
        assert rep.status == "OPTIMAL" and rep.optimal and rep.gap == pytest.approx(0.0)
        want = _brute_force(tasks, SMALL, objective, finish, deferral, committed)
        assert _key(assign, tasks, SMALL, objective, finish, deferral, committed) == pytest.approx(want)


def test_hand_solved_round():
    # A: Orin 10 min, Xavier 30 min; B: Orin 35 min, Xavier 50 min; 60 % + 50 % GPU cannot
    # share a device, and neither fits the Nano (6 GB). A-Orin/B-Xavier: makespan 50, total
    # 60; A-Xavier/B-Orin: makespan 35, total 65. So the makespan ILP and the total-time ILP
    # must disagree.
    def task(name, orin_min, xavier_min, gpu):
        p = {
            "orin_nx": Profile(orin_min * 60, gpu, 6.0),
            "xavier_nx": Profile(xavier_min * 60, gpu, 6.0),
            "nano": Profile(99 * 60, gpu, 6.0),
        }
        return Task(name, name, p)

    tasks = [task("A", 10, 30, 60), task("B", 35, 50, 50)]
    xavier, orin = 1, 2
    a_mk, r_mk = solve_round(tasks, SMALL, "makespan", SolverConfig())
    assert list(a_mk) == [xavier, orin] and r_mk.round_makespan_s == 35 * 60
    a_tot, r_tot = solve_round(tasks, SMALL, "total", SolverConfig(deferral="penalty"))
    assert list(a_tot) == [orin, xavier] and r_tot.round_makespan_s == 50 * 60
    # the baseline's default price of waiting (B's Orin time 35 min + 1 s) is below its Xavier
    # time (50 min): B waits for the Orin in the next round instead
    a_bt, _ = solve_round(tasks, SMALL, "total", SolverConfig())
    assert list(a_bt) == [orin, -1]
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
        if plan.reports:  # both ILPs: memory and GPU share per device and round (the study's formulation)
            _round_capacity_ok(plan, c)
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


def _round_share(plan, cluster):
    """Summed GPU share [%] per (round, device) of a plan."""
    _, g, _, _ = task_arrays(plan.tasks, cluster)
    out = {}
    for i, (r, j) in enumerate(zip(plan.round, plan.device, strict=True)):
        out[r, j] = out.get((r, j), 0.0) + g[i, j]
    return out


def test_baseline_gpu_share_constraint_holds_and_ignore_oversubscribes():
    # two 64 % sub-tasks whose fastest device is the Orin: without the GPU-share sum the
    # total-time ILP puts both on it in one round (128 %); with it (the default) never > 100 %
    prof = {
        "nano": Profile(600.0, 64.0, 2.0),
        "xavier_nx": Profile(300.0, 64.0, 2.0),
        "orin_nx": Profile(100.0, 64.0, 2.0),
    }
    tasks = [Task(f"t{i}", "w", prof, arrival=i) for i in range(2)]
    c = jetson_cluster()
    orin = [j for j, d in enumerate(c.devices) if d.dtype == "orin_nx"][0]
    for deferral in ("best_time", "penalty"):
        loose = baseline_ilp_schedule(tasks, c, SolverConfig(gpu_share="ignore", deferral=deferral))
        assert loose.device == (orin, orin) and max(_round_share(loose, c).values()) == pytest.approx(128.0)
        base = baseline_ilp_schedule(tasks, c, SolverConfig(deferral=deferral))
        assert max(_round_share(base, c).values()) <= 100.0
    # default (best_time): the second waits a round for the Orin, as in the study's example;
    # penalty: it takes the Xavier in round 0 (as MemBatch does)
    base = baseline_ilp_schedule(tasks, c)
    assert base.device == (orin, orin) and base.round == (0, 1)
    assert simulate(base, c).makespan_s == 200.0  # they cannot co-run: one after the other
    pen = baseline_ilp_schedule(tasks, c, SolverConfig(deferral="penalty"))
    assert sorted(c.devices[j].dtype for j in pen.device) == ["orin_nx", "xavier_nx"] and set(pen.round) == {0}
    mb = membatch_schedule(tasks, c)
    assert mb.device.count(orin) == 1 and simulate(mb, c).makespan_s == 300.0


def test_load_aware_round_counts_committed_work():
    # one task: Orin 10 min, Xavier 20 min, Nano 60 min. Idle devices: the Orin. With 30 min
    # already committed to the Orin: load-aware -> Xavier (max(30, 20) = 30 < 40 min);
    # independent rounds ignore the committed work and still take the Orin.
    p = {
        "orin_nx": Profile(600.0, 50.0, 1.0),
        "xavier_nx": Profile(1200.0, 50.0, 1.0),
        "nano": Profile(3600.0, 50.0, 1.0),
    }
    task = [Task("a", "a", p)]
    xavier, orin = 1, 2
    committed = [0.0, 0.0, 1800.0]
    a, _ = solve_round(task, SMALL, "makespan", SolverConfig())
    assert list(a) == [orin]
    a, rep = solve_round(task, SMALL, "makespan", SolverConfig(), committed_s=committed)
    assert list(a) == [xavier] and rep.round_makespan_s == 1800.0
    a, rep = solve_round(task, SMALL, "makespan", SolverConfig(rounds="independent"), committed_s=committed)
    assert list(a) == [orin] and rep.round_makespan_s == 600.0

    # whole schedule (36 GB cluster): batch 0 = L1 (16 GB; Orin 100 / Xavier 200 min) and L2
    # (16 GB; 50 / 60 min) -> L1 Orin, L2 Xavier; batch 1 = S (5 GB, too big for the Nano;
    # 10 / 20 min). Independent rounds put S on the idle-looking Orin, where it waits for L1
    # (16 + 5 GB > 16 GB): ends at 110 min; load-aware rounds see the Orin busy until 100 and
    # the Xavier until 60: S on the Xavier ends at 80, makespan 100.
    def prof(o, x, mem, gpu):
        return {
            "orin_nx": Profile(o * 60.0, gpu, mem),
            "xavier_nx": Profile(x * 60.0, gpu, mem),
            "nano": Profile(999 * 60.0, gpu, mem),
        }

    tasks = [
        Task("L1", "l", prof(100, 200, 16.0, 60.0)),
        Task("L2", "l", prof(50, 60, 16.0, 60.0), arrival=1),
        Task("S", "s", prof(10, 20, 5.0, 30.0), arrival=2),
    ]
    la = membatch_schedule(tasks, SMALL, split_threshold_gb=16.0)
    ind = membatch_schedule(tasks, SMALL, SolverConfig(rounds="independent"), split_threshold_gb=16.0)
    assert la.batch == ind.batch == (0, 0, 1) and la.device[:2] == ind.device[:2] == (orin, xavier)
    assert ind.device[2] == orin and simulate(ind, SMALL).makespan_s == 110 * 60
    assert la.device[2] == xavier and simulate(la, SMALL).makespan_s == 100 * 60


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
    # Ray's spread threshold: utilisation below 0.5 ranks as idle, so device 0 (0.3) ties with
    # the idle device 3; index ties -> device 0 first; above the threshold it ranks by value
    util = np.array([0.3, 0.9, 0.6, 0.0])
    every = np.ones(4, bool)
    assert llf_pick(util, np.zeros(4, bool), every, 1, rng) == 3
    assert llf_pick(util, np.zeros(4, bool), every, 1, rng, spread_threshold=0.5) == 0
    assert llf_pick(util, np.zeros(4, bool), every, 2, np.random.default_rng(1), spread_threshold=0.5) in (0, 3)
    # random ties: every idle device is picked sometimes with k = 1
    idle = np.zeros(4)
    picks = {llf_pick(idle, np.zeros(4, bool), every, 1, np.random.default_rng(s), ties="random") for s in range(60)}
    assert picks == {0, 1, 2, 3}
    with pytest.raises(ConfigError, match="fcfs_llf.utilisation = 'load'"):
        LLFConfig(utilisation="load")
    with pytest.raises(ConfigError, match="fcfs_llf.ties"):
        LLFConfig(ties="first")
    with pytest.raises(ConfigError, match="fcfs_llf.spread_threshold"):
        LLFConfig(spread_threshold=-0.1)
    with pytest.raises(ConfigError, match="top_k_fraction"):
        LLFConfig(fraction=2.0)


def test_solver_config_validation():
    with pytest.raises(ConfigError, match="finish"):
        SolverConfig(finish="avg")
    with pytest.raises(ConfigError, match=r"solver.gpu_share = 'sometimes' .*allowed: enforce, ignore"):
        SolverConfig(gpu_share="sometimes")
    with pytest.raises(ConfigError, match=r"solver.rounds = 'greedy' .*allowed: load_aware, independent"):
        SolverConfig(rounds="greedy")
    with pytest.raises(ConfigError, match="solver.deferral"):
        SolverConfig(deferral="never")
    with pytest.raises(ConfigError, match="solver.deferral = 'best_time'"):
        membatch_schedule(_random_tasks(np.random.default_rng(0), 2), SMALL, SolverConfig(deferral="best_time"))
    with pytest.raises(ConfigError, match="gpu_share"):
        SolverConfig().replace(gpu_share="off")
    with pytest.raises(ConfigError, match="committed_s"):
        solve_round(_random_tasks(np.random.default_rng(0), 2), SMALL, "makespan", SolverConfig(), committed_s=[0.0])
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
    for plan in (
        membatch_schedule([big], SMALL),
        baseline_ilp_schedule([big], SMALL),
        fcfs_llf_schedule([big], SMALL, stream(0, "fcfs_llf")),
    ):
        assert len(plan.tasks) == 5  # all three split it into 5 shards of 4 GB
