"""Every registered env survives a refused call: after a refused ``reset`` or ``step`` it plays on as if never asked.

Through ``gym.make`` (gymnasium's ``PassiveEnvChecker`` and ``OrderEnforcing`` around the env, and
the package's ``CheckedReset`` outside them): the checker marks its first reset checked before it
calls the env, so a first reset the env refused used to break every later ``step``
(``TypeError: cannot unpack non-iterable NoneType``). Each test compares the env that refused
something with a fresh one that never was asked: the same observations, rewards and masks.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gpu_sched_env
from gpu_sched_env.core.errors import ConfigError, InvalidActionError
from tests.test_env_contract import SMALL  # by family: episodes of a few dozen steps

IDS = list(gpu_sched_env.ENV_IDS)
BAD_RESETS = [  # (reset keywords, a word the message names); every env refuses these before anything changes
    ({"seed": -1}, "seed"),
    ({"seed": 1.5}, "seed"),
    ({"seed": 0, "options": {"bogus": 1}}, "bogus"),
    ({"seed": 0, "options": ["bogus"]}, "mapping"),
]


def make(env_id: str, **kw) -> gym.Env:
    return gym.make(env_id, **SMALL[env_id.split("-")[0]], **kw)


def legal(env: gym.Env) -> int:
    return int(np.flatnonzero(env.unwrapped.action_masks())[0])


def flat(x) -> np.ndarray:
    if isinstance(x, dict):
        return np.concatenate([np.ravel(x[k]).astype(np.float64) for k in sorted(x)])
    return np.ravel(x).astype(np.float64)


def play(env: gym.Env, first: tuple, steps: int = 5) -> list[tuple]:
    """``first`` (the reset's obs and info), then up to ``steps`` legal steps: (obs, reward, done, mask) each."""
    obs, _ = first
    return [(flat(obs), 0.0, False, env.unwrapped.action_masks().copy()), *more(env, steps)]


def more(env: gym.Env, steps: int = 5) -> list[tuple]:
    """Up to ``steps`` legal steps from where ``env`` is: (obs, reward, done, mask) each."""
    out = []
    for _ in range(steps):
        obs, r, term, trunc, _ = env.step(legal(env))
        out.append((flat(obs), float(r), bool(term or trunc), env.unwrapped.action_masks().copy()))
        if term or trunc:
            break
    return out


def same(a: list[tuple], b: list[tuple]) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x[0], y[0]) and x[1] == y[1] and x[2] == y[2] and np.array_equal(x[3], y[3])
        for x, y in zip(a, b)
    )


def test_every_registered_id_is_covered():
    assert set(IDS) == {k for k, s in gym.registry.items() if str(s.entry_point).startswith("gpu_sched_env.")}
    assert {i.split("-")[0] for i in IDS} == set(SMALL)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("bad, word", BAD_RESETS, ids=lambda v: repr(v))
def test_a_refused_first_reset_leaves_the_env_usable(env_id, bad, word):
    env = make(env_id)
    with pytest.raises(ConfigError, match=word) as e:
        env.reset(**bad)
    assert "\n" not in str(e.value)
    got = play(env, env.reset(seed=0))
    assert len(got) > 1 and same(got, _fresh(env_id))


def _fresh(env_id: str) -> list[tuple]:
    env = make(env_id)
    return play(env, env.reset(seed=0))


@pytest.mark.parametrize("env_id", IDS)
def test_refused_resets_mid_episode_change_nothing(env_id):
    env, ref = make(env_id), make(env_id)
    a, b = env.reset(seed=3), ref.reset(seed=3)
    assert np.array_equal(flat(a[0]), flat(b[0]))
    env.step(legal(env))
    ref.step(legal(ref))
    for bad, word in BAD_RESETS:
        with pytest.raises(ConfigError, match=word):
            env.reset(**bad)
    got = more(env)  # the episode goes on where it was
    assert got and same(got, more(ref))


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("checker", [True, False], ids=["checker", "no_checker"])
def test_a_refused_first_step_leaves_the_env_usable(env_id, checker):
    """Under ``illegal_action="raise"``: the very first step (the checker's checked one) refused, then legal steps."""
    kw = {"illegal_action": "raise", "disable_env_checker": not checker}
    env, ref = make(env_id, **kw), make(env_id, **kw)
    first = env.reset(seed=0)
    mask = env.unwrapped.action_masks()
    refused = [1.7, env.action_space.n] + ([int(np.flatnonzero(~mask)[0])] if (~mask).any() else [])
    for a in refused:  # a float, one out of range, one the mask forbids
        with pytest.raises(InvalidActionError):
            env.step(a)
    assert same(play(env, first), play(ref, ref.reset(seed=0)))


@pytest.mark.parametrize("env_id", IDS)
def test_a_refused_step_mid_episode_changes_nothing(env_id):
    env, ref = make(env_id, illegal_action="raise"), make(env_id, illegal_action="raise")
    env.reset(seed=1)
    ref.reset(seed=1)
    for _ in range(2):
        a = legal(env)
        assert not env.step(a)[2] and not ref.step(a)[2]
    mask = env.unwrapped.action_masks()
    refused = [2**32 + 1, -1, 1.7, float("nan")] + ([int(np.flatnonzero(~mask)[0])] if (~mask).any() else [])
    for a in refused:
        with pytest.raises(InvalidActionError):
            env.step(a)
    got = more(env)
    assert got and same(got, more(ref))


def test_edge_refused_workload_option_first():
    env = make("EdgeBatch-v0")
    with pytest.raises(ConfigError, match="not in the profile"):
        env.reset(seed=0, options={"workloads": ["no_such_workload"]})
    with pytest.raises(ConfigError, match="empty"):
        env.reset(seed=0, options={"workloads": []})
    assert same(play(env, env.reset(seed=0)), _fresh("EdgeBatch-v0"))
    obs, _ = env.reset(seed=0, options={"workloads": ["mnist", "cifar10"]})  # a good option still works
    assert len(env.unwrapped.source_tasks) == 2


def test_the_guard_is_outermost_and_keeps_gymnasiums_wrappers():
    env = gym.make("CGRSP-v0")
    chain = []
    while isinstance(env, gym.Wrapper):
        chain.append(type(env).__name__)
        env = env.env
    assert chain == ["CheckedReset", "OrderEnforcing", "PassiveEnvChecker"]
    again = gym.make(gym.make("MIG-v0").spec)  # a spec round trip applies the guard once
    assert type(again).__name__ == "CheckedReset" and type(again.env).__name__ == "OrderEnforcing"
