"""The masked DQN never chooses an illegal action: exploration, warm-up, greedy, targets."""

import numpy as np
import pytest
import torch as th

from gpu_sched_agents.rl.envs import make_vec_env
from gpu_sched_agents.rl.masked_dqn import MaskedDQN, apply_mask
from gpu_sched_env.cgrsp.config import as_env_config

KW = as_env_config({"day": "normal", "window": 4})


def make_model(**kw):
    venv = make_vec_env(KW, 2, 0)
    args = dict(
        learning_starts=50,
        buffer_size=2000,
        batch_size=32,
        train_freq=4,
        target_update_interval=100,
        exploration_fraction=0.5,
        policy_kwargs={"net_arch": [32]},
        seed=0,
        device="cpu",
    )
    args.update(kw)
    return MaskedDQN(env=venv, **args), venv


def test_rollouts_never_pick_a_masked_action():
    model, venv = make_model()
    seen = []
    # drive collect_rollouts and check every action against the mask of the obs it was taken in
    orig = model._sample_action

    def checked(*a, **k):
        action, buf = orig(*a, **k)
        mask = model._last_obs["action_mask"]
        for i, act in enumerate(action):
            assert mask[i][act] > 0.5, f"masked action {act} chosen"
        seen.append(action.copy())
        return action, buf

    model._sample_action = checked
    model.learn(600)  # covers warm-up (< 50 steps), ε-greedy and greedy phases
    assert len(seen) >= 290
    venv.close()


def test_greedy_prediction_respects_the_mask_even_when_q_prefers_illegal():
    model, venv = make_model()
    obs = venv.reset()
    # make the network prefer the highest action index (often illegal) by biasing the last layer
    with th.no_grad():
        last = model.q_net.q_net[-1]
        last.bias.copy_(th.arange(last.bias.numel(), dtype=th.float32) * 100.0)
    for _ in range(20):
        action, _ = model.predict(obs, deterministic=True)
        for i, a in enumerate(action):
            assert obs["action_mask"][i][a] > 0.5
        obs, *_ = venv.step(action)
    venv.close()


def test_target_max_is_over_legal_actions_only():
    q = th.tensor([[1.0, 5.0, 3.0], [0.0, 0.0, 0.0]])
    mask = th.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    masked = apply_mask(q, mask)
    assert masked.max(dim=1).values[0].item() == 3.0  # the illegal 5.0 is ignored
    # all-masked (terminal) rows stay finite, and vanish under (1 − done)
    assert th.isfinite(masked).all()
    assert (0.0 * masked.max(dim=1).values[1]).item() == 0.0


def test_exploration_draws_only_legal_actions():
    model, venv = make_model()
    model.exploration_rate = 1.0
    obs = venv.reset()
    drawn = set()
    for _ in range(200):
        a, _ = model.predict(obs, deterministic=False)
        assert all(obs["action_mask"][i][x] > 0.5 for i, x in enumerate(a))
        drawn.update(int(x) for x in a)
    # the same state 200 times: uniform over its legal actions, so every one of them shows up
    legal = {int(x) for x in np.flatnonzero(obs["action_mask"][0] > 0.5)} | {
        int(x) for x in np.flatnonzero(obs["action_mask"][1] > 0.5)
    }
    assert drawn == legal
    venv.close()


def test_unmasked_fallback_replaces_counts_and_penalises_illegal_actions():
    from gpu_sched_agents.rl.envs import IllegalActionFallback
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    env = IllegalActionFallback(CGRSPEnv(day="normal", window=4, illegal_action="raise"), penalty=0.5)  # strict inside
    ref = CGRSPEnv(day="normal", window=4)
    env.reset(seed=1)
    ref.reset(seed=1)
    mask = env.unwrapped.action_masks()
    illegal = int(np.flatnonzero(~mask)[0])
    replacement = mask.size - 1 if mask[-1] else int(np.flatnonzero(mask)[0])
    _, r, *_, info = env.step(illegal)
    _, r_ref, *_ = ref.step(replacement)
    assert info["illegal_action"] and env.n_illegal == 1
    assert r == pytest.approx(r_ref - 0.5)
    env.reset(seed=1)
    assert env.n_illegal == 0
