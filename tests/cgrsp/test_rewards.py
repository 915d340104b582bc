"""Reward presets from one source of truth, lost capacity, and the shaping potentials (each able to fail)."""

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_agents.rl.envs import (
    env_config,
)
from gpu_sched_agents.rl.train import validate
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.rewards import MISS_AS_WAIT_S, REWARD_PARTS, summary_objective
from gpu_sched_env.core.errors import ConfigError
from tests.hydra_conf import cfg_for


# ----------------------------------------------------------------------------- one source of truth
@pytest.mark.parametrize("alpha2", [10.0, 50.0])
def test_alpha2_changes_what_the_agent_is_trained_on(alpha2):
    cfg = cfg_for("env.reward=study", f"+env.params.alpha2={alpha2}", "env.shaping=none")
    env = CGRSPEnv(validate(cfg))
    assert env.reward_weights["miss"] == alpha2 == env.objective_weights["miss"]
    agent = HeuristicAgent("fifo", env)
    obs, _ = env.reset(seed=3)
    ret, done = 0.0, False
    while not done:
        obs, r, done, _, info = env.step(agent.predict(obs)[0])
        ret += r
    raw = info["episode_raw"]
    assert raw["miss"] > 0
    assert ret == pytest.approx(-(raw["wait"] + alpha2 * raw["miss"] + raw["cost"]) / 3600, rel=1e-9)
    assert summary_objective(info["summary"], env.objective_weights) == pytest.approx(-ret * 3600, rel=1e-9)


def test_the_config_holds_no_copy_of_the_weights():
    cfg = cfg_for()
    assert dict(cfg.env.reward_weights) == {}
    config = env_config(cfg_for("+env.reward_weights.miss=7200"))
    assert CGRSPEnv(config).reward_weights["miss"] == 7200.0


def test_reward_presets():
    none = dict.fromkeys(REWARD_PARTS, 0.0)  # every part a preset does not name weighs 0
    p = CGRSPEnv(day="normal", alpha1=2.0, alpha2=30.0)
    assert p.reward_weights == {**none, "wait": 2.0, "miss": 30.0, "cost": 1.0}
    d = CGRSPEnv(day="normal", reward="deadline", alpha1=2.0)
    assert d.reward_weights == {**none, "wait": 2.0, "miss": 2.0 * MISS_AS_WAIT_S, "cost": 1.0}
    c = CGRSPEnv(day="normal", reward="capacity")
    assert c.reward_weights["wait"] == 0.0 and c.reward_weights["waste"] == 1.0 and c.reward_weights["run"] == 0.0
    assert c.objective_weights == CGRSPEnv(day="normal", reward="deadline").reward_weights
    o = CGRSPEnv(day="normal", reward="occupancy", alpha1=2.0)
    assert o.reward_weights == {**none, "miss": 2.0 * MISS_AS_WAIT_S, "cost": 1.0, "waste": 2.0, "run": 2.0}
    assert o.objective_weights == CGRSPEnv(day="normal", reward="deadline", alpha1=2.0).reward_weights
    # an explicit price of a miss holds for the reward and for what the episode is judged on
    m = CGRSPEnv(day="normal", reward="occupancy", reward_weights={"miss": 14400.0, "run": 0.5})
    assert m.reward_weights["miss"] == m.objective_weights["miss"] == 14400.0
    assert m.reward_weights["run"] == 0.5 and m.objective_weights["run"] == 0.0 and m.objective_weights["wait"] == 1.0
    with pytest.raises(ConfigError, match="reward"):
        CGRSPEnv(reward="fast")


# ----------------------------------------------------------------------------- shaping and waste
def _episode(env, policy="edf", seed=1):
    agent = HeuristicAgent(policy, env)
    obs, _ = env.reset(seed=seed)
    parts, done = {}, False
    while not done:
        obs, r, done, _, info = env.step(agent.predict(obs)[0])
        assert sum(info["reward_parts"].values()) == pytest.approx(r, abs=1e-9)
        for k, v in info["reward_parts"].items():
            parts[k] = parts.get(k, 0.0) + v
    return parts, info


@pytest.mark.parametrize(
    "action_mode, reward, shaping",
    [
        ("joint", "deadline", "queue"),
        ("slot", "deadline", "queue"),
        ("slot", "occupancy", "backlog"),
        ("slot", "occupancy", "backlog_risk"),
    ],
)
def test_queue_shaping_telescopes_to_zero_and_leaves_the_other_parts_alone(action_mode, reward, shaping):
    kw = dict(day="hectic", n_jobs=150, window=150, action_mode=action_mode, reward=reward)
    env = CGRSPEnv(shaping=shaping, **kw)
    shaped, info = _episode(env)
    plain, _ = _episode(CGRSPEnv(shaping="none", **kw))
    # Φ(end) − Φ(start): 0 for the queue's Φ (no queue at either end); for the backlog's, the
    # whole day's run time owed at the start, W̄·N(N − 1)/(2C), weighted and scaled
    n, fl = env.sim.n_jobs, env.sim.fleet
    # (the deadline risk adds nothing: no job waits at either end)
    want = (
        env.reward_scale * env.reward_weights["waste"] * fl.mean_wbar * n * (n - 1) / (2 * len(fl.slot_type))
        if shaping.startswith("backlog")
        else 0.0
    )
    assert abs(shaped.pop("shaping") - want) < 1e-6 * sum(abs(v) for v in plain.values())
    assert shaped == pytest.approx(plain, rel=1e-12)


def test_a_low_stock_dispatch_is_charged_at_once_under_queue_shaping():
    env = CGRSPEnv(day="hectic", action_mode="slot", reward="deadline", shaping="queue")
    env.reset(seed=0)
    seen = {}
    for _ in range(3000):
        sim = env.sim
        level = sim.stock[sim.fleet.slot_type[env.offered_slot]]
        mask = env.action_masks()
        _, r, done, _, info = env.step(0 if mask[0] else env.wait_action)
        if mask[0]:
            seen.setdefault(level, []).append(info["reward_parts"]["shaping"])
        if done or len(seen.get(2, [])) >= 5:
            break
    assert np.mean(seen[2]) < -10 * abs(np.mean(seen[0]))  # Low commits ~1 h of a slot: far costlier


def test_waste_books_lost_capacity_at_the_queue_exchange_rate():
    """A dispatch that advances no time books its provisioning delay × q/C; a *leave idle* that
    advances time without a dispatch books idle slots × Δt × q/C (both cases must occur). A
    dispatch's ``excess_run`` is its class's mean run time on the slot's type above the class
    mix's, at q/C (negative for a short class, positive for a long one: both must occur)."""
    env = CGRSPEnv(day="hectic", n_jobs=200, reward="capacity", action_mode="slot")
    env.reset(seed=2)
    p = env.sim.params
    C = p.c_max
    checked = {"dispatch": 0, "idle": 0, "earns": 0, "pays": 0, "regret": 0}
    for k in range(400):
        mask = env.action_masks()
        q, idle, slot = len(env.sim.waiting), env.sim.n_idle, env.offered_slot
        a = env.wait_action if (k % 3 == 2 and mask[env.wait_action]) else (0 if mask[0] else env.wait_action)
        _, _, done, _, info = env.step(a)
        waste, run_part = info["reward_raw"]["waste"], info["reward_raw"]["run"]
        if a == 0 and info["dt"] == 0:
            start, run = env.sim.realised(env.sim.slot_job[slot])
            assert waste == pytest.approx((start - env.sim.t) * q / C)
            assert run_part == pytest.approx(run * q / C)  # its run time, at the same rate
            assert info["reward_raw"]["delay"] == pytest.approx(
                start - env.sim.t
            )  # its own provisioning, at face value
            job, g = env.sim.slot_job[slot], env.sim.fleet.slot_type[slot]
            w = p.gpu_types[g].mean_runtime_s
            excess = w[env.sim.workload.complexity[job]] - sum(pc * wc for pc, wc in zip(p.complexity_probs, w))
            assert info["reward_raw"]["excess_run"] == pytest.approx(excess * q / C)
            checked["earns" if excess < 0 else "pays"] += q > 0
            # order_regret: against the shortest class waiting with it (the queue before the dispatch)
            waiting = [env.sim.workload.complexity[k] for k in env.sim.waiting] + [env.sim.workload.complexity[job]]
            regret = w[env.sim.workload.complexity[job]] - min(w[c] for c in waiting)
            assert info["reward_raw"]["order_regret"] == pytest.approx(regret * q / C)
            checked["regret"] += regret > 0
            checked["dispatch"] += 1
        elif a == env.wait_action and info["dt"] > 0 and q:
            assert waste == pytest.approx(idle * info["dt"] * q / C)
            assert run_part == 0.0 and info["reward_raw"]["delay"] == 0.0 == info["reward_raw"]["excess_run"]
            assert info["reward_raw"]["order_regret"] == 0.0
            checked["idle"] += 1
        if done:
            break
    assert min(checked.values()) > 0, checked


def test_backlog_shaping_hands_back_the_run_time_at_a_dispatch_and_ignores_arrivals():
    """Under ``occupancy`` a dispatch is charged (delay + run)·q/C; ``backlog`` hands back
    W̄·(b − 1)/C (b = the day's jobs not yet dispatched); a step without a dispatch gets none."""
    env = CGRSPEnv(day="hectic", n_jobs=300, action_mode="slot", window=1, reward="occupancy", shaping="backlog")
    env.reset(seed=3)
    C, w_mean, scale = env.sim.params.c_max, env.sim.fleet.mean_wbar, env.reward_scale
    checked = {"dispatch": 0, "idle": 0}
    for k in range(600):
        b = env.sim.n_jobs - len(env.sim.dispatched)
        mask = env.action_masks()
        dispatch = mask[0] and (k % 4 or not mask[env.wait_action])
        _, _, done, _, info = env.step(0 if dispatch else env.wait_action)
        if done:
            break
        if dispatch:  # b → b − 1, whatever arrived while the env advanced
            assert info["reward_parts"]["shaping"] == pytest.approx(scale * w_mean * (b - 1) / C)
            checked["dispatch"] += 1
        elif info["dt"] > 0:  # time passed (arrivals, completions), nothing dispatched
            assert info["reward_parts"]["shaping"] == 0.0
            checked["idle"] += 1
    assert min(checked.values()) > 20, checked


def test_deadline_risk_rises_over_the_last_hour_of_laxity_and_is_lifted_at_dispatch():
    from gpu_sched_env.cgrsp.rewards import RISK_HORIZON_S, DeadlineRisk

    env = CGRSPEnv(day="hectic", n_jobs=300, action_mode="slot", window=1, reward="occupancy", shaping="backlog_risk")
    env.reset(seed=4)
    sim = env.sim
    risk = DeadlineRisk(sim)
    e = sim.fleet.fastest_wbar

    def by_hand(t):
        return -sum(
            min(1.0, max(0.0, (t - (sim.deadline[j] - e[sim.complexity[j]]) + RISK_HORIZON_S) / RISK_HORIZON_S))
            for j in sim.waiting
        )

    lifted = 0
    for _ in range(400):  # leave slots idle often, so that tight jobs come within an hour of their deadline
        mask = env.action_masks()
        before = risk(sim)
        assert before == pytest.approx(by_hand(sim.t))
        a = env.wait_action if (mask[env.wait_action] and sim.t % 3 < 2) else 0
        if a == 0:
            j = int(env.window_jobs[0])
            x = sim.deadline[j] - e[sim.complexity[j]]
            r_j = min(1.0, max(0.0, (sim.t - x + RISK_HORIZON_S) / RISK_HORIZON_S))
            t = sim.t
            env.step(a)
            if sim.t == t:  # same instant: the dispatch lifts exactly that job's risk
                assert risk(sim) == pytest.approx(before + r_j)
                lifted += r_j > 0
        else:
            env.step(a)
        if env.done:
            break
    assert lifted > 0


# ----------------------------------------------------------------------------- one table of parts and presets
def test_presets_are_weight_tables_and_the_rest_is_derived():
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.rewards import (
        OBJECTIVE_OF,
        PARTS,
        PRESETS,
        REWARD_PARTS,
        REWARD_PRESETS,
        SHAPING_PART,
    )

    p = make_params("hectic", alpha1=2.0, alpha2=30.0)
    assert REWARD_PARTS == tuple(PARTS)
    assert set(REWARD_PRESETS) == set(OBJECTIVE_OF) == set(SHAPING_PART) == set(PRESETS)
    # the values the five hand-kept tables held before they were generated
    assert REWARD_PRESETS["study"](p) == {
        "wait": 2.0,
        "miss": 30.0,
        "cost": 1.0,
        "waste": 0.0,
        "run": 0.0,
        "delay": 0.0,
        "excess_run": 0.0,
        "order_regret": 0.0,
    }
    assert REWARD_PRESETS["deadline"](p) == {
        "wait": 2.0,
        "miss": 2.0 * MISS_AS_WAIT_S,
        "cost": 1.0,
        "waste": 0.0,
        "run": 0.0,
        "delay": 0.0,
        "excess_run": 0.0,
        "order_regret": 0.0,
    }
    assert REWARD_PRESETS["capacity"](p) == {
        "wait": 0.0,
        "miss": 2.0 * MISS_AS_WAIT_S,
        "cost": 1.0,
        "waste": 2.0,
        "run": 0.0,
        "delay": 0.0,
        "excess_run": 0.0,
        "order_regret": 0.0,
    }
    assert REWARD_PRESETS["occupancy"](p) == {
        "wait": 0.0,
        "miss": 2.0 * MISS_AS_WAIT_S,
        "cost": 1.0,
        "waste": 2.0,
        "run": 2.0,
        "delay": 0.0,
        "excess_run": 0.0,
        "order_regret": 0.0,
    }
    assert OBJECTIVE_OF == {"study": "study", "deadline": "deadline", "capacity": "deadline", "occupancy": "deadline"}
    assert SHAPING_PART == {"study": "wait", "deadline": "wait", "capacity": "waste", "occupancy": "waste"}


def test_a_weighted_part_a_summary_lacks_is_refused_not_ignored():
    summary = {"mean_wait_min": 10.0, "completed": 6, "miss_pct": 50.0, "n_jobs": 6, "cost_usd": 2.0}
    base = {"wait": 1.0, "miss": 100.0, "cost": 1.0}
    assert summary_objective(summary, base) == 10.0 * 60.0 * 6 + 100.0 * 3 + 2.0
    with pytest.raises(ConfigError, match="objective weight waste = 0.5.*does not hold 'waste'"):
        summary_objective(summary, base | {"waste": 0.5})
    assert summary_objective(summary, base | {"waste": 0.0}) == summary_objective(summary, base)  # weight 0: not needed
    with pytest.raises(ConfigError, match="bogus"):
        summary_objective(summary, base | {"bogus": 1.0})


def test_a_new_part_in_a_preset_shows_in_the_weights(monkeypatch):
    from gpu_sched_env.cgrsp import rewards
    from gpu_sched_env.cgrsp.params import make_params

    monkeypatch.setitem(
        rewards.PRESETS, "with_delay", rewards.Preset({**rewards.PRESETS["deadline"].weights, "delay": (0.5, "alpha1")})
    )
    w = rewards.reward_weights(make_params("hectic"), "with_delay")
    assert w["delay"] == 0.5 and w["wait"] == 1.0
    assert rewards.PRESETS["with_delay"].shaping_part == "wait"
