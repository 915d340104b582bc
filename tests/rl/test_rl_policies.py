"""The two-level deterministic action of the project's PPO policy."""

import torch as th

from gpu_sched_agents.rl.policies import (
    FactoredMaskableCategorical,
    FactoredMaskablePolicy,
    factored_mode,
)
from gpu_sched_agents.rl.registry import get_algo
from gpu_sched_env.cgrsp.env import CGRSPEnv


# ----------------------------------------------------------------------------- two-level mode
def test_factored_mode_dispatches_when_the_dispatch_mass_wins_although_wait_is_the_argmax():
    probs = th.tensor([[0.05] * 14 + [0.3]])  # 14 dispatch actions hold 0.7, the no-op 0.3
    assert int(th.argmax(probs)) == 14  # the flat argmax waits ...
    assert int(factored_mode(probs)[0]) == 0  # ... the two-level mode dispatches (likeliest dispatch)
    probs = th.tensor([[0.1, 0.2, 0.1, 0.6], [0.5, 0.1, 0.0, 0.4], [0.0, 0.0, 0.0, 1.0]])
    assert factored_mode(probs).tolist() == [3, 0, 3]


def test_ppo_uses_the_factored_policy():
    spec = get_algo("ppo")
    assert spec.policy is FactoredMaskablePolicy
    env = CGRSPEnv(day="quiet", window=4, action_mode="slot")
    model = spec.cls(spec.policy, env, n_steps=16, batch_size=16, seed=0, device="cpu")
    assert isinstance(model.policy.action_dist, FactoredMaskableCategorical)
    obs, _ = env.reset(seed=0)
    a, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(a)]
