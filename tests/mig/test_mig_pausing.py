"""The pausing Best-Fit (minute-by-minute loop) and the makespan lower bound."""

import gymnasium as gym
import numpy as np
import pytest

import gpu_sched_env  # noqa: F401  (registers MIG-v0)
from gpu_sched_agents.heuristics.mig import BestFit, BestFitPausing, HeuristicAgent
from gpu_sched_agents.heuristics.mig.cpsat import run_exact
from gpu_sched_env.core.errors import ConfigError, InvalidActionError
from gpu_sched_env.mig.bound import makespan_lower_bound
from gpu_sched_env.mig.model import Job, check_schedule, metrics
from gpu_sched_env.mig.policies import POLICIES
from gpu_sched_env.mig.preempt import MinuteSim
from gpu_sched_env.mig.sim import run_policy
from gpu_sched_env.mig.workload import mig_dataset

CAPS = (2000, 1000, 1000)


def pause_jobs():
    # J0 is released at 1 and needs the 2000 MB instance for both minutes. J1 is released at
    # 2; its first minute also needs 2000 MB and it has 4 minutes left (J0: 1), so it has the
    # higher value at t=2 and J0 pauses. At t=3 J1's next minute (100 MB) fits every instance
    # while J0's fits only 2000 MB, so J0 resumes there and J1 moves to instance 1.
    return [Job(0, 0.5, (1500, 1500)), Job(1, 1.2, (1500, 100, 100, 100))]


def test_pausing_best_fit_pauses_and_resumes_hand_instance():
    r = run_policy(pause_jobs(), "best_fit_pausing")
    got = sorted(r.schedule[["job", "k", "instance", "start"]].itertuples(index=False, name=None))
    assert got == [(0, 0, 0, 1), (0, 1, 0, 3), (1, 0, 0, 2), (1, 1, 1, 3), (1, 2, 1, 4), (1, 3, 1, 5)]
    assert r.metrics.makespan == 6 and r.metrics.total_completion == 4 + 6
    assert r.method == "best_fit_pausing" and r.n_polls == 2
    check_schedule(pause_jobs(), CAPS, r.schedule, 1)
    # the whole-job Best-Fit cannot pause: J1 waits for J0 on 2000 MB and ends at 7
    assert run_policy(pause_jobs(), BestFit()).metrics.makespan == 7


def test_pausing_best_fit_scored_like_cpsat():
    jobs = pause_jobs()
    pz, ex = run_policy(jobs, BestFitPausing()), run_exact(jobs, time_limit=5)
    assert ex.status == "optimal"
    for r in (pz, ex):  # one scoring function; makespan = end of the last unit = CP-SAT's C
        assert metrics(jobs, r.schedule, r.skipped) == r.metrics
        assert r.metrics.makespan == int(r.schedule["start"].max()) + 1
    assert pz.metrics.makespan == ex.metrics.makespan == makespan_lower_bound(jobs) == 6


@pytest.mark.parametrize(("seed", "poll"), [(3, 1), (13, 2), (29, 1)])
def test_pausing_best_fit_never_exceeds_the_instances(seed, poll):
    jobs = mig_dataset(seed, n_jobs=25)
    jobs = [Job(j.id, j.arrival, j.mem, j.deadline, stoppable=(j.id % 4 != 0)) for j in jobs]
    r = run_policy(jobs, "best_fit_pausing", poll_interval=poll)
    check_schedule(jobs, CAPS, r.schedule, poll)  # memory, one unit per instance-minute, pins
    per_minute = r.schedule.groupby("start").size()
    assert per_minute.max() <= len(CAPS)
    mem = {(j.id, k): m for j in jobs for k, m in enumerate(j.mem)}
    assert all(mem[(j, k)] <= CAPS[i] for j, k, i in r.schedule[["job", "k", "instance"]].itertuples(index=False))
    # it pauses stoppable jobs somewhere, but never one that is not stoppable
    gaps = r.schedule.sort_values(["job", "k"]).groupby("job")["start"].apply(lambda s: int((s.diff() > 1).sum()))
    assert gaps.sum() > 0 and all(gaps[j.id] == 0 for j in jobs if not j.stoppable)
    assert r.metrics.makespan >= makespan_lower_bound(jobs, CAPS, poll)
    assert r.schedule.equals(run_policy(jobs, "best_fit_pausing", poll_interval=poll).schedule)


def test_minute_sim_rejects_illegal_decisions():
    jobs = [Job(0, 0.5, (1500, 1500), stoppable=False), Job(1, 0.5, (500,)), Job(2, 0.5, (600,))]
    sim = MinuteSim(jobs, (2000, 2000, 1000))
    st = sim.state()
    assert st.time == 1 and [p.job.id for p in st.present] == [0, 1, 2]
    with pytest.raises(InvalidActionError, match="instance 1 given to jobs 1 and 2"):
        sim.step({1: 1, 2: 1})
    with pytest.raises(InvalidActionError, match="holds 1000 MB < 1500 MB"):
        sim.step({0: 2})
    with pytest.raises(InvalidActionError, match="not present"):
        sim.step({7: 0})
    sim.step({0: 0, 1: 1})
    with pytest.raises(InvalidActionError, match="not stoppable: it cannot pause"):
        sim.step({2: 1})
    with pytest.raises(InvalidActionError, match="is not stoppable and runs on instance 0"):
        sim.step({0: 1, 2: 2})
    assert sim.step({0: 0, 2: 1}) is None  # all done: J0 ran on 0 at 1 and 2
    assert sorted(sim.rows) == [(0, 0, 0, 1), (0, 1, 0, 2), (1, 0, 1, 1), (2, 0, 1, 2)]


def test_pausing_policy_is_registered_but_not_an_env_agent():
    assert "best_fit_pausing" in POLICIES.names()
    env = gym.make("MIG-v0")
    with pytest.raises(ConfigError, match="decides minute by minute"):
        HeuristicAgent("best_fit_pausing", env)


def test_lower_bound_hand_cases():
    # chain: one 5-minute job released at 1 -> 6; level 2000 MB: 4 big units on 1 instance
    assert makespan_lower_bound([Job(0, 0.3, (10,) * 5)]) == 6
    big = [Job(i, 0.3, (1500, 1500)) for i in range(2)]
    assert makespan_lower_bound(big) == 1 + 4
    # every unit: 9 one-minute jobs on 3 instances -> 3 minutes after release
    assert makespan_lower_bound([Job(i, 0.3, (10,)) for i in range(9)]) == 1 + 3
    # late releases count from their own release: 3 big units released at 5 -> 8
    late = [Job(0, 0.3, (1500,)), *(Job(i, 4.5, (1500,)) for i in (1, 2, 3))]
    assert makespan_lower_bound(late) == 8
    assert makespan_lower_bound([Job(0, 0.3, (2500,))]) == 0  # too big for every instance: left out


@pytest.mark.parametrize("seed", [2, 3, 5])
def test_lower_bound_below_every_method_on_small_data_sets(seed):
    jobs = mig_dataset(seed, n_jobs=8)
    lb = makespan_lower_bound(jobs)
    ex = run_exact(jobs, time_limit=5)
    assert ex.status == "optimal" and lb <= ex.metrics.makespan
    for name in POLICIES.names():
        assert lb <= run_policy(jobs, name).metrics.makespan, name
    assert np.isfinite(lb) and lb > 0
