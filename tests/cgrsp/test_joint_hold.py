"""``action_mode="joint_hold"`` on CGRSP-v0: config checks, the mask, the release of a hold, the rule through it.

The JAX env's equality under this design is tests/cgrsp/jax/test_joint_hold_jax.py.
"""

import pickle

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp.extensions import deferred_slots
from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.held import HeldDeferrals
from gpu_sched_env.cgrsp.stock import defer_cost, next_event_gap
from gpu_sched_env.core.errors import ConfigError

MARKOV = {"stock_process": "markov", "stock_dwell_s": 900.0}
RULE = "spt_rescue_defer_exp"


def design(day: str = "hectic", params: dict | None = None, **kw) -> CGRSPEnvConfig:
    """conf/env/joint_hold.yaml's design (joint_heads' window, joint_hold actions)."""
    base = {"window": 3, "window_by": "class", "order": "spt", "action_mode": "joint_hold", "features": "model"}
    return CGRSPEnvConfig(day=day, params=params or {}, **(base | kw))


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"window_by": "order"}, "window = 3 with window_by = 'order' is not allowed for action_mode = 'joint_hold'"),
        ({"window": 4}, r"window = 4 .*allowed: window_by = 'class' and window in 1..3"),
        ({"params": {"c_max": 3}}, r"c_max = 3 is not allowed for action_mode = 'joint_hold'.*allowed: c_max ≥ 4"),
        ({"hold": "stock"}, "hold = 'stock' needs action_mode = 'slot'"),
    ],
)
def test_designs_it_cannot_express_raise(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        design(**kw)


def test_layout():
    env = CGRSPEnv(design())
    K, C, T = 3, env.params.c_max, len(env.params.gpu_types)
    assert env.action_space.n == env.actions.n_actions == K * C + T + 1 and env.wait_action == K * C + T
    assert (
        isinstance(env.actions, HeldDeferrals) and env.actions.simpler_designs(env.cfg)["joint"].action_mode == "joint"
    )


def legal(env: CGRSPEnv) -> list[bool]:
    """Each action's legality by the rules in gpu_sched_env.cgrsp.held's docstring, from the simulator's state."""
    sim, sch = env.sim, env.actions
    kc = sch.K * sch.C
    typ = np.asarray(sim.fleet.slot_type)
    idle = np.asarray(sim.slot_job) < 0
    free = idle & ~np.isin(typ, list(sch.held))
    future = sim.n_arrived < sim.n_jobs or not idle.all()
    if not (len(env.window_jobs) and free.any()):
        return [False] * env.action_space.n

    def one(a: int) -> bool:
        if a < kc:
            return a // sch.C < len(env.window_jobs) and bool(free[a % sch.C])
        if a < env.wait_action:
            g = a - kc
            return (
                g not in sch.held
                and sim.stock[g] != 0  # not at High: no better status to wait for
                and bool((idle & (typ == g)).any())
                and (future or bool((free & (typ != g)).any()))
            )
        return future

    return [one(a) for a in range(env.action_space.n)]


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_mask_is_exactly_the_legal_actions(params):
    """Over a whole surge day of random masked play; every 25th step each legal action is tried on a copy."""
    env = CGRSPEnv(design("surge", params))
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    kc, held_seen, step = env.actions.K * env.actions.C, 0, 0
    done = False
    while not done:
        m = env.action_masks()
        assert legal(env) == m.tolist(), f"step {step}"
        if step % 25 == 0:
            for a in np.flatnonzero(m):
                twin = pickle.loads(pickle.dumps(env, pickle.HIGHEST_PROTOCOL))  # deepcopy: 1.6x slower
                t0 = twin.sim.t
                twin.step(int(a))
                if kc <= a < env.wait_action:  # a hold: no slot of that type is filled at this instant
                    g = a - kc
                    assert twin.sim.t > t0 or g in twin.actions.held or not twin.sim.waiting
        a = int(rng.choice(np.flatnonzero(m)))
        held_seen += kc <= a < env.wait_action
        _, _, done, _, _ = env.step(a)
        step += 1
    assert held_seen > 50 and env.result().summary()["completed"] == env.sim.n_jobs


def at_first_decision(params: dict, seed: int = 0, **kw):
    """A joint_hold env (``kw``: more settings) at its first decision point, with the first idle slot's type held."""
    env = CGRSPEnv(design("hectic", params), **kw)
    env.reset(seed=seed)
    sim = env.sim
    g = sim.fleet.slot_type[0]
    env.actions.held = {g: sim.stock[g]}
    return env, sim, g


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_a_hold_is_released_when_its_status_changes(params):
    env, sim, g = at_first_decision(params)
    for j in sim.waiting:  # loose deadlines: no laxity trigger
        sim.deadline[j] = sim.t + 10 * 3600.0
    env.actions.on_advance(sim, True)
    assert g in env.actions.held  # status unchanged: kept
    sim.stock[g] = (sim.stock[g] + 1) % 3
    env.actions.on_advance(sim, True)
    assert g not in env.actions.held
    env.actions.held = {g: sim.stock[g]}
    env.actions.on_advance(sim, False)  # the day is over: every hold goes
    assert not env.actions.held


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_a_hold_is_released_when_the_laxity_trigger_fires(params):
    env, sim, g = at_first_decision(params)
    j = next(iter(sim.waiting))
    w = sim.fleet.wbar[sim.complexity[j]][g]
    cost = defer_cost(sim, g, next_event_gap(sim))
    for k in sim.waiting:
        sim.deadline[k] = sim.t + 10 * 3600.0
    sim.deadline[j] = sim.t + w + cost + 1.0  # laxity on g one second above the expected deferral: kept
    env.actions.on_advance(sim, True)
    assert g in env.actions.held
    sim.deadline[j] = sim.t + w + cost - 1.0  # one second below: holding g would likely make j miss
    env.actions.on_advance(sim, True)
    assert g not in env.actions.held


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_a_type_at_high_stock_cannot_be_held(params):
    """A hold waits for a better status; none is better than High: the mask is 0 there and the action is refused."""
    from gpu_sched_env.core.errors import InvalidActionError

    env, sim, _ = at_first_decision(params, illegal_action="raise")
    env.actions.held = {}
    kc, g = env.actions.K * env.actions.C, int(sim.fleet.slot_type[0])
    for level, legal_now in ((0, False), (1, True), (2, True)):
        sim.stock[g] = level
        env._observe()  # the mask of the state as it now is
        assert bool(env.action_masks()[kc + g]) == legal_now, level
    sim.stock[g] = 0
    env._observe()
    with pytest.raises(InvalidActionError, match=f"type {g}'s stock status is High"):
        env.step(kc + g)


def test_observation_marks_the_slots_not_held():
    env = CGRSPEnv(design())
    obs, _ = env.reset(seed=1)
    col = env._enc.slot_cols.index("offered")
    idle = np.asarray(env.sim.slot_job) < 0
    np.testing.assert_array_equal(obs["slots"][: env.params.c_max, col], idle)
    g = env.sim.fleet.slot_type[0]
    a = env.actions.K * env.actions.C + g
    if env.action_masks()[a]:
        obs, *_ = env.step(a)
        typ = np.asarray(env.sim.fleet.slot_type)
        free = (np.asarray(env.sim.slot_job) < 0) & ~np.isin(typ, list(env.actions.held))
        np.testing.assert_array_equal(obs["slots"][: env.params.c_max, col], free)


def rule_through_holds(cfg: CGRSPEnvConfig, seed: int) -> tuple[dict, int]:
    """``spt_rescue_defer_exp`` played through joint_hold: hold a type when the rule defers all its idle slots.

    Then the rule's plan on the slots not held (HeuristicAgent, the no-op when nothing of it is doable).
    Returns the day's summary and the number of hold actions taken.
    """
    env = CGRSPEnv(cfg)
    env.reset(seed=seed)
    agent = HeuristicAgent(RULE, env, fallback="wait")
    kc, typ = env.actions.K * env.actions.C, np.asarray(env.sim.fleet.slot_type)
    holds = 0
    while True:
        m, sim = env.action_masks(), env.sim
        deferred = set(deferred_slots(sim.view, "expected"))
        idle = np.asarray(sim.slot_job) < 0
        a = next(
            (
                kc + g
                for g in range(env.actions.T)
                if m[kc + g] and all(int(s) in deferred for s in np.flatnonzero(idle & (typ == g)))
            ),
            None,
        )
        holds += a is not None
        _, _, done, _, info = env.step(agent.action(env) if a is None else a)
        if done:
            return info["summary"], holds


@pytest.mark.parametrize("params", [{}, MARKOV])
def test_the_rule_expressed_through_holds_is_close_to_simulate(params):
    """Measured gap (2026-11-28, hectic seeds 0-1): fresh +0.59 min (1.3 %), Markov D = 900 s 0.00; no misses.

    Seeds 0-9 (docs/cgrsp_env.md): hectic fresh +0.25 min (+0.6 %), D = 900 s 0.00; surge fresh
    −0.02 min, D = 900 s 0.00.

    A hold lasts until the type's status changes or the laxity trigger fires, while the rule
    re-decides at every decision point: the gap is the design's cost to this rule.
    """
    waits, total_holds = [], 0
    for seed in range(2):
        got, holds = rule_through_holds(design("hectic", params), seed)
        want = simulate(RULE, "hectic", seed=seed, **params).summary()
        waits.append((got["mean_wait_min"], want["mean_wait_min"]))
        total_holds += holds
        assert got["miss_pct"] <= want["miss_pct"] + 0.2
    got, want = np.mean(waits, axis=0)
    assert total_holds > 0
    assert abs(got - want) <= 0.03 * want, waits
