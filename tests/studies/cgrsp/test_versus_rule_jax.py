"""``python -m studies versus-rule --engine jax``: the seven modes on the same days, the table, bad input."""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from studies.cgrsp.versus_rule import versus_rule_jax as vr


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

    from gpu_sched_env.cgrsp.jax.obs import window
    from gpu_sched_env.cgrsp.jax.types import day_of

    def modes(st, p, w):
        learned, best = vr._dispatches(env, st, p, w)
        pair, urgent = vr.base_pair_urgent(env, st, p)
        which, slot = vr._rule_which(env, st, p, w), vr._rule_slot(env, st, p, w)
        rescue, spt = vr._rule_urgent(env, st, p, w, urgent=True), vr._rule_urgent(env, st, p, w, urgent=False)
        return learned, best, pair, urgent, which, slot, rescue, spt

    @jax.jit  # one program (stored by JAX's compile cache), not op by op: the day's first state and the same
    def both(s, p, w):  # state at 1 s before the base job's deadline, where that job is urgent
        job = window(s, p, env.class_order, env.K, env.spec.n)[0][vr.base_pair(env, s, p) // env.spec.c]
        late = s.replace(t=day_of(s, p).deadline[job] - 1.0)
        states = jax.tree.map(lambda a, b: jnp.stack([a, b]), s, late)
        return jax.vmap(modes, in_axes=(0, None, None))(states, p, w)

    out = np.asarray(jnp.stack(both(s, p, w), axis=1).astype(jnp.int32))
    assert out[0, 1] != env.wait_action  # a dispatch is legal at the first decision point
    assert (out[:, 3] == [0, 1]).all()  # not urgent at the day's start (8 h of laxity), urgent 1 s before the deadline
    for learned, _, pair, urgent, which, slot, rescue, spt in out:
        if learned == env.wait_action:
            assert which == slot == rescue == spt == env.wait_action
        else:
            assert which == pair and slot // env.spec.c == learned // env.spec.c
            assert (rescue, spt) == ((pair, learned) if urgent else (learned, pair))


def test_a_non_joint_actor_and_a_missing_file_are_refused(tmp_path):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(SystemExit):
        vr.main([str(tmp_path / "nope.npz"), "--regime", "hectic_fresh"])
    with pytest.raises(ConfigError, match="action_mode = 'when': this diagnostic splits a joint-design actor"):
        vr.run(tmp_path / "x.npz", "hectic_fresh", ["env.action_mode=when"], 2)
