"""Semi-MDP discounting: the time-discounted GAE by hand."""

import numpy as np
import pytest
import torch as th

from gpu_sched_agents.rl.smdp import TimeDiscountedBuffer
from gpu_sched_env.cgrsp.env import CGRSPEnv


# ----------------------------------------------------------------------------- semi-MDP
def test_time_discounted_gae_matches_a_hand_computation():
    env = CGRSPEnv(day="quiet", window=2)
    buf = TimeDiscountedBuffer(
        3, env.observation_space, env.action_space, device="cpu", gae_lambda=1.0, gamma=0.5, n_envs=1, halflife_s=10.0
    )
    buf.reset()
    buf.rewards[:, 0] = [1.0, 2.0, 4.0]
    buf.values[:, 0] = 0.0
    buf.episode_starts[:, 0] = 0.0
    buf.dts[:, 0] = [0.0, 10.0, 20.0]  # discounts 1, 0.5, 0.25
    buf.compute_returns_and_advantage(th.zeros(1), np.array([True]))
    # returns: G2 = 4; G1 = 2 + 0.5·4 = 4; G0 = 1 + 1·4 = 5 (the constant gamma=0.5 is ignored)
    assert buf.returns[:, 0].tolist() == pytest.approx([5.0, 4.0, 4.0])
