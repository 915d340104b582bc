"""``python -m studies versus-rule --part timing``: the four cells, the disagreements' contexts, a day, bad input."""

import numpy as np
import pandas as pd
import pytest

from studies.cgrsp.versus_rule import timing_jax as tj


def _steps() -> pd.DataFrame:
    rows = [(False, False, 3, 0, 0, 0, -1, 1.0, 50, False, -0.1)] * 6 + [
        (True, True, 1, -1, -1, -1, -1, 2.0, 9, False, 0)
    ] * 2
    rows += [(True, False, 1, 2, 1, -1, 1, 5.0, 40, False, -0.2)] * 3  # 3 holds at Medium
    rows += [(True, False, 2, 1, 0, -1, -1, 4.0, 30, False, -0.2)]
    rows += [
        (False, True, 2, 2, 2, 2, -1, 3.0, 100, True, -20.0),
        (False, True, 2, 2, 2, 2, -1, 3.0, 120, False, -22.0),
    ]
    return pd.DataFrame(rows, columns=list(tj.COLUMNS))


def test_cells_count_each_pair_of_actions_per_day():
    t = tj.cells(_steps(), days=2).set_index("cell")
    np.testing.assert_allclose(t.per_day.to_numpy(), [3.0, 1.0, 2.0, 1.0])
    assert t.share_pct.sum() == pytest.approx(100.0)


def test_contexts_split_the_disagreements_by_classes_class_and_stock():
    over = tj.contexts(_steps(), days=2, learner_waits=True)
    assert over.iloc[0][["heads", "cls", "level"]].tolist() == [1, 2, 1]  # the commonest first
    assert over.per_day.tolist() == [1.5, 0.5] and over.share_pct.tolist() == [75.0, 25.0]
    under = tj.contexts(_steps(), days=2, learner_waits=False)
    assert under[["heads", "cls", "level"]].values.tolist() == [[2, 2, 2]] and under.median_h.iloc[0] == 3.0
    none = tj.contexts(_steps()[lambda d: d.learner_waits == d.rule_waits], days=2, learner_waits=True)
    assert none.empty


def test_by_stock_counts_each_policys_own_dispatches_per_day():
    rule = _steps().assign(own_level=lambda d: d.own_level.where(d.own_level < 2, 0))  # the rule never starts on Low
    t = tj.by_stock(_steps(), rule, days=2)
    assert t.actor_per_day.tolist() == [3.0, 0.0, 1.0] and t.rule_per_day.tolist() == [4.0, 0.0, 0.0]
    assert t.actor_holds_per_day.tolist() == [0.0, 1.5, 0.0]


def test_low_starts_set_the_starts_on_low_stock_against_the_rest():
    t = tj.low_starts(_steps(), days=2).set_index("starts")
    assert t.loc["on Low"].tolist() == [1.0, 110.0, 50.0, -21.0]
    assert t.loc["elsewhere"].tolist() == [3.0, 50.0, 0.0, pytest.approx(-0.1)]


def test_a_non_joint_actor_and_bad_input_are_refused(tmp_path):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(SystemExit):
        tj.main([str(tmp_path / "nope.npz")])
    (tmp_path / "x.npz").write_bytes(b"")
    with pytest.raises(SystemExit):
        tj.main([str(tmp_path / "x.npz"), "--days", "0"])
    with pytest.raises(
        ConfigError, match="action_mode = 'when': this diagnostic compares.*allowed: 'joint' or 'joint_hold'"
    ):
        tj.run(tmp_path / "x.npz", "hectic_fresh", ["env.action_mode=when"], 1)


@pytest.mark.e2e
def test_a_random_actor_plays_a_whole_day(tmp_path):
    """A random actor on one hectic day: each of its dispatches is a row (the day's 950 jobs, no more), the context
    is read wherever one of the two dispatches, and it agrees with the rule on some steps and not on others."""
    import jax
    import jax.numpy as jnp

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy, save_policy
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, learned_rule, test_keys
    from gpu_sched_agents.rl.ppo_jax.network import ActorCritic
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from studies.cgrsp.learning.parity import regime_config

    env = JaxCGRSP.from_config(env_config(regime_config("hectic_fresh", 1)), records=False)
    params = ActorCritic(env.n_actions, (8,)).init(jax.random.PRNGKey(0), jnp.zeros(env.obs_dim))
    path = save_policy(tmp_path / "a.npz", params, env.obs_dim, env.n_actions)
    w = learned_rule(env, NumpyPolicy.load(path)).weights
    steps = tj.step_rows(env, w, "flat", test_keys(1, SELECT_SEED0))
    assert (~steps.learner_waits).sum() == 950  # every job dispatched once, by a step with a legal dispatch
    assert ((steps.own_level >= 0) == ~steps.learner_waits).all()
    assert (steps.waiting >= 1).all() and not steps.trigger[steps.learner_waits].any()
    assert steps.reward.sum() < 0  # a cost
    rule = tj.step_rows(env, w, "flat", test_keys(1, SELECT_SEED0), actor=False)
    assert (rule.learner_waits == rule.rule_waits).all() and (~rule.learner_waits).sum() == 950
    assert (steps.cls.between(-1, 2)).all() and (steps.level.between(-1, 2)).all()
    assert ((steps.cls == -1) == (steps.learner_waits & steps.rule_waits)).all()
    agree = (steps.learner_waits == steps.rule_waits).mean()
    assert 0.0 < agree < 1.0
