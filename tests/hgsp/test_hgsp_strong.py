"""HGSP's strong rules (dispatching, the descent), their tuning, and the bound."""

import functools
import math

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gpu_sched_env  # noqa: F401  (registers HGSP-v0)
from gpu_sched_agents.heuristics.hgsp import HeuristicAgent, strong
from gpu_sched_agents.heuristics.hgsp.bounds import (
    bound,
    exact_scale,
    exact_tolerance,
    lagrangian,
    pooled,
    relaxation,
    rule_schedule,
)
from gpu_sched_agents.heuristics.hgsp.sequencing import descend
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.hgsp import Problem, decode, generate_tasks, make_cluster, resolve_tasks, run
from gpu_sched_env.hgsp.metrics import summarize
from gpu_sched_env.hgsp.policies import POLICIES
from gpu_sched_env.hgsp.sim import RULES

NEW = ("wspt", "atc", "mdd", "wmdd", "covert", "ls")
ONE = {"A100": 1}


def _wt(policy, ts, cluster, **knobs):
    return run(policy, ts, cluster, 0, **knobs).summary()["wt"]


def _below(value, objective):
    """``value <= objective`` up to the float rounding of two sums of the same terms."""
    return value <= objective + 1e-9 * max(1.0, abs(objective))


# -- the rules ---------------------------------------------------------------------------------------


def test_the_rules_are_registered_as_extensions_with_their_tuned_knobs():
    assert POLICIES.names()[:3] == ("fifo", "greedy", "sagreedy")
    assert set(NEW) <= set(POLICIES.names())
    assert POLICIES.names(published_only=True) == ("fifo", "greedy", "sagreedy")  # the study's tables keep its 3
    for name in NEW:
        pol = POLICIES.make(name)
        assert pol.name == name and pol.serial
        assert dict(POLICIES.entry(name).knobs) == strong.DEFAULTS[name]
        for knob, value in strong.DEFAULTS[name].items():
            assert getattr(pol, knob) == value
        assert pol.decode_rule == {"est": "fifo", "eft": "eft"}[pol.placement]


@pytest.mark.parametrize(
    ("name", "knobs", "match"),
    [
        ("atc", {"k": 0}, r"atc.k = 0"),
        ("atc", {"k": 101}, r"atc.k = 101"),
        ("covert", {"k": float("nan")}, r"covert.k = nan"),
        ("mdd", {"placement": "lft"}, r"mdd.placement = 'lft' is not known; allowed: est, eft"),
        ("ls", {"starts": 0}, r"ls.starts = 0"),
        ("ls", {"starts": 9}, r"ls.starts = 9"),
        ("ls", {"starts": 2.0}, r"ls.starts = 2.0 must be an integer"),
        ("ls", {"work": -1}, r"ls.work = -1"),
        ("wspt", {"k": 1.0}, r"unknown wspt parameters: k"),
    ],
)
def test_bad_knobs_are_refused_naming_the_field(name, knobs, match):
    with pytest.raises(ConfigError, match=match):
        POLICIES.make(name, **knobs)


# One A100 (speed 57), three tasks at t = 0 as (p, d, w): A (1, 10, 1), B (4, 4, 2), C (2, 3, 1).
# First pick at t = 0: WSPT w/p = 1, .5, .5 -> A; MDD max(d, p) = 10, 4, 3 -> C; WMDD max(p, d)/w =
# 10, 2, 3 -> B; ATC (k 1, pbar 7/3) log(w/p) - slack/pbar = -3.86, -0.69, -1.12 -> B; COVERT (k 1)
# w/p (1 - slack/p)^+ = 0, .5, .25 -> B. Orders and WT: WSPT A B C (ends 1, 5, 7: 2*1 + 1*4 = 6), MDD
# C B A (then B: 6 < 10; ends 6, 2: 2*2 = 4); WMDD, ATC, COVERT B C A (at t = 4 C beats A; C ends 6:
# 1*3 = 3), the optimum of the six orders (4, 6, 6, 4, 6 for the others).
HAND = pd.DataFrame(
    {
        "task_id": ["A", "B", "C"],
        "workload": [57.0, 228.0, 114.0],
        "memory": [1, 1, 1],
        "deadline": [10.0, 4.0, 3.0],
        "weight": [1, 2, 1],
        "arrival": [0.0, 0.0, 0.0],
    }
)


def test_each_rule_orders_the_hand_instance_by_its_formula():
    expect = {"wspt": ([0, 1, 2], 6.0), "mdd": ([2, 1, 0], 4.0), "wmdd": ([1, 2, 0], 3.0)}
    expect |= {"atc": ([1, 2, 0], 3.0), "covert": ([1, 2, 0], 3.0), "ls": ([1, 2, 0], 3.0)}
    for name, (order, wt) in expect.items():
        knobs = {"k": 1.0} if name in ("atc", "covert") else {}
        r = run(name, HAND, ONE, 0, **knobs)
        assert r.schedule.sequence.tolist() == order, name
        assert r.summary()["wt"] == pytest.approx(wt), name
    b = bound(Problem(resolve_tasks(HAND), make_cluster(ONE)))
    assert (b.kind, b.value) == ("optimum", pytest.approx(3.0))


def _reference_dispatch(problem, pol):
    """Brute-force dispatching: t* over every unplaced task, the released ones scored by ``pol.index``."""
    a, avail = np.array(problem.a), [-math.inf] * problem.m
    w, d = problem.tasks.weight, problem.tasks.deadline
    p = np.where(problem.fit, problem.p, np.inf).min(axis=1)
    left = set(problem.arrival_order.tolist())
    out = []
    while left:
        t_star = min(max(a[i], min(avail[j] for j in problem.fit_rows[i])) for i in left)
        cand = np.array(sorted(i for i in left if a[i] <= t_star))
        v = pol.index(t_star, w[cand], p[cand], d[cand])
        i = int(cand[np.flatnonzero(v == v.max())[0]])
        j = RULES[pol.decode_rule](a[i], avail, problem.p_rows[i], problem.fit_rows[i])
        avail[j] = max(avail[j], a[i]) + problem.p_rows[i][j]
        left.remove(i)
        out.append(i)
    return out


@pytest.mark.parametrize("placement", ["est", "eft"])
@pytest.mark.parametrize(("tasks", "cluster"), [("tasks1", "small"), ("tasks3", "medium")])
def test_dispatching_matches_a_brute_force_dispatcher_and_the_list_decoder_replays_it(tasks, cluster, placement):
    ts = generate_tasks(tasks, 10_001, n=120)
    problem = Problem(ts, make_cluster(cluster))
    for name in ("wspt", "atc", "mdd", "wmdd", "covert"):
        pol = POLICIES.make(name, placement=placement)
        ref = _reference_dispatch(problem, pol)
        order = pol.order(problem)
        assert order[: len(ref)].tolist() == ref, name
        r = run(pol, ts, cluster)
        assert r.schedule.sequence.tolist() == ref, name  # run() decodes that sequence in list order
        assert r.summary() == summarize(decode(problem, order, pol.decode_rule, serial=True))


def test_wspt_is_the_release_aware_decoder_on_its_static_ordering():
    for cluster in ("small", "large"):
        ts = generate_tasks("tasks3", 10_002, n=200)
        problem = Problem(ts, make_cluster(cluster))
        p = np.where(problem.fit, problem.p, np.inf).min(axis=1)
        ordering = np.lexsort((np.arange(problem.n), -(ts.weight / p)))
        ref = decode(problem, ordering, "fifo", serial=False)
        np.testing.assert_array_equal(run("wspt", ts, cluster).schedule.end, ref.end)


@pytest.mark.parametrize("name", NEW)
def test_env_agent_replays_run(name):
    for cluster, seed in (("small", 10_003), ("medium", 10_004)):
        ts = generate_tasks("tasks1", seed, n=150)
        pol = POLICIES.make(name)
        order = pol.order(Problem(ts, make_cluster(cluster)))
        env = gym.make("HGSP-v0", tasks=ts, cluster=cluster, order=order, decoder="list")
        agent = HeuristicAgent(name, env)  # its decide is the rule's placement
        obs, _ = env.reset(seed=0)
        done = False
        while not done:
            obs, _, done, _, info = env.step(agent.predict(obs)[0])
        ref = run(name, ts, cluster)
        np.testing.assert_array_equal(env.unwrapped.schedule().end, ref.schedule.end)
        assert info["summary"]["wt"] == ref.summary()["wt"]


def test_the_descent_never_worsens_its_start_and_its_sequence_replays():
    gains = 0
    for seed in range(10_005, 10_008):
        problem = Problem(generate_tasks("tasks3", seed, n=150), make_cluster("small"))
        for placement in ("est", "eft"):
            pol = POLICIES.make("atc", placement=placement)
            start = strong.dispatch(problem, pol.index, placement)
            before = summarize(decode(problem, start, pol.decode_rule, serial=True))["wt"]
            seq, used = descend(problem, start, pol.decode_rule, 50_000)
            assert sorted(seq) == sorted(start.tolist()) and used <= 50_000 + problem.n
            after = summarize(decode(problem, np.array(seq), pol.decode_rule, serial=True))["wt"]
            assert after <= before + 1e-9
            gains += after < before - 1e-6
            assert descend(problem, start, pol.decode_rule, 0)[0] == start.tolist()
    assert gains >= 4


def test_ls_beats_its_starts_and_scores_the_default_size_well_under_a_second():
    ts = generate_tasks("tasks1", 10_000)  # the env's default preset at its size, 1000 tasks
    r = min((run("ls", ts, "small") for _ in range(2)), key=lambda x: x.wall_s)
    assert r.wall_s < 1.0
    starts = [_wt(rule, ts, "small", **knobs) for rule, knobs in strong.STARTS]
    assert r.summary()["wt"] <= min(starts)
    assert r.summary()["wt"] < _wt("greedy", ts, "small")


def test_tasks_no_gpu_holds_are_skipped_by_every_rule_and_the_bound():
    ts = generate_tasks("tasks1", 10_006, n=80)  # 64 and 80 GB tasks fit no L40 or A30
    cluster = {"L40": 1, "A30": 1}
    skipped = run("fifo", ts, cluster).summary()["skipped"]
    assert skipped > 0
    problem = Problem(ts, make_cluster(cluster))
    b = bound(problem, time_limit_s=0)
    for name in NEW:
        r = run(name, ts, cluster)
        assert r.summary()["skipped"] == skipped and (r.schedule.gpu[problem.skipped] == -1).all()
        assert _below(b.value, r.summary()["wt"])


# -- tuning ------------------------------------------------------------------------------------------


def test_tune_refuses_an_unknown_rule_or_knob():
    with pytest.raises(ConfigError, match="rule = 'fifo' is not known"):
        strong.tune(1, fifo={"x": [1]})
    with pytest.raises(ConfigError, match="unknown atc knobs: depth"):
        strong.tune(1, atc={"depth": [1]})


def test_tune_table_on_a_reduced_grid():
    tab = strong.tune(3, 10_000, atc={"k": [0.5, 4.0], "placement": ["est"]}, mdd={"placement": ["est", "eft"]})
    assert list(tab.columns[:3]) == ["rule", "k", "placement"]
    assert tab.rule.tolist() == ["atc", "atc", "mdd", "mdd"]
    per_regime = tab[[f"mean_{r}" for r in strong.TUNE_REGIMES]].to_numpy()
    assert np.allclose(tab["mean"], per_regime.mean(axis=1))
    assert (tab.n == 3 * len(strong.TUNE_REGIMES)).all() and (tab.ci_lo <= tab["mean"]).all()
    for _, rows in tab.groupby("rule"):
        assert rows.iloc[0]["default"] and not rows.iloc[1]["default"]  # the shipped knobs come first
    atc = tab[tab.rule == "atc"].iloc[0]
    insts = strong.instances(range(10_000, 10_003))
    assert atc["mean_tasks1_small"] == pytest.approx(strong.score(strong.ATC(), insts)["tasks1_small"].mean())


@pytest.mark.slow
def test_the_shipped_defaults_are_tunes_best_rows():
    # the full 20 selection seeds, each default against its grid neighbours
    # (python -m studies tune-rules --scenario hgsp plays the whole grid)
    tab = strong.tune(
        20,
        10_000,
        wspt={"placement": ["est", "eft"]},
        atc={"k": [0.25, 0.5, 1.0], "placement": ["est", "eft"]},
        mdd={"placement": ["est", "eft"]},
        wmdd={"placement": ["est", "eft"]},
        covert={"k": [1.0, 2.0, 4.0], "placement": ["est"]},
        ls={"starts": [4, 8]},
    )
    for rule, rows in tab.groupby("rule"):
        assert rows.iloc[0]["default"], rule
        assert rows["mean"].iloc[0] < rows["mean"].iloc[1], rule


# -- the bound ---------------------------------------------------------------------------------------

# 24 small instances: bursts (tiny) and overload (tasks3) on three clusters, all within CP-SAT's reach
SMALL = (
    [("tiny", s, 8, "small") for s in range(10_000, 10_010)]
    + [("tiny", s, 6, {"A100": 1, "A30": 1}) for s in range(10_010, 10_016)]
    + [("tasks3", s, 8, "small") for s in range(10_016, 10_020)]
    + [("tasks3", s, 9, "medium") for s in range(10_020, 10_024)]
)


def _small(k):
    preset, seed, n, cluster = SMALL[k]
    return Problem(generate_tasks(preset, seed, n=n), make_cluster(cluster))


@functools.cache
def _bound(k, time_limit_s):
    return bound(_small(k), time_limit_s=time_limit_s)


# The limit is generous so that a loaded machine still proves these small instances optimal; the
# solve is made once per instance (cached) and every assertion below is checked against it.
EXACT_LIMIT_S = 60.0


@pytest.mark.parametrize("k", range(len(SMALL)))
def test_the_bound_is_below_every_registered_policy_and_is_the_solvers_optimum(k):
    problem = _small(k)
    b = _bound(k, EXACT_LIMIT_S)
    objectives = {p: _wt(p, problem.tasks, problem.cluster) for p in POLICIES.names()}  # the whole registry
    assert all(_below(b.value, v) for v in objectives.values()), (b, objectives)
    assert b.kind == "optimum", b  # these sizes finish well within the limit
    assert b.method == "cp-sat" or b.method.startswith("relaxation ("), b
    tol = exact_tolerance(problem, exact_scale(problem)[0])
    assert min(objectives.values()) >= b.value - tol
    lb = _bound(k, 0)  # the relaxations alone
    assert _below(lb.value, b.value + tol)
    assert lb.kind == "lower_bound" or lb.value == pytest.approx(b.value, abs=tol)
    sched = rule_schedule(problem)
    upper = summarize(sched)["wt"]
    horizon = float(np.nanmax(sched.end - problem.tasks.arrival))
    for part in (pooled(problem), lagrangian(problem, upper, horizon), relaxation(problem)[0]):
        assert _below(part, b.value + tol)


def test_the_relaxations_are_not_trivial_where_the_optimum_is_positive():
    positive = lifted = 0
    for k in range(len(SMALL)):
        b = _bound(k, 0)
        opt = _bound(k, EXACT_LIMIT_S).value
        positive += opt > 1e-6
        lifted += opt > 1e-6 and b.value >= 0.3 * opt
    assert positive >= 10 and lifted >= positive // 2


def test_overloaded_sets_get_a_pooled_bound_near_the_rules():
    problem = Problem(generate_tasks("tasks3", 10_000, n=300), make_cluster("small"))
    lb = pooled(problem)
    wts = [_wt(p, problem.tasks, problem.cluster) for p in ("fifo", "greedy", "atc", "mdd", "wmdd")]
    assert 0.5 * min(wts) < lb <= min(wts)  # the backlog's work is what the pooled machine sees


def test_exact_scale_puts_the_presets_data_on_integers():
    problem = Problem(generate_tasks("tiny", 10_000), make_cluster("large"))
    scale, weight_scale = exact_scale(problem)
    assert (scale, weight_scale) == (1000 * 2 * 3 * 5 * 19 * 37, 1)  # lcm(57, 30, 111) for 57, 30, 55.5
    for x in (problem.p[problem.fit], problem.tasks.arrival, problem.tasks.deadline):
        assert np.allclose(x * scale, np.round(x * scale), rtol=0, atol=1e-3)


def test_off_grid_data_get_a_valid_bound():
    df = generate_tasks("tiny", 10_001, n=8).to_frame()
    df["weight"] = df["weight"] + 0.37  # weights off the integers: the solver rounds them down
    df["arrival"] = df["arrival"] + 0.00041
    df["deadline"] = df["deadline"] + 0.00041
    problem = Problem(resolve_tasks(df), make_cluster("small"))
    assert exact_scale(problem)[1] == 100
    b = bound(problem, time_limit_s=10.0)
    assert all(_below(b.value, _wt(p, df, "small")) for p in POLICIES.names())


def test_bad_bound_arguments_are_refused():
    problem = _small(0)
    with pytest.raises(ConfigError, match="time_limit_s = -1"):
        bound(problem, time_limit_s=-1)
    with pytest.raises(ConfigError, match="method = 'lp' is not known"):
        bound(problem, method="lp")
    with pytest.raises(ConfigError, match="workers = 0"):
        bound(problem, workers=0)
    with pytest.raises(ConfigError, match="problem = 'tiny' is not allowed"):
        bound("tiny")
