"""The edge scenario's strong rules, their env policy, tune() and the bound.

Hand cases: a two-device instance where min-min and MCT end at 5 h and max-min, HEFT and sufferage at 4 h;
the five-task example, whose optimum is 3/7 x 268.33 = 115.0 min (the Chest X-ray shards alone need it, MemBatch
reaches it).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_agents.heuristics.edge import LLF_STREAM, HeuristicAgent, make_planner, strong
from gpu_sched_agents.heuristics.edge.bounds import bound, exact_plan
from gpu_sched_agents.heuristics.edge.energetic import dff
from gpu_sched_agents.heuristics.edge.rules import Line, plan_makespan
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.model import EdgeProblem, Profile, Task, jetson_cluster
from gpu_sched_env.edge.policies import PLANNERS, POLICIES
from gpu_sched_env.edge.profiles import default_profiles
from gpu_sched_env.edge.sim import DeviceTimeline, simulate
from gpu_sched_env.edge.workload import five_task_example, split_tasks

H = 3600.0
TOL_H = 1e-9  # float rounding of a makespan in hours (the bound is exact up to 1e-6 s)


def _makespan_h(plan, cluster) -> float:
    return simulate(plan, cluster).makespan_s / H


def _two_devices() -> EdgeProblem:
    """A Nano (device 0) and an Orin (device 1); no co-running (100 % GPU); times [h]: S 1.5 / 1, L 8 / 4."""
    cluster = jetson_cluster(units={"nano": 1, "xavier_nx": 0, "orin_nx": 2})  # the second Orin is the head

    def task(k: int, name: str, nano_h: float, orin_h: float) -> Task:
        prof = {"nano": Profile(nano_h * H, 100.0, 1.0), "orin_nx": Profile(orin_h * H, 100.0, 1.0)}
        return Task(f"t{k}-{name}", name, prof, arrival=k, parent=f"t{k}-{name}")

    return EdgeProblem((task(0, "s1", 1.5, 1.0), task(1, "s2", 1.5, 1.0), task(2, "l", 8.0, 4.0)), cluster)


def test_line_replays_the_simulator_timeline_exactly():
    rng = np.random.default_rng(0)
    for _ in range(20):
        ref, line = DeviceTimeline(16.0, 100.0), Line(16.0, 100.0)
        for _ in range(40):
            dur, mem, gpu = rng.uniform(60, 7200), rng.choice([0.8, 1.6, 3.0, 4.0, 8.0]), rng.choice([6, 12, 50, 64])
            assert line.add(dur, mem, gpu) == ref.add(dur, mem, gpu)[1]
        assert line.finish == ref.finish


@pytest.mark.parametrize(
    ("name", "device", "makespan_h"),
    [
        ("min_min", (1, 0, 1), 5.0),  # S1 -> Orin, S2 -> Nano (1.5 < 2), then L -> Orin: 1 + 4
        ("mct", (1, 0, 1), 5.0),  # arrival order gives the same choices
        ("max_min", (0, 0, 1), 4.0),  # L first -> Orin; S1, S2 -> Nano at 1.5 and 3
        ("heft", (0, 0, 1), 4.0),  # L has the largest rank under every aggregation
        ("sufferage", (0, 0, 1), 4.0),  # L suffers 4 h, S1 and S2 0.5 h: L takes the Orin
        ("best_rule", (0, 0, 1), 4.0),
        ("local_search", (0, 0, 1), 4.0),
    ],
)
def test_rules_on_a_hand_solved_instance(name, device, makespan_h):
    p = _two_devices()
    plan = make_planner(name).plan(p)
    assert plan.device == device
    assert _makespan_h(plan, p.cluster) == pytest.approx(makespan_h)


def test_heft_dispatches_in_decreasing_rank():
    p = strong.instance(20_000, 15)
    for rank, agg in (("mean", np.mean), ("median", np.median), ("best", np.min), ("worst", np.max)):
        plan = make_planner("heft", rank=rank).plan(p)
        t = np.array([[pr.time_s for pr in (x.profile[d.dtype] for d in p.cluster.devices)] for x in plan.tasks])
        ranks = [agg(t[i]) for i in plan.order]
        assert all(a >= b for a, b in zip(ranks, ranks[1:], strict=False)), rank


@pytest.mark.parametrize("name", list(strong.STRONG))
def test_rule_plans_are_valid_and_plan_the_simulated_makespan(name):
    for seed, n in ((20_001, 6), (20_002, 14), (20_003, 25)):
        p = strong.instance(seed, n)
        plan = make_planner(name).plan(p)
        work = split_tasks(p.tasks, p.cluster.min_mem_gb)
        assert [t.id for t in plan.tasks] == [t.id for t in work]
        assert sorted(plan.order) == list(range(len(work)))
        sim = simulate(plan, p.cluster)  # raises if a task is on a device it does not fit
        assert plan_makespan(plan, p.cluster) == sim.makespan_s
        assert make_planner(name).plan(p).device == plan.device  # deterministic


def test_combinations_are_no_worse_than_their_parts():
    for seed in (20_010, 20_011, 20_012):
        p = strong.instance(seed, 20)
        spans = {r: plan_makespan(make_planner(r).plan(p), p.cluster) for r in strong.LIST_RULES}
        best = plan_makespan(make_planner("best_rule").plan(p), p.cluster)
        assert best == min(spans.values())
        assert plan_makespan(make_planner("local_search", start="heft").plan(p), p.cluster) <= spans["heft"]
        assert (
            plan_makespan(make_planner("local_search", max_moves=0, start="heft").plan(p), p.cluster) == spans["heft"]
        )


def _drive(env, agent, seed, options=None):
    obs, _ = env.reset(seed=seed, options=options)
    done = False
    while not done:
        a, _ = agent.predict(obs)
        obs, _, done, _, _ = env.step(a)


@pytest.mark.parametrize("seed", [0, 3, 11])
def test_mct_agent_through_env_reproduces_the_planner(seed):
    env = gym.make("EdgeBatch-v0", n_tasks=30)
    u = env.unwrapped
    agent = HeuristicAgent("mct", env, seed=seed)
    for episode in range(2):  # the policy restarts its timelines at each episode's first decision
        _drive(env, agent, seed + 100 * episode)
        plan = make_planner("mct").plan(EdgeProblem(tuple(u.source_tasks), u.cluster))
        assert [t.id for t in plan.tasks] == [t.id for t in u.tasks]
        assert plan.device == u.plan().device
        assert simulate(plan, u.cluster).makespan_s == simulate(u.plan(), u.cluster).makespan_s


def test_mct_policy_refuses_an_env_that_placed_a_task_elsewhere():
    env = gym.make("EdgeBatch-v0", n_tasks=10)
    agent = HeuristicAgent("mct", env)
    obs, _ = env.reset(seed=1)
    a, _ = agent.predict(obs)
    obs, *_ = env.step((int(a) + 1) % env.unwrapped.cluster.n)  # not the agent's device
    with pytest.raises(RuntimeError, match="one policy drives one env"):
        agent.predict(obs)


@pytest.mark.parametrize(
    ("name", "knobs", "field"),
    [
        ("heft", {"rank": "average"}, "heft.rank"),
        ("lp_round", {"order": "random"}, "lp_round.order"),
        ("local_search", {"start": "membatch"}, "local_search.start"),
        ("local_search", {"neighbourhood": "swap"}, "local_search.neighbourhood"),
        ("local_search", {"max_moves": -1}, "local_search.max_moves"),
        ("local_search", {"max_moves": 2.5}, "local_search.max_moves"),
        ("best_rule", {"rules": ["membatch"]}, "best_rule.rules"),
        ("best_rule", {"rules": []}, "best_rule.rules"),
        ("min_min", {"split_threshold_gb": 0}, "min_min.split_threshold_gb"),
    ],
)
def test_bad_knobs_raise_naming_the_field(name, knobs, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        PLANNERS.make(name, **knobs)


@pytest.mark.parametrize(
    "grid", [{"membatch": {"x": [1]}}, {"heft": {"order": ["arrival"]}}, {"heft": {"rank": []}}, {"heft": ["mean"]}]
)
def test_tune_refuses_an_unknown_grid(grid):
    with pytest.raises(ConfigError, match="tune"):
        strong.tune(n_seeds=1, sizes=(5,), **grid)


def test_shipped_heft_default_is_tunes_best_row():
    df = strong.tune(rules=("heft",))  # the full selection grid: HEFT is cheap
    assert len(df) == len(strong.RANKS) and set(df["rank"]) == set(strong.RANKS)
    assert (df.n == 20 * len(strong.TUNE_SIZES)).all()
    assert df.loc[df.best, "rank"].tolist() == [strong.HEFT().rank]
    assert (df.ci_lo <= df.makespan_h).all() and (df.makespan_h <= df.ci_hi).all()


@pytest.mark.slow
def test_shipped_lp_round_and_local_search_defaults_are_tunes_best_rows():
    df = strong.tune(rules=("lp_round", "local_search"))
    best = df[df.best].set_index("rule")
    assert best.loc["lp_round", "order"] == strong.LPRound().order
    ls = strong.LocalSearch()
    assert (best.loc["local_search", "start"], best.loc["local_search", "neighbourhood"]) == (
        ls.start,
        ls.neighbourhood,
    )


# ---- the bound ------------------------------------------------------------------------------------------------
def test_dual_feasible_functions():
    from fractions import Fraction as F

    assert [dff(F(x), 1) for x in ("0.4", "1/2", "0.6")] == [0, F(1, 2), 1]
    assert [dff(F(x), 2) for x in ("0.3", "1/3", "0.5", "2/3", "0.7")] == [0, F(1, 3), F(1, 2), F(2, 3), 1]


def _objectives(problem: EdgeProblem, seed: int) -> dict[str, float]:
    """The makespan [h] of every registered planner and env policy (the env policies through EdgeBatch-v0)."""
    out = {
        f"planner {n}": _makespan_h(PLANNERS.make(n).plan(problem, stream(seed, LLF_STREAM)), problem.cluster)
        for n in PLANNERS.names()
    }
    env = gym.make("EdgeBatch-v0", n_tasks=len(problem.tasks))
    for name in POLICIES.names():
        _drive(env, HeuristicAgent(name, env, seed=seed), seed, {"workloads": [t.workload for t in problem.tasks]})
        out[f"policy {name}"] = _makespan_h(env.unwrapped.plan(), problem.cluster)
    return out


def test_bound_is_below_every_registered_policy_and_exact_where_proved():
    n_opt = 0
    for k in range(20):
        seed = 20_100 + k
        p = strong.instance(seed, 3 + k % 4)
        b = bound(p, 10.0)
        objs = _objectives(p, seed)
        assert all(b.value <= v + TOL_H for v in objs.values()), (seed, b, objs)
        lb = bound(p, method="relaxation")
        assert lb.kind == "lower_bound" and lb.value <= b.value + TOL_H
        assert bound(p, 0).value == lb.value
        if b.kind == "optimum":
            n_opt += 1
            plan, status, value, proved, exact = exact_plan(p, 10.0)
            assert status == "OPTIMAL" and exact and value == proved
            assert b.value == value / H
            assert _makespan_h(plan, p.cluster) == pytest.approx(b.value, abs=TOL_H)  # the witness reaches it
            assert min(objs.values()) >= b.value - TOL_H
    assert n_opt >= 18  # small instances: CP-SAT proves almost all within the limit (measured: all 20)


def test_bound_of_the_five_task_example_is_the_chest_xray_shards_time():
    # Chest X-ray (7 GB) splits into 4 + 3 GB shards that cannot share a device's GPU (64 / 85 / 95 %): the best is
    # the 4 GB shard on the Orin (4/7 x 122.5 = 70 min) and the 3 GB one on a Xavier (3/7 x 268.33 = 115.0 min);
    # MemBatch reaches it, the other tasks fit beside
    opt_min = 3 / 7 * 268.33
    cluster = jetson_cluster()
    p = EdgeProblem(tuple(five_task_example(default_profiles(), cluster)), cluster)
    b = bound(p)
    assert b.kind == "optimum" and b.value * 60 == pytest.approx(opt_min, abs=1e-9)
    assert _makespan_h(make_planner("membatch").plan(p), cluster) * 60 == pytest.approx(opt_min, abs=1e-9)
    assert bound(p, 0).value * 60 <= opt_min


def test_bound_without_an_exact_grid_claims_a_lower_bound_only():
    cluster = jetson_cluster()

    def task(k: int) -> Task:
        # run times [s] with no small common denominator: the model is rounded, so no optimum is claimed
        prof = {
            dt: Profile(1000.0 * math.pi * (k + 1) * f, 30.0, 2.0)
            for dt, f in (("nano", 2.1), ("xavier_nx", 2.0), ("orin_nx", 1.0))
        }
        return Task(f"t{k}", "w", prof, arrival=k, parent=f"t{k}")

    p = EdgeProblem(tuple(task(k) for k in range(6)), cluster)
    plan, status, *_, exact = exact_plan(p, 5.0)
    assert not exact and status == "OPTIMAL"
    b = bound(p, 5.0)
    assert b.kind == "lower_bound"
    assert (
        b.value
        <= min(_makespan_h(PLANNERS.make(n).plan(p, stream(0, LLF_STREAM)), cluster) for n in PLANNERS.names()) + TOL_H
    )


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"method": "lp"}, "method = 'lp' is not known"), ({"time_limit_s": -1}, "time_limit_s")]
)
def test_bound_refuses_bad_arguments(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        bound(strong.instance(20_000, 3), **kwargs)


def test_compare_reports_every_planner_and_the_bound_below_them():
    df = strong.compare(n_seeds=2, sizes=(4,), bound_limit_s=2.0).set_index("rule")
    assert set(df.index) == {*PLANNERS.names(), "bound"}
    assert (df.loc["bound", "makespan_h"] <= df.drop(index="bound").makespan_h + TOL_H).all()
    assert df.loc["bound", "n_optimum"] == 2
