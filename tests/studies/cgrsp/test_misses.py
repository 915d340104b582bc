"""``python -m studies versus-rule --part misses``: the missed jobs named, the slack at dispatch, a day, bad input."""

import numpy as np
import pandas as pd
import pytest

from studies.cgrsp.versus_rule import misses as ms


def _jobs(dispatch_min: list[float], deadline_min: list[float], tight: list[bool], seed: int = 7) -> pd.DataFrame:
    n = len(dispatch_min)
    dispatch, deadline = np.array(dispatch_min) * 60.0, np.array(deadline_min) * 60.0
    run = np.full(n, 90.0)
    completion = dispatch + 30.0 + run
    return pd.DataFrame(
        {
            "seed": seed,
            "job_id": np.arange(n),
            "submit": np.zeros(n),
            "dispatch": dispatch,
            "deadline": deadline,
            "complexity": ["high"] * n,
            "tight": tight,
            "met": completion <= deadline,
            "stock_at_dispatch": ["Medium"] * n,
            "provisioning_delay": np.full(n, 30.0),
            "runtime": run,
            "tardiness": np.maximum(0.0, completion - deadline),
        }
    )


def test_missed_lists_each_job_either_policy_missed_with_both_slacks():
    learned = _jobs([10, 59, 61, 5], [60, 60, 60, 300], [True, True, True, False])
    rule = _jobs([49, 49, 49, 299], [60, 60, 60, 300], [True, True, True, False])  # the loose job missed by the rule
    m = ms.missed(learned, rule)
    assert list(m.columns) == list(ms.MISSED_COLUMNS)
    assert m.job_id.tolist() == [1, 2, 3]  # the learner's misses first, then the rule's
    np.testing.assert_allclose(m.learned_slack_min, [1.0, -1.0, 295.0])
    np.testing.assert_allclose(m.rule_slack_min, [11.0, 11.0, 1.0])
    assert m.learned_met.tolist() == [False, False, True] and m.rule_met.tolist() == [True, True, False]
    assert m.learned_tardiness_s.iloc[1] == pytest.approx(180.0)
    assert ms.missed(rule.iloc[:3], rule.iloc[:3]).empty


def test_slack_quantiles_compare_the_tight_jobs_only():
    learned = _jobs([10, 59, 61, 5], [60, 60, 60, 300], [True, True, True, False])
    rule = _jobs([49, 49, 49, 299], [60, 60, 60, 300], [True, True, True, False])
    t = ms.slack_quantiles(learned, rule).set_index("policy")
    assert t.tight_jobs.tolist() == [3, 3]
    assert t.loc["learned", "q50%"] == pytest.approx(1.0) and t.loc["rule", "q50%"] == pytest.approx(11.0)
    assert t.loc["learned", "after_deadline"] == 1 and t.loc["rule", "after_deadline"] == 0
    assert t.missed.tolist() == [2, 1]  # every job's misses, the loose one included


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(SystemExit):
        ms.main([str(tmp_path / "nope.npz")])
    (tmp_path / "x.npz").write_bytes(b"")
    for bad in (["--days", "0"], ["--first-seed", "-1"], ["--workers", "0"], ["--rule", "fifo"]):
        with pytest.raises(SystemExit):
            ms.main([str(tmp_path / "x.npz"), *bad])


@pytest.mark.e2e
def test_a_random_actor_and_the_rule_play_the_same_day(tmp_path):
    """A random joint actor on one hectic CGRSP-v0 day: both frames hold the day's jobs with the same deadlines, the
    rule's are simulate()'s, and the missed list is exactly the jobs either missed."""
    import jax
    import jax.numpy as jnp

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.export import save_policy
    from gpu_sched_agents.rl.ppo_jax.network import ActorCritic
    from gpu_sched_env.cgrsp import simulate
    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    from studies.cgrsp.learning.parity import regime_config

    config = env_config(regime_config("hectic_fresh", 1))
    env = JaxCGRSP.from_config(config, records=False)
    params = ActorCritic(env.n_actions, (8,)).init(jax.random.PRNGKey(0), jnp.zeros(env.obs_dim))
    path = save_policy(tmp_path / "a.npz", params, env.obs_dim, env.n_actions)
    learned, rule = ms.run(path, "hectic_fresh", [], 1, 10_000, "spt_rescue_defer_exp")
    assert len(learned) == len(rule) == 950 and (learned.seed == 10_000).all()
    np.testing.assert_array_equal(learned.deadline.to_numpy(), rule.deadline.to_numpy())
    ref = simulate("spt_rescue_defer_exp", day="hectic", seed=10_000, **dict(config.params)).jobs
    np.testing.assert_array_equal(rule.dispatch.to_numpy(), ref.dispatch.to_numpy())
    m = ms.missed(learned, rule)
    assert len(m) == int((~learned.met | ~rule.met).sum())
    assert not np.array_equal(learned.dispatch.to_numpy(), rule.dispatch.to_numpy())
