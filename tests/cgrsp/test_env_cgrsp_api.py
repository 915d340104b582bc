"""CGRSP-v0 env contract: registration, checker, validation, actions, a hand-computed day."""

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gpu_sched_env
from gpu_sched_env._registration import CGRSP_DAY_PRESETS
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.params import DAY_TYPES, GPUType
from gpu_sched_env.core.errors import ConfigError, InvalidActionError

CGRSP_IDS = ["CGRSP-v0"] + [f"CGRSP-{d}-v0" for d in CGRSP_DAY_PRESETS]


# ----------------------------------------------------------------------------- registration
def test_make_without_prior_import_in_fresh_interpreter():
    code = (
        "import gymnasium as gym\n"
        "env = gym.make('gpu_sched_env:CGRSP-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, env.unwrapped.day, info['action_mask'].sum() > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CGRSPEnv", "hectic", "True"]


def test_registration_is_idempotent_and_lists_every_cgrsp_id():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-registering would warn "Overriding environment"
        ids_a = gpu_sched_env.register_envs()
        ids_b = gpu_sched_env.register_envs()
    assert ids_a == ids_b
    for env_id in CGRSP_IDS:
        assert env_id in ids_a and env_id in gym.registry
        assert gym.registry[env_id].entry_point == "gpu_sched_env.cgrsp.env:CGRSPEnv"


@pytest.mark.parametrize("day", CGRSP_DAY_PRESETS)
def test_day_preset_ids_set_the_day(day):
    env = gym.make(f"CGRSP-{day}-v0")
    assert env.unwrapped.day == day
    assert env.unwrapped.params.n_jobs == DAY_TYPES[day]["n_jobs"]
    assert env.unwrapped.params.arrival_rate == DAY_TYPES[day]["arrival_rate"]
    assert env.spec.max_episode_steps is None  # episodes always end on their own (≤ 3N steps)


@pytest.mark.parametrize("env_id", CGRSP_IDS)
def test_gymnasium_env_checker(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped)  # also renders both declared render modes through env.spec


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs, names",
    [
        ({"bogus": 1}, ["bogus"]),
        ({"c_max": 0}, ["c_max"]),
        ({"day": "weekend"}, ["day", "weekend"]),
        ({"window": 0}, ["window"]),
        ({"window": 2.5}, ["window"]),
        ({"order": "random"}, ["order", "deadline"]),
        ({"reward_weights": {"speed": 1.0}}, ["speed", "wait"]),
        ({"reward_weights": {"wait": -1.0}}, ["reward_weights.wait"]),
        ({"reward_weights": [1, 2]}, ["reward_weights"]),
        ({"reward_scale": 0.0}, ["reward_scale"]),
        ({"render_mode": "rgb"}, ["render_mode", "rgb", "human"]),
        ({"tight_fraction": 1.5}, ["tight_fraction"]),
    ],
)
def test_invalid_constructor_kwargs_raise_config_error_naming_the_key(kwargs, names):
    with pytest.raises(ConfigError) as e:
        CGRSPEnv(**kwargs)
    for n in names:
        assert n in str(e.value)


def test_make_with_unknown_kwarg_raises_config_error():
    with pytest.raises(ConfigError, match="colour") as e:
        gym.make("CGRSP-v0", colour="red")
    for name in ("window", "action_mode", "reward", "params", "render_mode", "c_max"):  # the settings are listed too
        assert name in str(e.value)


def test_params_is_a_keyword_of_make():
    env = gym.make("CGRSP-v0", params={})
    assert env.unwrapped.params.c_max == 5
    env = gym.make("CGRSP-v0", params={"c_max": 3}, window=2, n_jobs=20)
    assert (env.unwrapped.params.c_max, env.unwrapped.params.n_jobs, env.unwrapped.window) == (3, 20, 2)
    with pytest.raises(ConfigError, match="params = 5 must be a mapping"):
        gym.make("CGRSP-v0", params=5)
    with pytest.raises(ConfigError, match="c_maxx"):
        gym.make("CGRSP-v0", params={"c_maxx": 3})


def test_human_render_mode_prints_the_text_snapshot(capsys):
    env = gym.make("CGRSP-v0", render_mode="human", n_jobs=6)  # no pygame wrapper, no pygame error
    assert env.unwrapped.render_mode == "human"
    env.reset(seed=0)
    first = capsys.readouterr().out
    assert "stock:" in first and "window" in first
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert "stock:" in capsys.readouterr().out
    assert env.render() is None and "stock:" in capsys.readouterr().out


def test_reset_options_are_validated():
    env = CGRSPEnv(day="quiet")
    env.reset(seed=0, options={})
    with pytest.raises(ConfigError, match="fast_forward"):
        env.reset(seed=0, options={"fast_forward": True})


def test_spaces_follow_window_and_fleet():
    env = CGRSPEnv(day="normal", window=7, c_max=3)
    assert env.action_space.n == 7 * 3 + 1
    sp = env.observation_space
    assert sp["jobs"].shape == (7, 7 + 2 * 4)
    assert sp["slots"].shape == (3, 4 + 8)  # type one-hot, 7 state columns, offered
    assert sp["stock"].shape == (4, 3)
    assert sp["action_mask"].n == 22
    # documented bounds: laxity ±8 h, wait ≤ 24 h, time-to-free ≤ (3900 + 100.9)/3600 h
    assert sp["jobs"].high[0, 6] == 24.0 and sp["jobs"].low[0, 7] == -8.0
    assert sp["slots"].high[0, 4 + 2] == pytest.approx((3900 + 100.9) / 3600)


# ----------------------------------------------------------------------------- actions
def test_forbidden_actions_raise_with_a_clear_message():
    env = CGRSPEnv(day="hectic", window=4, illegal_action="raise")
    obs, info = env.reset(seed=1)
    mask = info["action_mask"]
    assert mask.dtype == bool and np.array_equal(mask, obs["action_mask"].astype(bool))
    assert np.array_equal(mask, env.action_masks())
    # first decision: one job waits, all 5 slots idle → positions 1..3 are empty
    assert mask[:5].all() and not mask[5:20].any() and mask[20]
    with pytest.raises(InvalidActionError, match="window position 1 is empty"):
        env.step(5)
    with pytest.raises(InvalidActionError, match="out of range"):
        env.step(21)
    with pytest.raises(InvalidActionError, match="out of range"):
        env.step(-1)
    with pytest.raises(InvalidActionError, match="one integer"):
        env.step(1.0)
    with pytest.raises(InvalidActionError, match="one integer"):
        env.step(np.array([1, 2]))
    env.step(np.array([2]))  # a 1-element integer array (SB3 style) is fine
    # the state did not change on the rejected actions: job 0 went to slot 2
    assert env.sim.slot_job[2] == 0


def test_busy_slot_and_stalling_wait_are_forbidden():
    env = CGRSPEnv(day="normal", window=3, illegal_action="raise")
    env.reset(seed=0)
    # drive until some slot is busy at a decision point
    while True:
        mask = env.action_masks()
        busy = [s for s in range(5) if env.sim.slot_job[s] >= 0]
        if busy and mask[:5].any():
            break
        env.step(int(np.flatnonzero(mask)[0]))
    with pytest.raises(InvalidActionError, match=f"slot {busy[0]} is busy"):
        env.step(busy[0])
    # quiet day: the last job arrives after all others are done → nothing left to happen
    env = CGRSPEnv(day="quiet", window=2, illegal_action="raise")
    env.reset(seed=3)
    while env.sim.has_future_event():
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert env.sim.waiting and not env.action_masks()[-1]
    with pytest.raises(InvalidActionError, match="wait is illegal"):
        env.step(env.action_space.n - 1)


def test_step_after_the_end_raises():
    env = CGRSPEnv(day="quiet")
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, trunc, info = env.step(env.action_space.sample())
        assert not trunc
    assert np.flatnonzero(env.action_masks()).tolist() == [env.wait_action]  # the end's mask: wait alone
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        CGRSPEnv(day="quiet").step(0)


def test_decode_and_encode_round_trip():
    env = CGRSPEnv(day="normal", window=4)
    env.reset(seed=2)
    a = int(np.flatnonzero(env.action_masks())[0])
    job, slot = env.decode(a)
    assert env.encode(job, slot) == a
    assert env.decode(env.action_space.n - 1) is None
    with pytest.raises(InvalidActionError, match="not in the window"):
        env.encode(10**6, 0)


# ----------------------------------------------------------------------------- hand-computed day
FAST = GPUType("fast", 100, 10, 3.6, (10.0, 20.0, 30.0), 1.0)  # 0.001 $/s, always High stock


def test_hand_computed_two_job_day():
    """One slot, zero delays, σ = 0: job 1 waits for job 0; rewards and features by hand."""
    env = CGRSPEnv(
        day="quiet",
        window=2,
        n_jobs=2,
        arrival_rate=1.0,
        c_max=1,
        gpu_types=(FAST,),
        slot_pattern=("fast",),
        runtime_sigma=0.0,
        tod_bands=((0.0, 1.0),),
        p_high_cap=1.0,
        p_medium_cap=1.0,
        delay_high=(0.0, 0.0),
        delay_medium=(0.0, 0.0),
        delay_low=(0.0, 0.0),
        tight_fraction=0.0,
        complexity_probs=(1.0, 0.0, 0.0),
        reward_scale=1.0,
    )
    obs, info = env.reset(seed=4)
    s0, s1 = env.sim.submit
    assert s1 - s0 < 10.0  # job 1 arrives while job 0 runs (λ = 1/s, W̄ = 10 s)
    # job 0 waits alone; wait is legal because job 1 is still to arrive
    assert env.sim.t == s0 and list(info["action_mask"]) == [True, False, True]
    obs, r, done, _, info = env.step(0)  # job 0 → slot 0; the env advances to t = s0 + 10
    assert env.sim.t == pytest.approx(s0 + 10.0)
    assert info["reward_raw"]["wait"] == pytest.approx(s0 + 10.0 - s1)  # job 1 waited
    assert info["reward_raw"]["cost"] == pytest.approx(10.0 * 0.001)
    assert info["reward_raw"]["run"] == pytest.approx(10.0 * 1 / 1)  # run time × (queue of 1) / C
    assert info["reward_raw"]["miss"] == 0
    assert r == pytest.approx(-(1.0 * (s0 + 10.0 - s1) + 1.0 * 0.01))
    assert sum(info["reward_parts"].values()) == pytest.approx(r)
    row = obs["jobs"][0]
    assert row[0] == 1 and row[1] == 0 and list(row[2:5]) == [1, 0, 0]
    assert row[6] == pytest.approx((s0 + 10.0 - s1) / 3600, rel=1e-5)  # wait so far [h]
    lax = (s1 + 28800.0 - (s0 + 10.0) - 10.0) / 3600
    assert row[7] == pytest.approx(lax, rel=1e-5)
    assert row[5] == pytest.approx(1.0)  # critical ratio ~2880 clipped to 10 → 1
    assert obs["slots"][0, 1] == 0.0  # idle
    obs, r, done, _, info = env.step(0)
    assert done and info["reward_raw"] == {
        "wait": 0.0,
        "miss": 0.0,
        "cost": pytest.approx(0.01),
        "waste": 0.0,
        "run": pytest.approx(10.0),
        "delay": 0.0,
        "excess_run": 0.0,  # one class (complexity_probs 1, 0, 0): its mean run time is the mix's
        "order_regret": 0.0,  # and no other class waits
    }
    assert info["summary"]["mean_wait_min"] == pytest.approx((s0 + 10.0 - s1) / 2 / 60)


def test_window_by_class_holds_the_earliest_deadline_job_of_each_class():
    env = CGRSPEnv(day="hectic", n_jobs=300, window=3, window_by="class", action_mode="slot")
    assert env.config.window_by == "class" and env.action_space.n == 4
    obs, _ = env.reset(seed=5)
    sim, seen = env.sim, 0
    for k in range(250):
        win = env.window_jobs
        waiting = list(sim.waiting)
        classes = sorted({sim.complexity[j] for j in waiting})
        # one job per class present, each the earliest deadline (ties: submit) of its class
        assert sorted(sim.complexity[j] for j in win) == classes
        for j in win:
            same = [i for i in waiting if sim.complexity[i] == sim.complexity[j]]
            assert j == min(same, key=lambda i: (sim.deadline[i], sim.submit[i]))
        assert [sim.deadline[j] for j in win] == sorted(sim.deadline[j] for j in win)  # canonical order
        mask = env.action_masks()
        assert list(mask[: win.size]) == [True] * win.size and not mask[win.size : 3].any()
        seen += len(classes) == 3
        _, _, done, _, _ = env.step(k % win.size if win.size else env.wait_action)
        if done:
            break
    assert seen > 50  # the window was full (all three classes waiting) most of the time
    with pytest.raises(ConfigError, match="window_by = 'kind'.*order, class"):
        CGRSPEnv(window_by="kind")


def _defer_low_day(hold, seed, **params):
    """EDF's job (window 1) on every offered slot, left idle while its type's stock is Low."""
    env = CGRSPEnv(
        day="hectic", action_mode="slot", window=1, hold=hold, **params
    )  # the whole day: Low only from 09:00 UTC
    env.reset(seed=seed)
    done, noops = False, 0
    while not done:
        sim, mask = env.sim, env.action_masks()
        low = sim.stock[sim.fleet.slot_type[env.offered_slot]] == 2
        a = env.wait_action if (low and mask[env.wait_action]) else 0
        noops += a == env.wait_action
        _, _, done, _, info = env.step(a)
    return info["summary"], noops


@pytest.mark.parametrize("stock", [{}, {"stock_process": "markov", "stock_dwell_s": 900.0}])
def test_hold_stock_asks_once_per_low_spell_and_plays_the_same_day(stock):
    # a rule that leaves Low-stock slots idle plays the identical day whether the env asks
    # again at every event (hold="event") or only once the status has changed (hold="stock")
    event, n_event = _defer_low_day("event", 3, **stock)
    held, n_held = _defer_low_day("stock", 3, **stock)
    assert held == event
    assert 0 < n_held < n_event
    if stock:  # a persistent status: far fewer questions
        assert n_held * 5 < n_event


def test_a_held_slot_comes_back_when_its_stock_changes_and_the_day_never_stalls():
    env = CGRSPEnv(
        day="hectic",
        n_jobs=200,
        action_mode="slot",
        window=2,
        hold="stock",
        stock_process="markov",
        stock_dwell_s=600.0,
    )
    env.reset(seed=1)
    sim, done, released = env.sim, False, 0
    while not done:
        held_before = dict(env.actions.held)
        mask = env.action_masks()
        # leave every slot idle whenever that is legal: only the no-stall rule ends the day
        _, _, done, _, _ = env.step(env.wait_action if mask[env.wait_action] else 0)
        if done:
            break
        for s, lv in held_before.items():
            if s not in env.actions.held and sim.slot_job[s] < 0 and sim.has_future_event():
                assert sim.stock[sim.fleet.slot_type[s]] != lv  # let go only when the status changed
                released += 1
        assert env.offered_slot not in env.actions.held
    assert sim.n_completed == sim.n_jobs and released > 0
    with pytest.raises(ConfigError, match="hold = 'stock' needs action_mode = 'slot'"):
        CGRSPEnv(hold="stock", action_mode="joint")
    with pytest.raises(ConfigError, match="hold = 'forever'.*event, stock"):
        CGRSPEnv(hold="forever", action_mode="slot")
