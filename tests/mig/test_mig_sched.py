import numpy as np
import pytest

from gpu_sched_agents.heuristics.mig import POLICIES, BestFit
from gpu_sched_agents.heuristics.mig.bruteforce import brute_force_makespan
from gpu_sched_agents.heuristics.mig.cpsat import greedy_append, run_exact, solve_poll
from gpu_sched_env.core.errors import ConfigError, InvalidActionError
from gpu_sched_env.mig.bound import makespan_lower_bound
from gpu_sched_env.mig.model import Job, check_schedule, metrics, release_time, schedule_frame
from gpu_sched_env.mig.sim import PlacementSim, run_policy
from gpu_sched_env.mig.workload import mig_dataset

CAPS = (2000, 1000, 1000)


def hand_jobs():
    return [
        Job(0, 0.5, (1500, 800), deadline=3),
        Job(1, 0.6, (500, 500, 500), deadline=3),
        Job(2, 0.7, (900,)),
        Job(3, 1.5, (300, 300)),
        Job(4, 1.7, (1200,), deadline=3),
    ]


def test_best_fit_hand_worked_instance():
    # poll every minute: jobs 0-2 taken at t=1, jobs 3-4 at t=2
    # J0 -> 2000 MB [1,3); J1 -> inst 1 [1,4); J2 -> inst 2 (free earlier) [1,2);
    # J3 -> inst 2 (free at 2 < 4) [2,4); J4 -> 2000 MB after J0: [3,4)
    r = run_policy(hand_jobs(), BestFit())
    placed = r.schedule.groupby("job").agg(inst=("instance", "first"), start=("start", "min"))
    assert placed["inst"].tolist() == [0, 1, 2, 2, 0]
    assert placed["start"].tolist() == [1, 1, 1, 2, 3]
    assert r.metrics.makespan == 4
    assert r.metrics.total_completion == 3 + 4 + 2 + 4 + 4
    assert r.metrics.deadline_misses == 2  # J1 and J4 finish at 4 > 3
    assert r.n_polls == 2
    check_schedule(hand_jobs(), CAPS, r.schedule, 1)


def test_interruptible_jobs_let_cpsat_beat_best_fit_hand_instance():
    # two jobs whose first minute needs the 2000 MB instance; the second job's later
    # minutes fit the small ones. Best-Fit runs both whole on 2000 MB: 1 + 2 + 3 = 6.
    # Optimum: 2000 MB runs J1u0@1, J0u0@2, J0u1@3; J1u1@2, J1u2@3 on small: makespan 4.
    jobs = [Job(0, 0.5, (1500, 1500)), Job(1, 0.5, (1500, 100, 100))]
    assert run_policy(jobs, BestFit()).metrics.makespan == 6
    assert run_policy(jobs, "best_fit_pausing").metrics.makespan == 4
    ex = run_exact(jobs, time_limit=5)
    assert ex.metrics.makespan == 4 and ex.status == "optimal" and ex.gap == 0
    check_schedule(jobs, CAPS, ex.schedule, 1)
    rel = {0: 1, 1: 1}
    assert brute_force_makespan(jobs, CAPS, rel) == 4


def test_non_stoppable_job_stays_whole():
    jobs = [Job(0, 0.5, (1500, 1500), stoppable=False), Job(1, 0.5, (1500, 100, 100), stoppable=False)]
    ex = run_exact(jobs, time_limit=5)
    check_schedule(jobs, CAPS, ex.schedule, 1)
    assert ex.metrics.makespan == 6 == brute_force_makespan(jobs, CAPS, {0: 1, 1: 1})


def _hint(jobs, caps, rel):
    return greedy_append({}, sorted(jobs, key=lambda j: rel[j.id]), caps, 0, rel)


@pytest.mark.parametrize("trial", range(12))
def test_cpsat_optimum_equals_brute_force(trial):
    rng = np.random.default_rng(100 + trial)
    caps = (2000, 1000, 1000) if trial % 3 else (1000, 500)
    n = int(rng.integers(2, 5))
    jobs = [
        Job(
            i,
            0.0,
            tuple(int(x) for x in rng.integers(1, max(caps), size=rng.integers(1, 4))),
            stoppable=bool(rng.random() < 0.7),
        )
        for i in range(n)
    ]
    rel = {j.id: int(rng.integers(0, 3)) for j in jobs}
    res = solve_poll(jobs, caps, 0, rel, {}, _hint(jobs, caps, rel), time_limit=5)
    opt = brute_force_makespan(jobs, caps, rel)
    assert res.status == "optimal" and res.gap == 0
    assert res.objective == opt
    rows = [(j, k, i, s) for (j, k), (i, s) in res.plan.items()]
    fake = [Job(j.id, float(rel[j.id]), j.mem, stoppable=j.stoppable) for j in jobs]
    check_schedule(fake, caps, schedule_frame(rows), 1)
    # the lower bound: below the optimum, and equal to it on these tiny instances when every
    # job is stoppable (observed on all of them; not a theorem, see docs/mig.md)
    lb = makespan_lower_bound(jobs, caps, release=rel)
    assert lb == makespan_lower_bound(fake, caps) and lb <= opt
    if all(j.stoppable for j in jobs):
        assert lb == opt
    for name in POLICIES:  # every heuristic is at or above the optimum, hence the bound
        r = run_policy(fake, name, caps)
        check_schedule(fake, caps, r.schedule, 1)
        assert lb <= opt <= r.metrics.makespan, name


def test_online_exact_on_small_dataset_with_non_stoppable_jobs():
    jobs = mig_dataset(7, n_jobs=10)
    jobs = [Job(j.id, j.arrival, j.mem, j.deadline, stoppable=(j.id % 3 != 0)) for j in jobs]
    ex = run_exact(jobs, time_limit=5)
    bf = run_policy(jobs, BestFit())
    check_schedule(jobs, CAPS, ex.schedule, 1)
    assert ex.status in ("optimal", "feasible") and ex.n_polls >= 1
    assert ex.metrics.makespan <= bf.metrics.makespan


def test_polling_interval_delays_release():
    assert release_time(0.2, 1) == 1 and release_time(1.0, 1) == 1 and release_time(1.01, 3) == 3
    r = run_policy(hand_jobs(), BestFit(), poll_interval=3)
    assert r.schedule["start"].min() == 3 and r.n_polls == 1


def test_all_policies_produce_valid_schedules_and_same_seed_same_result():
    jobs = mig_dataset(11, n_jobs=30)
    for P in POLICIES.values():
        a, b = run_policy(jobs, P()), run_policy(jobs, P())
        check_schedule(jobs, CAPS, a.schedule, 1)
        assert a.schedule.equals(b.schedule)


def test_defer_and_illegal_actions():
    sim = PlacementSim(hand_jobs(), CAPS)
    st = sim.state()
    assert st.job.id == 0 and st.mask().tolist() == [True, False, False, True]
    with pytest.raises(InvalidActionError, match=r"instance memory 1000 MB < job peak 1500 MB"):
        sim.step(1)
    st = sim.step(3)  # defer job 0
    assert st.job.id == 1
    sim.step(1), sim.step(2)
    st = sim.state()  # t=2: deferred job 0 first, then 3 and 4
    assert (st.time, st.job.id) == (2, 0) and not st.can_defer
    with pytest.raises(InvalidActionError, match="defer is only allowed"):
        sim.step(3)


def test_jobs_too_big_are_skipped_not_dropped():
    jobs = [Job(0, 0.1, (2500,)), Job(1, 0.2, (10,))]
    r = run_policy(jobs, BestFit())
    assert r.skipped == [0] and r.metrics.n_jobs == 1 and r.metrics.n_skipped == 1
    assert run_exact(jobs, time_limit=2).skipped == [0]


def test_metrics_and_validation():
    df = schedule_frame([(0, 0, 0, 1), (0, 1, 0, 2), (1, 0, 1, 4)])
    jobs = [Job(0, 0.5, (1, 1), deadline=2), Job(1, 0.5, (1,), deadline=9)]
    m = metrics(jobs, df)
    assert (m.makespan, m.total_completion, m.deadline_misses) == (5, 8, 1)
    assert m.mean_flow == pytest.approx((3 - 0.5 + 5 - 0.5) / 2)
    with pytest.raises(ConfigError, match="poll_interval = 0"):
        PlacementSim(jobs, CAPS, poll_interval=0)
    with pytest.raises(ConfigError, match=r"capacities\[1\] = -5"):
        PlacementSim(jobs, (100, -5))
