"""``python -m studies diagnose versus-rule-jax``: the seven modes on the same days, the table, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from studies.diagnose import versus_rule_jax as vr


def test_table_pairs_every_mode_with_the_rule():
    days = pd.DataFrame(
        [
            {"policy": m, "day_index": i, "mean_wait_min": 10.0 + k + i, "miss_pct": 0.1 * k}
            for k, m in enumerate(vr.MODES)
            for i in range(3)
        ]
    )
    t = vr.table(days).set_index("mode")
    assert list(t.index) == list(vr.MODES)
    np.testing.assert_allclose(t.mean_wait_min_diff.to_numpy(), [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert t.loc["rule", "mean_wait_min_ci"] == 0.0


def _actor(path, obs_dim: int, n_actions: int):
    from gpu_sched_agents.rl.ppo_jax.export import save_policy
    from gpu_sched_agents.rl.ppo_jax.network import ActorCritic

    params = ActorCritic(n_actions, (8,)).init(jax.random.PRNGKey(0), jnp.zeros(obs_dim))
    return save_policy(path, params, obs_dim, n_actions)


def test_modes_on_one_state_follow_their_definitions(tmp_path):
    """On one hectic state: rule_which dispatches the base pair when the actor dispatches; rule_slot keeps its job;
    of rule_rescue and rule_spt the one matching the base job's urgency is rule_which, the other the actor."""
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_agents.rl.ppo_jax.jax_eval import learned_rule
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from studies.cgrsp.learning.parity import regime_config

    env = JaxCGRSP.from_config(env_config(regime_config("hectic_fresh", 1)), records=False)
    _, s = env.reset(jax.random.PRNGKey(1), env.default_params)
    p = env.default_params
    w = learned_rule(env, NumpyPolicy.load(_actor(tmp_path / "a.npz", env.obs_dim, env.n_actions))).weights

    # each function jitted whole (one program each, stored by JAX's compile cache), not run op by op
    def jit(fn):
        return jax.jit(lambda *a: fn(env, *a))

    learned, best = (int(x) for x in jit(vr._dispatches)(s, p, w))
    which, slot = int(jit(vr._rule_which)(s, p, w)), int(jit(vr._rule_slot)(s, p, w))
    pair, urgent = (int(x) for x in jit(vr.base_pair_urgent)(s, p))
    rescue = int(jit(lambda *a: vr._rule_urgent(*a, urgent=True))(s, p, w))
    spt = int(jit(lambda *a: vr._rule_urgent(*a, urgent=False))(s, p, w))
    if learned == env.wait_action:
        assert which == slot == rescue == spt == env.wait_action
    else:
        assert which == pair and slot // env.spec.c == learned // env.spec.c
        assert (rescue, spt) == ((pair, learned) if urgent else (learned, pair))
    # the base job is urgent once its deadline is under THETA_S away, not at the day's start (8 h of laxity)
    from gpu_sched_env.cgrsp.jax.obs import window
    from gpu_sched_env.cgrsp.jax.types import day_of

    job = window(s, p, env.class_order, env.K, env.spec.n)[0][pair // env.spec.c]
    late = s.replace(t=day_of(s, p).deadline[job] - 1.0)
    assert not urgent and bool(jit(vr.base_pair_urgent)(late, p)[1])
    assert best != env.wait_action  # a dispatch is legal at the first decision point


def test_a_non_joint_actor_and_a_missing_file_are_refused(tmp_path):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(SystemExit):
        vr.main([str(tmp_path / "nope.npz"), "--regime", "hectic_fresh"])
    with pytest.raises(ConfigError, match="action_mode = 'when': this diagnostic splits a joint-design actor"):
        vr.run(tmp_path / "x.npz", "hectic_fresh", ["env.action_mode=when"], 2)
