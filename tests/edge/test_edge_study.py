"""The default profile table and the three schedulers against the study's figures (docs/edge.md).

Five-task example without noise: makespans, totals, placements and GPU utilisation orderings.
The 100-task gains need ~30 s of CP-SAT per seed on a loaded machine: marked slow.
"""

import numpy as np
import pytest

from gpu_sched_agents.heuristics.edge.ilp import baseline_ilp_schedule, membatch_schedule
from gpu_sched_agents.heuristics.edge.llf import LLFConfig, fcfs_llf_schedule
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.model import jetson_cluster
from gpu_sched_env.edge.profiles import default_profiles
from gpu_sched_env.edge.sim import execution_noise, simulate
from gpu_sched_env.edge.workload import five_task_example, random_workloads, tasks_from_workloads

C = jetson_cluster()
FIVE = five_task_example(default_profiles(), C)


def _chest(sim):
    df = sim.schedule
    return df[df.workload == "chest_xray"].sort_values("task")


@pytest.fixture(scope="module")
def five():
    out = {
        "membatch": simulate(membatch_schedule(FIVE, C), C),
        "baseline_ilp": simulate(baseline_ilp_schedule(FIVE, C), C),
    }
    out["fcfs_llf"] = [simulate(fcfs_llf_schedule(FIVE, C, stream(s, "fcfs_llf")), C) for s in range(10)]
    return out


def test_five_task_makespans_near_the_study(five):
    mb, base = five["membatch"].makespan_s / 60, five["baseline_ilp"].makespan_s / 60
    llf = np.mean([s.makespan_s for s in five["fcfs_llf"]]) / 60
    assert mb < base < llf  # study: 115 < 123 < 155
    assert mb == pytest.approx(115, rel=0.05)
    assert base == pytest.approx(123, rel=0.05)
    assert llf == pytest.approx(155, rel=0.10)


def test_five_task_totals_and_placements(five):
    mb, base = five["membatch"], five["baseline_ilp"]
    assert mb.total_comp_s / 60 == pytest.approx(282, rel=0.02)
    assert base.total_comp_s / 60 == pytest.approx(221, rel=0.02)
    llf_total = np.mean([s.total_comp_s for s in five["fcfs_llf"]]) / 60
    assert base.total_comp_s / 60 < mb.total_comp_s / 60 < llf_total  # study: 221 < 282 < 404
    # MemBatch: Chest X-ray sub-tasks on the Orin (~70 min) and a Xavier (~115 min)
    cx = _chest(mb)
    assert cx.device_name.str.split("-").str[0].tolist() == ["orin_nx", "xavier_nx"]
    assert (cx.duration_s / 60).tolist() == pytest.approx([70, 115], abs=0.01)  # table in 0.01 min
    # baseline ILP (GPU-share constraint enforced): both sub-tasks on the Orin, the second in
    # the next round, where it waits for the first (64 % GPU each); never > 100 % in a round
    cx = _chest(base)
    assert set(cx.device_name) == {"orin_nx-1"} and cx.start_s.iloc[1] == pytest.approx(cx.end_s.iloc[0])
    assert cx["round"].tolist() == [0, 1]
    per_round = base.schedule.groupby(["round", "device"]).gpu_pct.sum()
    assert per_round.max() <= 100.0
    # FCFS-LLF: at least one sub-task on a Nano in most repetitions
    on_nano = [_chest(s).device_name.str.startswith("nano").any() for s in five["fcfs_llf"]]
    assert sum(on_nano) >= 7


def test_fcfs_llf_chest_placement_depends_on_tie_order():
    # the study's run had both Chest X-ray sub-tasks on Nanos. Each sub-task takes one of the
    # two top-ranked devices; with device-index ties the three light tasks, arriving first,
    # take three of the four Nanos, so both-on-Nanos never happens; with random ties (Ray's
    # node order) it happens in some seeds (docs/edge.md, FCFS-LLF sensitivity table)
    def both(cfg, s):
        sim = simulate(fcfs_llf_schedule(FIVE, C, stream(s, "fcfs_llf"), cfg), C)
        return _chest(sim).device_name.str.startswith("nano").all()

    assert not any(both(LLFConfig(ties="index"), s) for s in range(20))
    assert 0 < sum(both(LLFConfig(), s) for s in range(20)) < 20


def test_gpu_utilisation_study_definition_orders_like_the_study(five):
    peak = {k: float(v.peak_utilisation().mean()) for k, v in five.items() if k != "fcfs_llf"}
    peak["fcfs_llf"] = float(np.mean([s.peak_utilisation().mean() for s in five["fcfs_llf"]]))
    assert peak["fcfs_llf"] > peak["membatch"] > peak["baseline_ilp"]  # study: FCFS-LLF highest, baseline lowest
    # per device it is the largest share in use at any instant: the Orin runs 64 % + 36 % at once
    assert five["membatch"].peak_utilisation().max() == pytest.approx(1.0)
    for v in (five["membatch"], five["baseline_ilp"]):
        assert (v.peak_utilisation() >= v.mean_utilisation() - 1e-12).all()


def test_execution_noise_is_seeded_paired_and_mean_one():
    plan_a = membatch_schedule(FIVE, C)
    plan_b = baseline_ilp_schedule(FIVE, C)
    fa = execution_noise(plan_a.tasks, 0.05, stream(3, "edge.noise"))
    fb = execution_noise(plan_b.tasks, 0.05, stream(3, "edge.noise"))
    by_id_a = dict(zip([t.id for t in plan_a.tasks], fa, strict=True))
    assert all(by_id_a[t.id] == f for t, f in zip(plan_b.tasks, fb, strict=True))  # same task, same factor
    assert not np.array_equal(fa, execution_noise(plan_a.tasks, 0.05, stream(4, "edge.noise")))
    assert np.array_equal(execution_noise(plan_a.tasks, 0.0, stream(3, "edge.noise")), np.ones(len(fa)))
    many = execution_noise(tasks_from_workloads(["mnist"] * 4000, default_profiles(), C), 0.05, stream(0, "x"))
    assert many.mean() == pytest.approx(1.0, abs=0.005) and np.log(many).std() == pytest.approx(0.05, rel=0.05)
    noisy = simulate(plan_a, C, fa)
    assert noisy.schedule.duration_s.to_numpy() == pytest.approx(simulate(plan_a, C).schedule.duration_s * fa)
    with pytest.raises(ConfigError, match="noise"):
        simulate(plan_a, C, np.ones(2))
    with pytest.raises(ConfigError, match="noise_sigma"):
        execution_noise(plan_a.tasks, -0.1, stream(0, "x"))


@pytest.mark.slow
def test_membatch_beats_both_at_20_tasks():
    tasks = tasks_from_workloads(random_workloads(20, stream(0, "tasks")), default_profiles(), C)
    mk = {
        p.name: simulate(p, C).makespan_s
        for p in (
            membatch_schedule(tasks, C),
            baseline_ilp_schedule(tasks, C),
            fcfs_llf_schedule(tasks, C, stream(0, "fcfs_llf")),
        )
    }
    assert mk["membatch"] < mk["baseline_ilp"] and mk["membatch"] < mk["fcfs_llf"]


@pytest.mark.slow
def test_gains_at_100_tasks_within_tolerance_of_the_study():
    # study: MemBatch -61 % vs baseline ILP, -48 % vs FCFS-LLF; tolerance 10 points (docs/edge.md)
    g_base, g_llf = [], []
    for s in range(3):
        tasks = tasks_from_workloads(random_workloads(1000, stream(s, "tasks"))[:100], default_profiles(), C)
        mb = simulate(membatch_schedule(tasks, C), C).makespan_s
        g_base.append(mb / simulate(baseline_ilp_schedule(tasks, C), C).makespan_s - 1)
        g_llf.append(mb / simulate(fcfs_llf_schedule(tasks, C, stream(s, "fcfs_llf")), C).makespan_s - 1)
    assert 100 * np.mean(g_base) == pytest.approx(-61, abs=10)
    assert 100 * np.mean(g_llf) == pytest.approx(-48, abs=10)
