"""The scenarios' MaskablePPO pieces: the no-op only where nothing else is legal, the log features, both saved."""

from __future__ import annotations

import numpy as np
import pytest
import torch as th

from gpu_sched_agents.rl.policies import PlaceFirstMaskablePolicy, SignedLog1p, place_first
from gpu_sched_env.mig.config import MIGEnvConfig
from gpu_sched_env.mig.env import MIGEnv


def test_place_first_drops_the_noop_only_where_another_action_is_legal():
    masks = np.array([[1, 0, 1, 1], [0, 0, 0, 1], [1, 1, 1, 0]], dtype=np.float32)  # as the rollout buffer keeps them
    got = place_first(masks, 4)
    assert got.dtype == th.bool
    assert got.tolist() == [[True, False, True, False], [False, False, False, True], [True, True, True, False]]
    assert place_first(np.array([0, 1, 0, 1], dtype=bool), 4).tolist() == [[False, True, False, False]]
    assert place_first(None, 4) is None
    assert masks[0, 3] == 1  # the caller's masks are not changed


def test_signed_log1p_keeps_order_and_sign():
    from gymnasium import spaces

    ext = SignedLog1p(spaces.Box(-1.0, 1e6, (4,), np.float32))
    x = th.tensor([[-1.0, 0.0, 1.0, 1999.0]])
    np.testing.assert_allclose(ext(x).numpy(), [[-np.log(2), 0.0, np.log(2), np.log(2000)]], rtol=1e-6)
    assert ext.features_dim == 4


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from sb3_contrib import MaskablePPO

    env = MIGEnv(MIGEnvConfig(n_jobs=12, illegal_action="raise"))
    m = MaskablePPO(
        PlaceFirstMaskablePolicy,
        env,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        seed=0,
        policy_kwargs={"net_arch": [16], "features_extractor_class": SignedLog1p},
    )
    m.learn(128)
    path = tmp_path_factory.mktemp("model") / "m.zip"
    m.save(path)
    return m, MaskablePPO.load(path), env


def test_the_saved_model_keeps_its_policy_and_features(model):
    trained, loaded, env = model
    assert type(loaded.policy) is PlaceFirstMaskablePolicy
    assert isinstance(loaded.policy.features_extractor, SignedLog1p)
    obs, _ = env.reset(seed=3)
    for _ in range(30):
        mask = env.action_masks()
        a = [int(m.predict(obs, action_masks=mask, deterministic=True)[0]) for m in (trained, loaded)]
        assert a[0] == a[1]
        obs, _, term, trunc, _ = env.step(a[0])
        if term or trunc:
            break


def test_a_placement_is_played_wherever_one_is_legal_sampling_included(model):
    _, loaded, _ = model
    env = MIGEnv(MIGEnvConfig(n_jobs=50, illegal_action="raise"))  # arrivals over several polls: defer is offered
    obs, _ = env.reset(seed=5)
    noop, deferrable = env.action_space.n - 1, 0
    done = False
    while not done:
        mask = env.action_masks()
        deferrable += bool(mask[noop] and mask[:noop].any())
        obs_t, _ = loaded.policy.obs_to_tensor(obs)
        with th.no_grad():
            probs = loaded.policy.get_distribution(obs_t, action_masks=mask).distribution.probs[0]
        if mask[:noop].any():
            assert float(probs[noop]) == 0.0
        a = int(loaded.predict(obs, action_masks=mask, deterministic=False)[0])
        obs, _, term, trunc, _ = env.step(a)
        done = term or trunc
    assert deferrable > 0  # the env offered defer beside a placement: the narrowing was exercised
    with th.no_grad():
        _, logp, _ = loaded.policy.evaluate_actions(
            obs_t.repeat(2, 1), th.tensor([0, noop]), th.tensor([[1, 1, 1, 1], [1, 1, 1, 1]], dtype=th.float32)
        )
    assert float(logp[1]) < -1e6 < float(logp[0])  # the update's log-probabilities see the same narrowed mask
