"""The masked DQN never chooses an illegal action: exploration, warm-up, greedy, targets."""

import numpy as np
import torch as th

from agents.rl.envs import make_vec_env
from agents.rl.masked_dqn import MaskedDQN, apply_mask

KW = {"day": "normal", "window": 4}


def make_model(**kw):
    venv = make_vec_env(KW, 2, 0)
    args = dict(learning_starts=50, buffer_size=2000, batch_size=32, train_freq=4, target_update_interval=100,
                exploration_fraction=0.5, policy_kwargs={"net_arch": [32]}, seed=0, device="cpu")
    args.update(kw)
    return MaskedDQN(env=venv, **args), venv


def test_rollouts_never_pick_a_masked_action():
    model, venv = make_model()
    seen = []

    from stable_baselines3.common.callbacks import BaseCallback

    class Check(BaseCallback):
        def _on_step(self):
            return True

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
    model.learn(600, callback=Check())  # covers warm-up (< 50 steps), ε-greedy and greedy phases
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
    for _ in range(200):
        a, _ = model.predict(obs, deterministic=False)
        assert all(obs["action_mask"][i][x] > 0.5 for i, x in enumerate(a))
    assert np.unique(a).size >= 1
    venv.close()
