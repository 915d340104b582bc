"""One env contract, checked on every id this package registers (small configurations).

The contract (docs/envs.md, *Env contract*): an action is one integer (Python or NumPy, or a
1-element integer array); anything else or an out-of-range action raises ``InvalidActionError``
and leaves the state unchanged, and so does a masked-out action under ``illegal_action="raise"``
(the default substitutes it: ``tests/test_illegal_actions.py``); bad constructor arguments and reset
options raise ``ConfigError``; ``step()`` before ``reset()`` or after the end raises
``ResetNeededError``; render modes ``None``, ``"ansi"``, ``"rgb_array"``; same seed same
episode, different seeds different episodes; ``info["reward_parts"]`` are signed, weighted
contributions that sum to the reward; an env pickled mid-episode continues identically.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import re
import typing

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gpu_sched_env
from gpu_sched_env.core.errors import ConfigError, InvalidActionError, ResetNeededError

IDS = sorted(k for k, s in gym.registry.items() if str(s.entry_point).startswith("gpu_sched_env."))
SMALL = {  # by family: episodes of a few dozen steps
    "CGRSP": {"window": 4, "n_jobs": 10},
    "HGSP": {"n_tasks": 12},
    "LLMServe": {"n_requests": 12},
    "MIG": {"n_jobs": 12},
    "EdgeBatch": {"n_tasks": 6},
}
BAD_KWARGS = {  # by family: constructor arguments that must raise ConfigError, with a word the message names
    "CGRSP": [
        ({"window": 4.0}, "window"),
        ({"c_max": 5.0}, "c_max"),
        ({"n_jobs": 10.0}, "n_jobs"),
        ({"order": "random"}, "order"),
    ],
    "HGSP": [
        ({"n_tasks": 12.0}, "n_tasks"),
        ({"cluster": "huge"}, "cluster"),
        ({"reward_weights": {"speed": 1.0}}, "speed"),
        ({"reward_weights": {"flow": -1.0}}, "flow"),
    ],
    "LLMServe": [({"n_requests": 12.0}, "n_requests"), ({"engine": "fast"}, "engine"), ({"workload": 3}, "workload")],
    "MIG": [
        ({"n_jobs": 12.0}, "n_jobs"),
        ({"poll_interval": 1.0}, "poll_interval"),
        ({"capacities": (2000.0, 1000)}, "capacities"),
        ({"reward_weights": {"speed": 1.0}}, "speed"),
    ],
    "EdgeBatch": [
        ({"n_tasks": 6.0}, "n_tasks"),
        ({"include_head": "yes"}, "include_head"),
        ({"reward_scale_s": 0}, "reward_scale_s"),
    ],
}
# every id is CGRSP-*, HGSP-*, LLMServe-*, MIG-* or EdgeBatch-*
FAMILY = {i: i.split("-")[0] for i in IDS}
CGRSP_IDS = [i for i in IDS if FAMILY[i] == "CGRSP"]


def make(env_id, **kw):
    return gym.make(env_id, **{**SMALL[FAMILY[env_id]], **kw}).unwrapped


def snapshot(env) -> bytes:
    return pickle.dumps(env)


def legal(env) -> np.ndarray:
    return np.flatnonzero(env.action_masks())


def rollout(env, seed, rng_seed=0, max_steps=10_000):
    """(observations, rewards, infos) of one episode under seeded random legal actions."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    traj, rewards, infos = [obs], [], [info]
    for _ in range(max_steps):
        obs, r, term, trunc, info = env.step(int(rng.choice(legal(env))))
        traj.append(obs)
        rewards.append(r)
        infos.append(info)
        if term or trunc:
            return traj, rewards, infos
    raise AssertionError(f"no end within {max_steps} steps")


def flat(obs) -> np.ndarray:
    if isinstance(obs, dict):
        return np.concatenate([np.ravel(obs[k]).astype(np.float64) for k in sorted(obs)])
    return np.ravel(obs).astype(np.float64)


def same_traj(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(flat(x), flat(y)) for x, y in zip(a, b))


def started(env_id, steps=2):
    env = make(env_id)
    env.reset(seed=3)
    for _ in range(steps):
        env.step(int(legal(env)[0]))
    return env


def test_every_registered_id_is_covered():
    assert set(IDS) == set(gpu_sched_env.ENV_IDS)
    assert set(FAMILY.values()) == set(SMALL) == set(BAD_KWARGS)


# ----------------------------------------------------------------------------- actions
BAD_TYPES = [
    0.7,
    1.0,
    np.float32(0),
    np.float64(1.0),
    "0",
    True,
    False,
    np.bool_(True),
    None,
    np.array([0, 0]),
    np.array([[0]]).repeat(2, 1),
    np.array([0.0]),
    np.array([True]),
    np.array([]),
    [0.0],
    [0, 1],
    ["0"],
]


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("bad", BAD_TYPES, ids=lambda v: f"{type(v).__name__}:{v!r}")
def test_non_integer_actions_raise_and_change_nothing(env_id, bad):
    env = started(env_id)
    before = snapshot(env)
    with pytest.raises(InvalidActionError) as e:
        env.step(bad)
    assert repr(bad) in str(e.value)  # names the value ...
    n = env.action_space.n
    assert re.search(rf"\[0, {n - 1}\]", str(e.value))  # ... and what is allowed
    assert snapshot(env) == before


@pytest.mark.parametrize("env_id", IDS)
def test_out_of_range_actions_name_the_range(env_id):
    env = started(env_id)
    n = env.action_space.n
    before = snapshot(env)
    for a in (-1, n, n + 7, np.int64(-3), np.array([n])):
        with pytest.raises(InvalidActionError, match=rf"out of range.*(\[0, {n - 1}\]|0\.\.{n - 1})"):
            env.step(a)
        assert snapshot(env) == before


@pytest.mark.parametrize("env_id", IDS)
def test_masked_out_actions_raise_naming_the_legal_ones(env_id):
    unsplit = {"split": False} if FAMILY[env_id] == "EdgeBatch" else {}  # unsplit: Nanos too small
    env = make(env_id, illegal_action="raise", **unsplit)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(60):
        mask = env.action_masks()
        for a in np.flatnonzero(~mask)[:3]:
            before = snapshot(env)
            with pytest.raises(InvalidActionError, match=rf"action {a} .*illegal.*legal actions"):
                env.step(int(a))
            assert snapshot(env) == before
            seen += 1
        *_, term, _, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term:
            env.reset()
    assert seen > 0  # every env has some illegal action in 60 steps


@pytest.mark.parametrize("env_id", IDS)
def test_a_legal_action_shaped_as_a_batch_is_refused(env_id):
    # np.array([[a]]) is what a batch of one env's actions looks like: refused by the one shared
    # check (core.errors.check_action), not squeezed, and the env is left as it was
    env = started(env_id)
    a = int(legal(env)[0])
    before = snapshot(env)
    for form in (np.array([[a]]), [[a]], np.array([[[a]]])):
        with pytest.raises(InvalidActionError, match=r"shape \(1, 1(, 1)?\)\) is not allowed.*1-element 1-d"):
            env.step(form)
        assert snapshot(env) == before
    env.step(a)  # the same action as an integer is taken


@pytest.mark.parametrize("env_id", IDS)
def test_integer_forms_are_the_same_action(env_id):
    env = started(env_id)
    a = int(legal(env)[-1])
    results = []
    for form in (a, np.int64(a), np.int32(a), np.uint8(a), np.array(a), np.array([a]), [a], (a,)):
        clone = pickle.loads(pickle.dumps(env))
        obs, r, term, trunc, _ = clone.step(form)
        results.append((flat(obs), r, term, trunc))
    for obs, r, term, trunc in results[1:]:
        assert np.array_equal(obs, results[0][0]) and (r, term, trunc) == results[0][1:]


# ----------------------------------------------------------------------------- configuration
@pytest.mark.parametrize("env_id", IDS)
def test_unknown_and_bad_kwargs_raise_config_error(env_id):
    for kw, word in [({"bogus_knob": 1}, "bogus_knob")] + BAD_KWARGS[FAMILY[env_id]]:
        with pytest.raises(ConfigError, match=word):
            make(env_id, **kw)
    with pytest.warns(UserWarning, match="video"), pytest.raises(ConfigError, match=r"render_mode.*ansi.*rgb_array"):
        make(env_id, render_mode="video")  # gymnasium warns, the env refuses


ODD_VALUES = [None, "x", -1, 0, 1.5, [], {}, object(), float("nan"), True]
CGRSP_PARAMS = ("c_max", "n_jobs", "tight_fraction", "alpha1", "arrival_rate")


@pytest.mark.parametrize("env_id", ["CGRSP-v0", "HGSP-v0", "LLMServe-v0", "MIG-v0", "EdgeBatch-v0"])
def test_any_argument_value_is_accepted_or_a_config_error(env_id):
    """Each argument (one at a time) set to odd values: a working env or a ConfigError, nothing else."""
    cls = gym.spec(env_id).entry_point
    mod, name = cls.split(":")
    env_cls = getattr(__import__(mod, fromlist=[name]), name)
    sig = inspect.signature(env_cls.__init__).parameters
    params = [p for p, v in sig.items() if p != "self" and v.kind is not inspect.Parameter.VAR_KEYWORD]
    # the settings are the fields of the env's config object (the type of its `config` argument)
    config_cls = next(
        t for t in typing.get_args(typing.get_type_hints(env_cls.__init__)["config"]) if t is not type(None)
    )
    params += [f.name for f in dataclasses.fields(config_cls) if f.init]
    assert len(params) > 4, params
    params += list(CGRSP_PARAMS) if FAMILY[env_id] == "CGRSP" else []
    for p in params:
        for v in ODD_VALUES:
            try:
                env = env_cls(**{**SMALL[FAMILY[env_id]], p: v})
                env.reset(seed=0)
                env.step(int(legal(env)[0]))
            except ConfigError:
                pass


@pytest.mark.parametrize("kw", [{"slot_types": 1}, {"slot_pattern": None}], ids=["slot_types", "slot_pattern"])
def test_cgrsp_non_sequence_slot_arguments_are_config_errors(kw):
    with pytest.raises(ConfigError, match=next(iter(kw))):
        make("CGRSP-v0", **kw)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("options", [{"bogus": 1}, [1], "x"], ids=["unknown-key", "list", "str"])
def test_bad_reset_options_raise_and_change_nothing(env_id, options):
    env = started(env_id)
    before = snapshot(env)
    with pytest.raises(ConfigError, match="reset options"):
        env.reset(options=options)
    assert snapshot(env) == before


@pytest.mark.parametrize("workloads", ["resnet", [], [3], None])  # unknown names are allowed: average profile
def test_edge_bad_workloads_option_raises_and_changes_nothing(workloads):
    env = started("EdgeBatch-v0")
    before = snapshot(env)
    with pytest.raises(ConfigError, match="workload"):
        env.reset(seed=1, options={"workloads": workloads})
    assert snapshot(env) == before


# ----------------------------------------------------------------------------- episode order
@pytest.mark.parametrize("env_id", IDS)
def test_step_before_reset_and_after_the_end_raise_reset_needed(env_id):
    env = make(env_id)
    with pytest.raises(ResetNeededError, match="reset"):
        env.step(0)
    with pytest.raises(gym.error.ResetNeeded):  # gymnasium's order-enforcing wrapper, through gym.make
        gym.make(env_id, **SMALL[FAMILY[env_id]]).step(0)
    rollout(env, seed=0)
    before = snapshot(env)
    for a in (0, 0.5):
        with pytest.raises(ResetNeededError, match="reset"):
            env.step(a)
    assert snapshot(env) == before
    end = env.action_masks()  # the default (substitute): one documented action, for maskable samplers
    assert end.sum() == 1 and end[-1 if FAMILY[env_id] in ("CGRSP", "MIG") else 0]
    strict = make(env_id, illegal_action="raise")
    rollout(strict, seed=0)
    assert not strict.action_masks().any()  # raise: all False, as before the setting


@pytest.mark.parametrize("env_id", IDS)
def test_step_after_the_end_is_a_runtime_error(env_id):
    """What holds for CGRSP today as well: a RuntimeError that says to call reset()."""
    env = make(env_id)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    rollout(env, seed=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


# ----------------------------------------------------------------------------- render
@pytest.mark.parametrize("env_id", IDS)
def test_render_modes(env_id):
    human = {"human"} if FAMILY[env_id] == "CGRSP" else set()  # CGRSP prints its text snapshot (no pygame)
    assert set(make(env_id).metadata["render_modes"]) == {"ansi", "rgb_array"} | human
    for mode in (None, "ansi", "rgb_array"):
        env = make(env_id, render_mode=mode)
        env.reset(seed=0)
        env.step(int(legal(env)[0]))
        if mode is None:
            with pytest.warns(UserWarning, match="render_mode"):
                assert env.render() is None
            continue
        out = env.render()
        if mode == "ansi":
            assert isinstance(out, str) and out.strip()
        else:
            assert isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
            assert (out != 255).any()  # something was drawn


# ----------------------------------------------------------------------------- seeding, rewards
@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_episode_different_seed_different_episode(env_id):
    env = make(env_id)
    a_obs, a_r, _ = rollout(env, seed=11)
    b_obs, b_r, _ = rollout(env, seed=11)
    c_obs, _, _ = rollout(make(env_id), seed=12)
    assert same_traj(a_obs, b_obs) and a_r == b_r
    assert not same_traj(a_obs, c_obs)


@pytest.mark.parametrize("env_id", IDS)
def test_reward_parts_are_signed_weighted_and_sum_to_the_reward(env_id):
    env = make(env_id)
    _, rewards, infos = rollout(env, seed=5)
    for r, info in zip(rewards, infos[1:]):
        parts = info["reward_parts"]
        assert parts and sum(parts.values()) == pytest.approx(r, rel=1e-12, abs=1e-12)
        assert all(v <= 0.0 for v in parts.values())  # every part is a cost here
        for k, raw in info["reward_raw"].items():
            weight = getattr(env, "reward_weights", {}).get(k, 1.0)  # LLMServe: one part, weight 1
            assert parts[k] == pytest.approx(-weight * raw * getattr(env, "reward_scale", 1.0))


# ----------------------------------------------------------------------------- pickling, checker
@pytest.mark.parametrize("env_id", IDS)
def test_pickled_mid_episode_continues_identically(env_id):
    env = started(env_id, steps=3)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.action_space.attached
    rng = np.random.default_rng(4)
    while True:
        np.testing.assert_array_equal(env.action_masks(), clone.action_masks())
        a = int(rng.choice(legal(env)))
        assert clone.action_masks()[clone.action_space.sample()]  # samples the clone's own mask
        o1, r1, t1, _, _ = env.step(a)
        o2, r2, t2, _, _ = clone.step(a)
        assert np.array_equal(flat(o1), flat(o2)) and (r1, t1) == (r2, t2)
        if t1:
            break


def test_llm_default_workload_fails_gymnasium_checker_step_determinism_when_strict():
    """gymnasium's check_env samples its step-determinism action *before* the seeded reset.

    On the default mixed workload the first decision has one startable request, so the
    action drawn from the previous state's mask is illegal there and the strict env raises
    (the default, substituting env passes: ``tests/test_illegal_actions.py``).
    """
    with pytest.raises(InvalidActionError, match="illegal"):
        check_env(make("LLMServe-v0", illegal_action="raise"))


@pytest.mark.parametrize("env_id", IDS)
def test_env_checker(env_id):
    # LLMServe: the spec's reference workload, whose 20 requests are all startable at t = 0
    kw = {"workload": "discriminating"} if FAMILY[env_id] == "LLMServe" else SMALL[FAMILY[env_id]]
    check_env(gym.make(env_id, **kw).unwrapped)
