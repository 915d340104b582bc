"""Every action of every env's action space is a valid input (``illegal_action``, docs/envs.md).

Under ``"substitute"`` (the default) an in-range action the mask forbids is played as the env's
documented substitute (the no-op where the layout has one and the mask allows it, else the
lowest legal action) and flagged in ``info["invalid_action"]``; ``"raise"`` keeps the strict
envs. The substitute is recomputed here from the mask alone, independently of the envs' code,
and each substituted step is compared with a copy of the env that played it explicitly.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import gpu_sched_env
from gpu_sched_env.core.errors import (
    ConfigError,
    InvalidActionError,
    check_illegal_action,
    resolve_action,
    substitute_action,
)

IDS = sorted(gpu_sched_env.ENV_IDS)
FAMILY = {i: i.split("-")[0] for i in IDS}
SMALL = {  # short episodes that play illegal actions (EdgeBatch unsplit: a heavy task does not fit a Nano)
    "CGRSP": {"window": 4, "n_jobs": 10},
    "HGSP": {"n_tasks": 20},  # 3 of its tasks fit some GPUs only
    "LLMServe": {"n_requests": 12},
    "MIG": {"n_jobs": 20},  # 12 jobs all arrive at the first poll: defer, the no-op, would never be legal
    "EdgeBatch": {"n_tasks": 8, "split": False},
}
HAS_NOOP = {"CGRSP": True, "MIG": True}  # the last action is the no-op (CGRSP: wait; MIG: defer); else none


def make(env_id: str, **kw):
    return gym.make(env_id, **{**SMALL[FAMILY[env_id]], **kw}).unwrapped


def documented_substitute(env_id: str, mask: np.ndarray) -> int:
    """The env docstrings' rule, from the mask alone: the no-op where legal, else the lowest legal action."""
    if HAS_NOOP.get(FAMILY[env_id]) and mask[-1]:
        return mask.size - 1
    return int(np.flatnonzero(mask)[0])


def flat(obs) -> np.ndarray:
    if isinstance(obs, dict):
        return np.concatenate([np.ravel(obs[k]).astype(np.float64) for k in sorted(obs)])
    return np.ravel(obs).astype(np.float64)


def all_done(env_id: str, env, info: dict) -> bool:
    """Every job of the episode done or accounted for, as the env defines it."""
    family = FAMILY[env_id]
    if family == "CGRSP":
        return info["summary"]["completed"] == env.sim.n_jobs and not env.sim.waiting
    if family == "HGSP":
        return len(env.schedule().sequence) == len(env.problem.arrival_order)
    if family == "LLMServe":
        return info["summary"]["completed"] == int((~env.sim.skipped).sum())
    if family == "MIG":
        return len(env.sim.placed) + len(env.sim.skipped) == len(env.sim.jobs)
    return info["n_placed"] == info["n_tasks"] == len(env.tasks)


# ----------------------------------------------------------------------------- substitute (the default)
@pytest.mark.parametrize("env_id", IDS)
def test_random_in_range_actions_play_the_documented_substitute_for_a_whole_episode(env_id):
    env = make(env_id)
    assert env.config.illegal_action == "substitute"
    env.reset(seed=0)
    space = gym.spaces.Discrete(env.action_space.n, seed=1)  # a plain Discrete: every action, legal or not
    flags, steps = [], 0
    while True:
        mask = env.action_masks()
        a = int(space.sample())
        twin = pickle.loads(pickle.dumps(env))
        obs, r, term, trunc, info = env.step(a)
        steps += 1
        assert isinstance(info["invalid_action"], bool) and info["invalid_action"] == (not mask[a])
        flags.append(info["invalid_action"])
        assert info["n_invalid"] == sum(flags)
        played = documented_substitute(env_id, mask) if info["invalid_action"] else a
        t_obs, t_r, t_term, *_ = twin.step(played)  # the substitute played explicitly: the same step
        assert np.array_equal(flat(obs), flat(t_obs)) and (r, term) == (t_r, t_term)
        assert not trunc
        if term:
            break
        assert steps < 10_000
    assert 0 < sum(flags) < steps  # both kinds occurred
    assert all_done(env_id, env, info)


@pytest.mark.parametrize("env_id", IDS)
def test_the_count_starts_again_at_reset(env_id):
    env = make(env_id)
    env.reset(seed=0)
    bad = np.flatnonzero(~env.action_masks())
    if bad.size == 0:  # this state has no illegal action: step on until one has
        while not (~env.action_masks()).any():
            env.step(int(np.flatnonzero(env.action_masks())[0]))
        bad = np.flatnonzero(~env.action_masks())
    assert env.step(int(bad[0]))[4]["n_invalid"] == 1
    env.reset(seed=0)
    legal = int(np.flatnonzero(env.action_masks())[0])
    _, _, _, _, info = env.step(legal)
    assert info["invalid_action"] is False and info["n_invalid"] == 0


@pytest.mark.parametrize("env_id", IDS)
def test_legal_actions_play_the_same_in_both_modes(env_id):
    a_env, b_env = make(env_id), make(env_id, illegal_action="raise")
    obs_a, _ = a_env.reset(seed=4)
    obs_b, _ = b_env.reset(seed=4)
    rng = np.random.default_rng(4)
    while True:
        assert np.array_equal(flat(obs_a), flat(obs_b))
        np.testing.assert_array_equal(a_env.action_masks(), b_env.action_masks())
        a = int(rng.choice(np.flatnonzero(a_env.action_masks())))
        obs_a, r_a, t_a, _, info_a = a_env.step(a)
        obs_b, r_b, t_b, _, info_b = b_env.step(a)
        assert (r_a, t_a) == (r_b, t_b) and info_a["invalid_action"] is info_b["invalid_action"] is False
        if t_a:
            break
    assert info_a["n_invalid"] == info_b["n_invalid"] == 0


# ----------------------------------------------------------------------------- raise
@pytest.mark.parametrize("env_id", IDS)
def test_raise_mode_refuses_an_illegal_action_and_changes_nothing(env_id):
    env = make(env_id, illegal_action="raise")
    env.reset(seed=0)
    while not (~env.action_masks()).any():
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    before = pickle.dumps(env)
    with pytest.raises(InvalidActionError, match="illegal.*legal actions now"):
        env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert pickle.dumps(env) == before


@pytest.mark.parametrize("mode", ["substitute", "raise"])
@pytest.mark.parametrize("env_id", IDS)
def test_actions_outside_the_space_raise_in_both_modes(env_id, mode):
    env = make(env_id, illegal_action=mode)
    env.reset(seed=0)
    n = env.action_space.n
    before = pickle.dumps(env)
    for bad in (-1, n, 0.0, np.float32(1), "0", True, None, np.array([0, 0]), np.array([[0]])):
        with pytest.raises(InvalidActionError, match=rf"\[0, {n - 1}\]"):
            env.step(bad)
    assert pickle.dumps(env) == before


# ----------------------------------------------------------------------------- the setting
@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("value", ["ignore", "Raise", "", None, 0, True, ["raise"]])
def test_a_bad_illegal_action_is_a_config_error_naming_it(env_id, value):
    with pytest.raises(ConfigError, match=r"^illegal_action = .* is not known; allowed: substitute, raise$") as e:
        make(env_id, illegal_action=value)
    assert repr(value) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("env_id", IDS)
def test_the_setting_lives_in_the_config_object(env_id):
    env = make(env_id, illegal_action="raise")
    cfg = env.config
    assert cfg.illegal_action == "raise" and cfg.replace(illegal_action="substitute").illegal_action == "substitute"
    with pytest.raises(ConfigError, match="illegal_action = 'x'"):
        cfg.replace(illegal_action="x")


def test_the_shared_check():
    mask = np.array([False, True, False, True])
    assert resolve_action(0, 4, mask, illegal_action="substitute") == (1, True)  # no no-op: the lowest legal
    assert resolve_action(0, 4, mask, illegal_action="substitute", noop=3) == (3, True)  # the no-op
    assert resolve_action(2, 4, mask, illegal_action="substitute", noop=2) == (1, True)  # the no-op is illegal
    assert resolve_action(np.array([1]), 4, mask, illegal_action="substitute") == (1, False)
    with pytest.raises(InvalidActionError, match=r"action 0 is illegal: busy; legal actions now: \[1, 3\]"):
        resolve_action(0, 4, mask, lambda a: "busy", illegal_action="raise")
    with pytest.raises(InvalidActionError, match="no action is legal now"):
        resolve_action(0, 4, np.zeros(4, bool), illegal_action="substitute")
    with pytest.raises(ConfigError, match="illegal_action = 'clamp'"):
        resolve_action(0, 4, mask, illegal_action="clamp")
    assert check_illegal_action("raise") == "raise"


def test_cgrsp_substitutes_as_its_jax_twin():
    """The NumPy rule (``core.errors.substitute_action`` with *wait*) and ``cgrsp.jax.legal.legalise`` agree."""
    jax = pytest.importorskip("jax")
    from gpu_sched_env.cgrsp.jax.legal import legalise

    rng = np.random.default_rng(0)
    masks = rng.random((64, 9)) < 0.3
    masks[::4, -1] = True
    masks[1::4, -1] = False
    masks[masks.sum(axis=1) == 0, 2] = True
    actions = rng.integers(0, 9, 64)
    played, invalid = (np.asarray(x) for x in jax.vmap(legalise)(masks, actions))  # one day's call per row
    for m, a, p, bad in zip(masks, actions, played, invalid):
        assert bool(bad) == (not m[a])
        assert int(p) == (substitute_action(m, noop=8) if bad else a)


# ----------------------------------------------------------------------------- the end of an episode
@pytest.mark.parametrize("env_id", IDS)
def test_the_final_mask_marks_one_documented_action(env_id):
    env = make(env_id)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    term = False
    while not term:
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
    want = np.zeros(env.action_space.n, bool)
    want[-1 if HAS_NOOP.get(FAMILY[env_id]) else 0] = True
    np.testing.assert_array_equal(info["action_mask"], want)
    np.testing.assert_array_equal(env.action_masks(), want)
    if isinstance(obs, dict):
        np.testing.assert_array_equal(obs["action_mask"], want.astype(np.int8))
    assert want[int(env.action_space.sample())]  # the masked sampler finds it
    with pytest.raises(RuntimeError, match="reset"):
        env.step(int(np.flatnonzero(want)[0]))  # the episode is still over


# ----------------------------------------------------------------------------- gymnasium's checker
@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env_passes_with_every_default(env_id):
    check_env(gym.make(env_id).unwrapped)


# ----------------------------------------------------------------------------- outside clients, no wrapper
def flag_counter():
    """An SB3 callback (no wrapper) counting the steps, the ended episodes and the flagged invalid actions."""
    from stable_baselines3.common.callbacks import BaseCallback

    class FlagCounter(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.steps = self.invalid = self.episodes = 0

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                self.steps += 1
                self.invalid += bool(info["invalid_action"])
                self.episodes += bool(done)
            return True

    return FlagCounter()


@pytest.fixture
def one_torch_thread():
    """PyTorch on one thread: tiny models on a shared 2-core machine learn ~8x faster than on all its cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


SB3_SMALL = {  # the ids' own envs with short episodes, so a few end within 256 steps
    "CGRSP-v0": {"n_jobs": 20},
    "HGSP-v0": {"n_tasks": 40},
    "LLMServe-v0": {"n_requests": 20},
    "MIG-v0": {"n_jobs": 20},
    "EdgeBatch-v0": {"n_tasks": 10, "split": False},
}


@pytest.mark.e2e
@pytest.mark.parametrize("env_id", list(SB3_SMALL))
def test_plain_sb3_ppo_learns_on_the_registered_env(env_id, one_torch_thread):
    """Stable-Baselines3's PPO knows no mask: it plays illegal actions, which the env substitutes."""
    from stable_baselines3 import PPO

    env = gym.make(env_id, **SB3_SMALL[env_id])
    policy = "MultiInputPolicy" if isinstance(env.observation_space, gym.spaces.Dict) else "MlpPolicy"
    flags = flag_counter()
    PPO(policy, env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu").learn(256, callback=flags)
    assert flags.steps == 256 and flags.episodes >= 1 and flags.invalid > 0


@pytest.mark.e2e
def test_sb3_contrib_maskable_ppo_learns_on_cgrsp_and_plays_no_illegal_action(one_torch_thread):
    from sb3_contrib import MaskablePPO

    flags = flag_counter()
    env = gym.make("CGRSP-v0", n_jobs=20)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(256, callback=flags)
    assert flags.steps == 256 and flags.episodes >= 1 and flags.invalid == 0


# ----------------------------------------------------------------------------- the project's own agents
@pytest.mark.e2e  # SB3's Monitor imports PyTorch: about 6 s
def test_the_agents_train_and_evaluate_on_strict_envs():
    """Their learners mask, follow the mask or go through IllegalActionFallback: an illegal action there raises."""
    from gpu_sched_agents.rl.envs import IllegalActionFallback, MixedDays, evaluate_model, make_vec_env
    from gpu_sched_agents.rl.scenario_train import make_vec_env as scenario_vec_env
    from gpu_sched_agents.rl.scenarios import spec_of
    from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
    from gpu_sched_env.hgsp.config import HGSPEnvConfig

    cfg = CGRSPEnvConfig(day="quiet", window=4, params={"n_jobs": 10})
    assert cfg.illegal_action == "substitute"
    for masked, mixed in ((True, False), (False, False), (True, True)):
        venv = make_vec_env(cfg, 1, seed=0, masked=masked, mixed=mixed)
        env = venv.envs[0]
        assert env.unwrapped.config.illegal_action == "raise"
        assert any(isinstance(w, IllegalActionFallback) for w in _wrappers(env)) is not masked
        if mixed:
            mix = next(w for w in _wrappers(env) if isinstance(w, MixedDays))
            assert {e.config.illegal_action for e in mix._envs.values()} == {"raise"}
        venv.close()
    venv = scenario_vec_env(spec_of("hgsp"), HGSPEnvConfig(n_tasks=12), 1, seed=0)
    assert venv.envs[0].unwrapped.config.illegal_action == "raise"
    venv.close()

    class Illegal:  # always an action the mask forbids (bound to the evaluation env, as heuristic agents are)
        def bind(self, env):
            self.env = env

        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return int(np.flatnonzero(~self.env.action_masks())[0]), state

    with pytest.raises(InvalidActionError, match="illegal"):
        evaluate_model(Illegal(), cfg, [0], masked=True)

    class Zero:  # mask-blind: the fallback replaces what is illegal, as it always did
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.int64(0), state

    row = evaluate_model(Zero(), cfg, [0], masked=False).iloc[0]
    assert row["illegal_actions"] > 0 and row["completed"] == 10


def _wrappers(env):
    while isinstance(env, gym.Wrapper):
        yield env
        env = env.env
