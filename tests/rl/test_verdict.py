"""A run's last lines (:func:`gpu_sched_agents.rl.compare.verdict`): the strongest baseline, a line a metric."""

import numpy as np
import pandas as pd

from gpu_sched_agents.rl.compare import verdict, write_comparison


def _days(policy, wait, miss, n=12, spread=1.0):
    rng = np.random.default_rng(len(policy))
    return pd.DataFrame(
        {
            "policy": policy,
            "seed": range(n),
            "mean_wait_min": wait + rng.normal(0, spread, n),
            "miss_pct": np.full(n, miss),
            "mean_tardiness_min": 0.0,
            "cost_usd": 6.0,
        }
    )


def test_the_verdict_names_the_strongest_baseline_and_says_worse_better_or_neither(tmp_path):
    learned = _days("learned", 60.0, 0.0).drop(columns="policy")
    heur = pd.concat([_days("fifo", 150.0, 20.0), _days("strong", 45.0, 0.0), _days("low_wait", 30.0, 5.0)])
    write_comparison(learned, heur, "ppo", tmp_path, "final_eval", "h", "t")
    head, miss, wait = verdict(tmp_path)
    assert head == "ppo against the strongest baseline on these 12 held-out seeds, strong:"  # fewest misses, then wait
    assert miss.startswith("  miss [%]: 0 vs 0 (+0): no significant difference")
    assert wait.startswith("  mean wait [min]: ") and ": worse (paired t, Holm p = " in wait
    better = _days("learned", 40.0, 0.0).drop(columns="policy")
    write_comparison(better, heur, "ppo", tmp_path, "final_eval", "h", "t")
    assert ": better (paired t" in verdict(tmp_path)[2]
