"""The MIG scenario's strong placement rules, their tuning, and the bound (optimum or lower bound)."""

import numpy as np
import pytest

import gpu_sched_env  # noqa: F401  (registers MIG-v0)
from gpu_sched_agents.heuristics.mig import HeuristicAgent, strong
from gpu_sched_agents.heuristics.mig.bounds import bound
from gpu_sched_agents.heuristics.mig.bruteforce import brute_force_makespan
from gpu_sched_agents.heuristics.mig.cpsat import solve_poll
from gpu_sched_agents.heuristics.mig.strong import LGLPT, BFDBackfill, LocalSearch
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.mig.env import MIGEnv
from gpu_sched_env.mig.model import Job, check_schedule, release_time
from gpu_sched_env.mig.policies import POLICIES
from gpu_sched_env.mig.sim import run_policy
from gpu_sched_env.mig.workload import mig_dataset

NEW = ("bfd_backfill", "lg_lpt", "local_search")
CAPS = (2000, 1000, 1000)
TWO_BIG = (2000, 2000, 1000)


def _ends(plan, jobs, t, free):
    """[min] each instance's end after appending the assigned jobs from max(t, free)."""
    end = [max(t, f) for f in free]
    for j in jobs:
        end[plan[j.id]] += j.length
    return end


# -- the rules ---------------------------------------------------------------------------------------


def test_the_rules_are_registered_as_extensions_with_their_tuned_knobs():
    assert POLICIES.names(published_only=True) == ("best_fit", "first_fit", "earliest_start", "best_fit_pausing")
    assert set(NEW) <= set(POLICIES.names())
    for name in NEW:
        pol = POLICIES.make(name)
        assert pol.name == name and not getattr(pol, "minute_by_minute", False)
        assert dict(POLICIES.entry(name).knobs) == strong.DEFAULTS[name]
        for knob, value in strong.DEFAULTS[name].items():
            assert getattr(pol, knob) == value


@pytest.mark.parametrize(
    ("name", "knob", "value", "match"),
    [
        ("bfd_backfill", "reserve", -1, r"reserve = -1 is out of range"),
        ("bfd_backfill", "reserve", 1.5, r"reserve = 1.5 must be an integer"),
        ("lg_lpt", "size", "volume", r"size = 'volume' is not known; allowed: length, area"),
        ("local_search", "start", "best_fit", r"start = 'best_fit' is not known"),
        ("local_search", "swaps", 1, r"swaps = 1 is not allowed; allowed: True, False"),
        ("local_search", "max_steps", -3, r"max_steps = -3 is out of range"),
        ("lg_lpt", "reserve", 2, r"unknown lg_lpt parameters: reserve"),
    ],
)
def test_bad_knobs_are_refused_naming_the_field(name, knob, value, match):
    with pytest.raises(ConfigError, match=match):
        POLICIES.make(name, **{knob: value})


def backfill_jobs():
    # all taken at t = 1 on (2000, 1000). BFD: J3 (1500 MB) -> 2000 MB, ends 2; J0, J1, J2 -> 1000 MB, ends
    # 6, 7, 8. Backfilling, smallest first: J2 moves to 2000 MB if 2 + 1 + reserve <= 8, then J1 if
    # 3 + 1 + reserve <= 7; J0 (5 min) never fits the hole.
    return [Job(0, 0.1, (900,) * 5), Job(1, 0.2, (800,)), Job(2, 0.3, (700,)), Job(3, 0.4, (1500,))]


@pytest.mark.parametrize(
    ("reserve", "makespan", "on_big"),
    [(0, 6, {1, 2, 3}), (3, 6, {1, 2, 3}), (5, 7, {2, 3}), (6, 8, {3}), (10**6, 8, {3})],
)
def test_bfd_backfill_hand_instance(reserve, makespan, on_big):
    r = run_policy(backfill_jobs(), BFDBackfill(reserve), (2000, 1000))
    check_schedule(backfill_jobs(), (2000, 1000), r.schedule, 1)
    assert r.metrics.makespan == makespan
    assert set(r.schedule.loc[r.schedule.instance == 0, "job"]) == on_big
    # Best-Fit keeps every small job on 1000 MB: 1 + 5 + 1 + 1
    assert run_policy(backfill_jobs(), "best_fit", (2000, 1000)).metrics.makespan == 8


def test_lg_lpt_hand_instance_and_its_size_knob():
    # A (1500 MB, 3 min) holds only the 2000 MB instance (grade 1) and goes first; then by run length
    # each to the instance ending first (ties: smaller memory): B 4 -> inst 1, C 3 -> inst 2, D 2 -> inst 2
    # (4 = inst 0's end, smaller memory), E 2 -> inst 0. Ends 6, 5, 6 = ceil(14 / 3) + 1: optimal.
    jobs = [Job(0, 0.1, (1500,) * 3), *(Job(i, 0.1 + i / 10, (500,) * n) for i, n in ((1, 4), (2, 3), (3, 2), (4, 2)))]
    r = run_policy(jobs, LGLPT())
    assert r.schedule.groupby("job")["instance"].first().tolist() == [0, 1, 2, 2, 0]
    assert r.metrics.makespan == 6 < run_policy(jobs, "best_fit").metrics.makespan == 7
    # length vs memory-time area: G (100 MB x 5) is the longest, F (1000 MB x 3) the largest area
    q = [Job(0, 0.0, (500,) * 4), Job(1, 0.0, (1000,) * 3), Job(2, 0.0, (100,) * 5)]
    by_len, by_area = (
        LGLPT("length").assign(0, q, (1000, 1000), (0, 0)),
        LGLPT("area").assign(0, q, (1000, 1000), (0, 0)),
    )
    assert max(_ends(by_len, q, 0, (0, 0))) == 7 and max(_ends(by_area, q, 0, (0, 0))) == 8
    assert by_area[1] == by_area[2] == 0 and by_len[2] == 0 and by_len[1] == by_len[0] == 1


def test_local_search_swaps_out_of_lpts_trap():
    # run lengths 3, 3, 2, 2, 2 on two equal instances: LPT ends 7 / 5; only a swap (3 <-> 2) gives 6 / 6
    q = [Job(i, 0.0, (100,) * n) for i, n in enumerate((3, 3, 2, 2, 2))]
    caps, free = (1000, 1000), (0, 0)
    assert max(_ends(LGLPT().assign(0, q, caps, free), q, 0, free)) == 7
    assert max(_ends(LocalSearch("lg_lpt", swaps=False).assign(0, q, caps, free), q, 0, free)) == 7
    for start in ("lg_lpt", "bfd_backfill"):
        assert _ends(LocalSearch(start).assign(0, q, caps, free), q, 0, free) == [6, 6]
    assert max(_ends(LocalSearch("lg_lpt", max_steps=0).assign(0, q, caps, free), q, 0, free)) == 7


@pytest.mark.parametrize("name", NEW)
def test_the_simulator_plays_the_poll_assignment_whatever_the_queue_order(name):
    # one poll: the instances end where the rule's assignment of the whole queue says, although the
    # simulator asks for the jobs in arrival order, not the rule's
    jobs = [Job(j.id, 0.5, j.mem) for j in mig_dataset(10_003, 20)]
    for caps in (CAPS, TWO_BIG):
        plan = POLICIES.make(name).assign(1, jobs, caps, (0,) * len(caps))
        r = run_policy(jobs, name, caps)
        check_schedule(jobs, caps, r.schedule, 1)
        assert r.schedule.groupby("job")["instance"].first().to_dict() == plan
        assert r.metrics.makespan == max(_ends(plan, jobs, 1, (0,) * len(caps)))


@pytest.mark.parametrize("name", NEW)
def test_env_path_equals_simulator_path(name):
    for seed, caps in ((10_000, CAPS), (10_001, TWO_BIG), (10_002, TWO_BIG)):
        jobs = mig_dataset(seed, 30)
        sim = run_policy(jobs, name, caps)
        check_schedule(jobs, caps, sim.schedule, 1)
        env = MIGEnv(jobs=jobs, capacities=caps, illegal_action="raise")
        agent = HeuristicAgent(name, env)
        for _ in range(2):  # the same agent over two episodes: the cached assignment never leaks
            obs, _ = env.reset()
            total, done = 0.0, False
            while not done:
                obs, r, done, _, info = env.step(agent.predict(obs)[0])
                total += r
            assert env.sim.result(name).schedule.equals(sim.schedule)
            assert -total == sim.metrics.makespan == info["planned_makespan"]


def test_the_rules_beat_best_fit_where_the_large_instances_are_not_the_bottleneck():
    for seed in (10_000, 10_001, 10_002):
        jobs = mig_dataset(seed, 50)
        bf = run_policy(jobs, "best_fit", TWO_BIG).metrics.makespan
        for name in NEW:
            assert run_policy(jobs, name, TWO_BIG).metrics.makespan < bf, (seed, name)


def test_a_rule_scores_the_default_size_well_under_a_second():
    jobs = mig_dataset(10_004, 50)
    for name in NEW:
        assert run_policy(jobs, name).solve_time < 0.5, name


# -- tune ----------------------------------------------------------------------------------------------


def test_tune_refuses_bad_grids():
    with pytest.raises(ConfigError, match=r"rule = 'best_fit' is not known"):
        strong.tune(2, best_fit={"reserve": (1,)})
    with pytest.raises(ConfigError, match=r"unknown bfd_backfill knobs: size"):
        strong.tune(2, bfd_backfill={"size": ("length",)})
    with pytest.raises(ConfigError, match=r"bfd_backfill.reserve = \(\) is not allowed"):
        strong.tune(2, bfd_backfill={"reserve": ()})
    with pytest.raises(ConfigError, match=r"reserve = -1 is out of range"):
        strong.tune(2, bfd_backfill={"reserve": (-1,)})


def test_tune_table_shape_on_a_tiny_grid():
    tab = strong.tune(2, bfd_backfill={"reserve": (2, 10**6)}, lg_lpt={"size": ("length",)})
    assert tab.rule.tolist() == ["bfd_backfill", "bfd_backfill", "lg_lpt"]
    per_config = [f"mean_{p}_n{n}" for p in strong.TUNE_PARTITIONS for n in strong.TUNE_SIZES]
    assert set(per_config) <= set(tab.columns) and (tab.n == 2 * len(per_config)).all()
    assert np.allclose(tab["mean"], tab[per_config].mean(axis=1))
    assert (tab.ci_lo <= tab["mean"]).all() and (tab["mean"] <= tab.ci_hi).all()
    bfd = tab[tab.rule == "bfd_backfill"]
    assert bfd["mean"].is_monotonic_increasing and bfd.default.tolist() == [True, False]


@pytest.mark.slow
def test_shipped_defaults_are_tunes_best_rows():
    tab = strong.tune()  # the shipped claim: 20 selection seeds from 10 000, the full grid
    for rule, g in tab.groupby("rule"):
        assert g.loc[g.default, "mean"].item() == g["mean"].min(), rule


def test_shipped_bfd_reserve_is_best_on_a_reduced_grid():
    tab = strong.tune(20, bfd_backfill={"reserve": (0, strong.DEFAULTS["bfd_backfill"]["reserve"], 20)})
    assert tab.loc[tab.default, "mean"].item() == tab["mean"].min() < tab.loc[tab.reserve == 20, "mean"].item()


# -- the bound -----------------------------------------------------------------------------------------


def _instances():
    """20 tiny random sets (brute force's reach) and 8 small Part B sets, mixed stoppability, 3 partitions."""
    out = []
    for trial in range(20):
        rng = np.random.default_rng(500 + trial)
        caps = ((2000, 1000, 1000), (1000, 500), TWO_BIG)[trial % 3]
        n = int(rng.integers(2, 5))
        jobs = [
            Job(
                i,
                float(rng.uniform(0, 2.5)),
                tuple(int(x) for x in rng.integers(1, max(caps), size=rng.integers(1, 4))),
                stoppable=bool(rng.random() < 0.7),
            )
            for i in range(n)
        ]
        out.append((jobs, caps))
    for k in range(8):
        jobs = mig_dataset(10_100 + k, 8)
        jobs = [Job(j.id, j.arrival, j.mem, j.deadline, stoppable=(j.id % 3 != k % 2)) for j in jobs]
        out.append((jobs, (CAPS, TWO_BIG)[k % 2]))
    return out


def _cpsat_optimum(jobs, caps, poll=1):
    """CP-SAT's proved offline optimum, asked directly (hinted with Best-Fit's plan, which any job set has)."""
    todo = [j for j in jobs if j.peak <= max(caps)]
    rel = {j.id: release_time(j.arrival, poll) for j in todo}
    bf = run_policy(todo, "best_fit", caps, poll).schedule
    hint = {(j, k): (i, s) for j, k, i, s in bf[["job", "k", "instance", "start"]].itertuples(index=False)}
    res = solve_poll(todo, caps, min(rel.values()), rel, {}, hint, time_limit=10)
    assert res.status == "optimal"
    return res.objective, rel


def test_bound_is_below_every_registered_policy_and_exact_where_it_says_so():
    kinds = set()
    for jobs, caps in _instances():
        b = bound(jobs, caps, time_limit_s=10)
        lb = bound(jobs, caps, method="lower_bound")
        opt, rel = _cpsat_optimum(jobs, caps)
        kinds.add(b.method.split(" (")[0])
        assert lb.kind == "lower_bound" and lb.value <= opt
        assert b.kind == "optimum" and b.value == opt, (b, opt)
        if sum(j.length for j in jobs) <= 8:
            assert brute_force_makespan(jobs, caps, rel, t0=min(rel.values())) == opt
        for name in POLICIES.names():  # every rule registered now or later
            r = run_policy(jobs, name, caps)
            check_schedule(jobs, caps, r.schedule, 1)
            assert lb.value <= b.value <= r.metrics.makespan, name
    # the three ways to an optimum all occur on these sets
    assert "brute force" in kinds and "cp-sat" in kinds and any(k.startswith("lower bound met") for k in kinds)


def test_whole_job_bound_is_the_whole_job_optimum_and_pausing_can_beat_it():
    # two jobs whose first minutes need 2000 MB: whole jobs 1 + 2 + 3 = 6; pausing moves J1's tail: 4
    jobs = [Job(0, 0.5, (1500, 1500)), Job(1, 0.5, (1500, 100, 100))]
    whole, pausing = bound(jobs, problem="whole"), bound(jobs)
    assert (whole.kind, whole.value, pausing.kind, pausing.value) == ("optimum", 6.0, "optimum", 4.0)
    assert run_policy(jobs, "best_fit_pausing").metrics.makespan == 4 < whole.value
    for jobs, caps in _instances()[::3]:
        w = bound(jobs, caps, problem="whole")
        fixed = [Job(j.id, j.arrival, j.mem, stoppable=False) for j in jobs]
        assert w.kind == "optimum" and w.value == _cpsat_optimum(fixed, caps)[0] >= bound(jobs, caps).value
        for name in POLICIES.names():
            if not getattr(POLICIES.entry(name).factory, "minute_by_minute", False):
                assert w.value <= run_policy(jobs, name, caps).metrics.makespan, name


def test_the_shortcut_and_the_solver_agree_and_no_limit_means_no_solver():
    for seed in (10_000, 10_001):
        jobs = mig_dataset(seed, 12)
        auto, exact = bound(jobs, time_limit_s=0), bound(jobs, method="exact")
        assert auto.kind == exact.kind == "optimum" and auto.value == exact.value
        assert auto.method == "lower bound met by best_fit_pausing" and exact.method.startswith("cp-sat")
    # an instance no rule solves: without a time limit only the relaxation is returned
    jobs, caps = next((j, c) for j, c in _instances() if bound(j, c, time_limit_s=0).kind == "lower_bound")
    b0, b = bound(jobs, caps, time_limit_s=0), bound(jobs, caps)
    assert b0.value == bound(jobs, caps, method="lower_bound").value <= b.value and b.kind == "optimum"
    assert bound([Job(0, 0.3, (2500,))]).value == 0.0  # too big for every instance: nothing runs


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"method": "guess"}, r"method = 'guess' is not known"),
        ({"problem": "batch"}, r"problem = 'batch' is not known"),
        ({"time_limit_s": -1.0}, r"time_limit_s = -1.0 is out of range"),
        ({"workers": 0}, r"workers = 0 is out of range"),
        ({"poll_interval": 0}, r"poll_interval = 0"),
    ],
)
def test_bound_refuses_bad_arguments(kw, match):
    with pytest.raises(ConfigError, match=match):
        bound(mig_dataset(10_000, 4), **kw)
