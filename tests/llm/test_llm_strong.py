"""The LLM scenario's strong rules, their tuning, the exact solver and the bound."""

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gpu_sched_env  # noqa: F401  (registers LLMServe-v0)
from gpu_sched_agents.heuristics.llm import HeuristicAgent, strong
from gpu_sched_agents.heuristics.llm.bounds import bound, relaxation
from gpu_sched_agents.heuristics.llm.exact import instance, solve_exact
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.llm import Workload, make_cluster, mixed, requests_from_frame, simulate
from gpu_sched_env.llm.policies import POLICIES
from gpu_sched_env.llm.sim import LLMDecision

NEW = ("spt", "wsrpt_aging", "smith_area", "backfill", "rollout")
COLUMNS = ["req_id", "model", "tokens", "phase", "memory", "tp", "weight", "arrival"]


def _table(rows):
    return pd.DataFrame(rows, columns=COLUMNS)


def _objective(policy, wl, engine="discrete"):
    return simulate(policy, wl, engine=engine).summary()["weighted_wait"]


def _below(value, objective):
    """``value <= objective`` up to the float rounding of two sums of the same terms."""
    return value <= objective + 1e-9 * max(1.0, abs(objective))


# -- the rules ---------------------------------------------------------------------------------------


def test_the_rules_are_registered_as_extensions_with_their_tuned_knobs():
    assert POLICIES.names()[:2] == ("fifo", "wsrpt")
    assert set(NEW) <= set(POLICIES.names())
    assert POLICIES.names(published_only=True) == ("fifo", "wsrpt")  # the study's tables keep its two
    for name in NEW:
        pol = POLICIES.make(name)
        assert pol.name == name
        assert dict(POLICIES.entry(name).knobs) == strong.DEFAULTS.get(name, {})
        for knob, value in strong.DEFAULTS.get(name, {}).items():
            assert getattr(pol, knob) == value


@pytest.mark.parametrize(
    ("name", "knob", "value", "match"),
    [
        ("wsrpt_aging", "aging", -0.1, r"aging = -0.1"),
        ("wsrpt_aging", "aging", 101, r"aging = 101"),
        ("smith_area", "beta", 5.0, r"beta = 5.0"),
        ("backfill", "aging", float("nan"), r"aging = nan"),
        ("rollout", "width", 0, r"width = 0"),
        ("rollout", "width", 2.0, r"width = 2.0 must be an integer"),
        ("spt", "aging", 0.1, r"unknown spt parameters: aging"),
    ],
)
def test_bad_knobs_are_refused_naming_the_field(name, knob, value, match):
    with pytest.raises(ConfigError, match=match):
        POLICIES.make(name, **{knob: value})


def _decision(time, cand, arrival, weight, p_est, tp, free):
    n = len(arrival)
    return LLMDecision(
        float(time),
        np.array(cand),
        np.arange(n),
        np.array(arrival, float),
        np.array(weight, float),
        np.array(p_est, float),
        np.array(tp),
        free,
    )


def test_each_index_rule_orders_by_its_formula():
    # SPT ignores weights: request 1 is the shortest
    d = _decision(0, [0, 1, 2], [0, 0, 0], [10, 1, 5], [3.0, 1.0, 2.0], [1, 1, 1], 1)
    assert POLICIES.make("spt").decide(d) == 1
    # aging: request 0 (w/p = 1.0) arrived now; request 1 (w/p = 0.9) has waited 10 s. pbar = 1 s, so
    # aging 0.1 lifts request 1 to 0.9 + 0.1 * 0.9 * 10 = 1.8 > 1.0; aging 0 is WSRPT
    d = _decision(10, [0, 1], [10, 0], [1.0, 0.9], [1.0, 1.0], [1, 1], 2)
    assert POLICIES.make("wsrpt_aging", aging=0.1).decide(d) == 1
    assert POLICIES.make("wsrpt_aging", aging=0.0).decide(d) == POLICIES.make("wsrpt").decide(d) == 0
    # Smith area: request 0 w/p = 4 on 4 GPUs (1 per GPU-second), request 1 w/p = 2 on 1 GPU (2 per GPU-s)
    d = _decision(0, [0, 1], [0, 0], [4.0, 2.0], [1.0, 1.0], [4, 1], 4)
    assert POLICIES.make("smith_area", beta=1.0).decide(d) == 1
    assert POLICIES.make("smith_area", beta=0.0).decide(d) == 0


# Backfill by hand, 4 H100, prefill at 1000 tok/s. R (tau 2, 1 s, w 1) arrives at 0 and starts alone.
# At 0.5 s arrive H (tau 4, 1 s, w 10), L (tau 2, 3 s, w 3) and S (tau 2, 0.5 s, w 0.4); 2 GPUs are free.
# WSRPT (H 10, L 1, S 0.8; H does not fit): L [0.5, 3.5]; S [1.0, 1.5] when R ends; H waits for L: [3.5, 4.5].
#   weighted wait = 1*1 + 3*3 + 0.4*1.0 + 10*4.0 = 50.4
# Backfill: H's shadow time is 1.0 (R ends, 4 GPUs free), S ends by then, L not: S [0.5, 1.0]; at 1.0
# H fits: H [1.0, 2.0]; L [2.0, 5.0].   weighted wait = 1 + 0.4*0.5 + 10*1.5 + 3*4.5 = 29.7
BACKFILL_CASE = [
    (1, "m", 1000, "PREFILL", 10, 2, 1.0, 0.0),
    (2, "m", 1000, "PREFILL", 10, 4, 10.0, 0.5),
    (3, "m", 3000, "PREFILL", 10, 2, 3.0, 0.5),
    (4, "m", 500, "PREFILL", 10, 2, 0.4, 0.5),
]


@pytest.mark.parametrize("engine", ["discrete", "event"])
def test_backfill_and_rollout_protect_the_wide_request_hand_computed(engine):
    df = _table(BACKFILL_CASE)
    run = {p: simulate(p, df, engine=engine, cluster={"H100": 4}) for p in ("wsrpt", "backfill", "rollout")}
    assert run["wsrpt"].summary()["weighted_wait"] == pytest.approx(50.4)
    for p in ("backfill", "rollout"):  # rollout: starting S first scores 28.7 on the queue, L first 49.4
        assert run[p].summary()["weighted_wait"] == pytest.approx(29.7)
        np.testing.assert_allclose(run[p].to_frame().start, [0.0, 1.0, 2.0, 0.5])
    wl = run["wsrpt"].sim.workload
    assert bound(wl, engine=engine).value == pytest.approx(29.7)  # and nothing does better (CP-SAT)


@pytest.mark.parametrize("name", NEW)
def test_env_agent_replays_simulate_across_episodes(name):
    env = gym.make("LLMServe-v0", workload="mixed", n_requests=50)
    agent = HeuristicAgent(name, env)  # one agent, never reset: its rule starts each new run itself
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            a, _ = agent.predict(obs)
            obs, _, done, _, info = env.step(a)
        assert info["summary"] == simulate(name, env.unwrapped.sim.workload).summary()


@pytest.mark.parametrize("name", NEW)
def test_engines_agree_on_grid_aligned_workloads(name):
    for seed in (0, 1):
        wl = mixed(seed, 200)
        d, e = simulate(name, wl, engine="discrete"), simulate(name, wl, engine="event")
        np.testing.assert_allclose(d.sim.end_t, e.sim.end_t, atol=1e-6)


def test_rollout_scores_the_default_size_well_under_a_second():
    r = simulate("rollout", mixed(10_000, 200))  # the most expensive rule, on the discrete reference
    assert r.summary()["completed"] == 200
    assert r.wall_s < 1.0


# -- tuning ------------------------------------------------------------------------------------------


def test_tune_refuses_an_unknown_rule_or_knob():
    with pytest.raises(ConfigError, match="rule = 'fifo' is not known"):
        strong.tune(1, fifo={"x": [1]})
    with pytest.raises(ConfigError, match="unknown rollout knobs: depth"):
        strong.tune(1, rollout={"depth": [1]})


def test_the_shipped_defaults_are_tunes_best_rows():
    # the full 20 selection seeds, each default against a neighbour of its grid (the rollout's wider
    # widths tie with 4; python -m studies tune-rules --scenario llm plays the whole grid)
    tab = strong.tune(
        20,
        10_000,
        wsrpt_aging={"aging": [0.03, 0.1]},
        smith_area={"beta": [0.0, 0.25]},
        backfill={"aging": [0.1, 0.3]},
        rollout={"width": [2, 4]},
    )
    assert list(tab.columns[:4]) == ["rule", "aging", "beta", "width"]
    assert (tab.n == 20).all() and (tab.ci_lo < tab["mean"]).all() and (tab["mean"] < tab.ci_hi).all()
    assert np.allclose(tab["mean"], (tab.mean_n50 + tab.mean_n200) / 2)
    for rule, rows in tab.groupby("rule"):
        assert rows.iloc[0]["default"], rule  # lowest mean first: the shipped knobs
        assert rows["mean"].iloc[0] < rows["mean"].iloc[1], rule


# -- the exact solver and the bound -------------------------------------------------------------------


class Replay:
    """Starts each request at the time a schedule gives it (the solver's)."""

    name = "replay"

    def __init__(self, start):
        self.start = start

    def reset(self, setup, rng):
        pass

    def decide(self, d):
        c = d.candidates
        due = c[np.abs(self.start[c] - d.time) < 1e-6]
        assert len(due), f"at t = {d.time} no startable request is due: the schedule is not non-delay"
        return int(due[0])


SMALL = [mixed(seed, 6, gpus=4) for seed in range(16)] + [mixed(seed, 10) for seed in range(8)]


def test_small_instances_are_congested_enough_to_tell_the_rules_apart():
    spread = [len({round(_objective(p, wl), 6) for p in POLICIES.names()}) for wl in SMALL]
    assert sum(s > 1 for s in spread) >= 8


@pytest.mark.parametrize("k", range(len(SMALL)))
def test_the_bound_is_below_every_registered_policy(k):
    wl = SMALL[k]
    b = bound(wl, time_limit_s=10.0)
    objectives = {p: _objective(p, wl) for p in POLICIES.names()}  # the whole registry, future rules too
    assert all(_below(b.value, v) for v in objectives.values()), (b, objectives)
    ex = solve_exact(wl, time_limit_s=10.0)
    assert ex.proven_optimal  # these sizes finish well within the limit
    assert b.kind == "optimum"
    assert b.value == pytest.approx(ex.upper_bound, rel=1e-9)
    assert min(objectives.values()) >= ex.upper_bound - 1e-9
    lb = bound(wl, time_limit_s=0)  # the relaxations alone
    assert _below(lb.value, ex.upper_bound)
    assert lb.kind == "lower_bound" or lb.value == pytest.approx(ex.upper_bound, rel=1e-9)
    assert _below(relaxation(instance(wl), min(objectives.values()))[0], ex.upper_bound)


@pytest.mark.parametrize("engine", ["discrete", "event"])
@pytest.mark.parametrize("seed", [0, 3, 5])
def test_the_solvers_schedule_is_what_a_policy_plays(seed, engine):
    wl = mixed(seed, 8, gpus=4)
    ex = solve_exact(wl, engine=engine)
    assert ex.proven_optimal
    assert _objective(Replay(ex.start), wl, engine) == pytest.approx(ex.upper_bound)


def test_the_discriminating_preset_bound_is_wsrpts_optimum():
    from gpu_sched_env.llm import discriminating

    b = bound(discriminating(), time_limit_s=0)
    assert (b.kind, b.value) == ("optimum", pytest.approx(102.0))  # the relaxation meets WSRPT's 102


def test_off_grid_and_two_type_instances_get_valid_lower_bounds():
    rng = np.random.default_rng(7)
    rows = [
        (i, "m", float(rng.integers(300, 3000)), "PREFILL", 20.0, int(rng.choice([1, 2])), float(w), float(a))
        for i, (w, a) in enumerate(zip(rng.choice([1, 10], 12), np.sort(rng.uniform(0, 2, 12))))
    ]
    df = _table(rows)  # arrivals off the 0.01 s grid
    wl = simulate("fifo", df, cluster={"H100": 3}).sim.workload
    b = bound(wl, engine="event")
    assert b.kind == "lower_bound" and b.method.startswith("relaxation")  # the exact model needs the grid
    assert all(_below(b.value, _objective(p, wl, "event")) for p in POLICIES.names())
    b = bound(wl, engine="discrete")  # the discrete engine is modelled exactly at any arrival
    assert all(_below(b.value, _objective(p, wl)) for p in POLICIES.names())
    cluster = make_cluster({"H100": 2, "L4": 2}, table={"L4": {"memory": 24.0, "prefill": 400.0, "decode": 2000.0}})
    two = Workload("two types", requests_from_frame(df), cluster)
    b = bound(two)
    assert b.kind == "lower_bound"
    assert all(_below(b.value, _objective(p, two)) for p in POLICIES.names())
    with pytest.raises(ConfigError, match="method = 'cp-sat'.*beyond the exact model"):
        bound(two, method="cp-sat")


def test_bad_bound_arguments_are_refused():
    wl = SMALL[0]
    with pytest.raises(ConfigError, match="time_limit_s = -1"):
        bound(wl, time_limit_s=-1)
    with pytest.raises(ConfigError, match="workers = 0 is out of range"):
        bound(wl, workers=0)
    with pytest.raises(ConfigError, match="method = 'lp' is not known"):
        bound(wl, method="lp")
    with pytest.raises(ConfigError, match="engine = 'fast' is not known"):
        bound(wl, engine="fast")
    with pytest.raises(ConfigError, match="workload = 'mixed' is not allowed"):
        bound("mixed")
