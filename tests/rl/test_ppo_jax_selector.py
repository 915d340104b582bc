"""The one checkpoint selection of algo=ppo_jax (train.py's best_model and the studies' picks)."""

import pandas as pd
import pytest

from gpu_sched_agents.rl.ppo_jax.selector import Selector
from gpu_sched_env.core.errors import ConfigError


def test_keeping_the_best_so_far_picks_what_the_whole_table_picks():
    """train.py keeps the best evaluation one at a time; the studies pick among all at the end: the same row."""
    first = pd.DataFrame(
        {"mean_wait_min": [50.0, 44.0, 43.0, 43.0, 42.0, 44.0], "miss_pct": [0.0, 0.0, 0.0, 0.0, 0.2, 0.0]}
    ).assign(objective=lambda t: t.mean_wait_min + 60 * t.miss_pct)
    for by, rules, want in (
        ("lexicographic", {"": (45.0, 0.0)}, 2),
        ("lexicographic", {"": (45.0, 0.5)}, 4),
        ("objective", None, 2),
    ):
        sel = Selector({"": None}, list(range(100)), by, rules=rules)
        best, kept = (float("inf"),), None
        for i, row in first.iterrows():
            if sel.key(row) < best:  # strictly better: the first of equal keys stays
                best, kept = sel.key(row), i
        assert sel.pick(first) == kept == want, by
        assert sel.best(first, 3)[0] == want


def test_a_selection_rule_that_does_not_fit_its_regimes_is_refused():
    with pytest.raises(ConfigError, match="select_by = 'best'.*allowed"):
        Selector({"": None}, [0], "best")
    with pytest.raises(ValueError, match="worst_regime"):
        Selector({"": None}, [0], "worst_regime", rules={"": (1.0, 0.0)})
    with pytest.raises(ValueError, match="lexicographic"):
        Selector({"hectic": None, "surge": None}, [0], "lexicographic", rules={})
    with pytest.raises(ValueError, match="a second stage needs"):
        Selector({"": None}, [0], "objective").recheck(pd.DataFrame(), lambda i: {})


def test_the_second_stage_repicks_on_pooled_days(monkeypatch):
    """The lowest wait on few days misses on more: the recheck replays the best few and picks on both stages pooled."""
    import gpu_sched_agents.rl.ppo_jax.jax_eval as jax_eval

    def play(env, actor, keys):  # the "actor" names its days' (wait, miss %) on the second stage's days
        return pd.DataFrame({"mean_wait_min": [actor[0]] * len(keys), "miss_pct": [actor[1]] * len(keys)})

    monkeypatch.setattr(jax_eval, "play_params", play)
    first = pd.DataFrame({"mean_wait_min": [50.0, 44.0, 43.5, 43.0, 43.8], "miss_pct": [0.0, 0.0, 0.0, 0.0, 0.1]})
    kept = [(50.0, 0.0), (44.1, 0.0), (43.6, 0.0), (43.1, 0.02), (43.0, 0.0)]
    sel = Selector(
        {"": None}, list(range(100)), "lexicographic", rules={"": (45.0, 0.0)}, recheck_days=300, recheck_top=3
    )
    assert sel.pick(first) == 3  # one stage: the lowest wait without a miss on its 100 days
    second = {"": (45.0, 0.0)}  # the rule on the second stage's days
    monkeypatch.setattr(jax_eval, "rule_regime_means", lambda envs, rule, keys: second)

    def replay(i):
        return sel.play(kept[i], sel.further_keys())

    table, pick = sel.recheck(first, replay)
    assert pick == 2  # 3 misses on the second stage's days; 4 (a miss in the first stage) is not among the top 3
    assert table.recheck_wait_min.notna().tolist() == [False, True, True, True, False]
    assert table.pooled_wait_min[2] == pytest.approx((100 * 43.5 + 300 * 43.6) / 400)
    assert table.pooled_miss_pct[3] == pytest.approx(300 * 0.02 / 400)
    second[""] = (45.0, 0.05)  # the rule misses too: 3 is within it
    assert sel.recheck(first, replay)[1] == 3


def test_the_generalists_second_stage_repicks_its_worst_regime_on_pooled_days(monkeypatch):
    """Worst-regime pick: the best few by the first stage replayed on every regime, picked again on the pool."""
    import gpu_sched_agents.rl.ppo_jax.jax_eval as jax_eval

    def play(env, actor, keys):  # the "actor" names its (wait, miss %) per regime ("env" is the regime's name)
        wait, miss = actor[env]
        return pd.DataFrame({"mean_wait_min": [wait] * len(keys), "miss_pct": [miss] * len(keys)})

    monkeypatch.setattr(jax_eval, "play_params", play)
    rules = {"hectic": (44.0, 0.0), "surge": (0.30, 0.0)}  # margins: 0.88 min and the 0.05 min floor
    first = pd.DataFrame(
        {
            "hectic_wait": [44.1, 44.2, 44.5, 50.0],
            "hectic_miss": [0.0, 0.0, 0.0, 0.0],
            "surge_wait": [0.30, 0.31, 0.33, 0.30],
            "surge_miss": [0.0, 0.0, 0.0, 0.0],
        }
    )
    kept = [  # on the further days: 0 misses on hectic, 1 waits longer on surge, 2 holds
        {"hectic": (44.0, 0.01), "surge": (0.30, 0.0)},
        {"hectic": (44.2, 0.0), "surge": (0.40, 0.0)},
        {"hectic": (44.4, 0.0), "surge": (0.32, 0.0)},
        {"hectic": (44.0, 0.0), "surge": (0.30, 0.0)},
    ]
    sel = Selector({"hectic": "hectic", "surge": "surge"}, list(range(100)), "worst_regime", rules=rules)
    assert sel.pick(first) == 0  # one stage
    sel.recheck_days, sel.recheck_top = 300, 3
    second = dict(rules)  # the rule on the second stage's days
    monkeypatch.setattr(jax_eval, "rule_regime_means", lambda envs, rule, keys: second)

    def replay(i):
        return sel.play(kept[i], sel.further_keys())

    table, pick = sel.recheck(first, replay)
    assert pick == 2  # 0 misses more than the rule once pooled; 1's surge excess (0.0775 min) is over the margin
    assert table.recheck_surge_wait.notna().tolist() == [True, True, True, False]  # 3 is not among the top 3
    assert table.pooled_surge_wait[1] == pytest.approx((100 * 0.31 + 300 * 0.40) / 400)
    assert table.pooled_hectic_rule_wait.iloc[0] == pytest.approx(44.0)
    second["hectic"] = (44.0, 0.01)
    assert sel.recheck(first, replay)[1] == 0  # the rule misses as often on the further days: 0 is within it
