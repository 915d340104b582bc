"""A run folder of a learner and the rules on the same eight seeds, without training: the judges' input."""

import pandas as pd
import yaml

from gpu_sched_agents.rl.compare import comparison


def run_folder(tmp_path, learned_wait, learned_miss, name="run"):
    """``tmp_path / name`` as train.py leaves it: per-seed rows of ppo and three rules, paired tests, config.yaml."""
    seeds = list(range(8))
    rows = []
    for s in seeds:
        rows.append({"policy": "ppo", "seed": s, "miss_pct": learned_miss, "mean_wait_min": learned_wait + 0.1 * s})
        rows.append(
            {
                "policy": "spt_rescue_defer_exp",
                "seed": s,
                "miss_pct": 0.0,
                "mean_wait_min": 50.0 + 0.1 * s + 0.05 * (s % 2),
            }
        )
        rows.append(
            {"policy": "cadr_defer_exp", "seed": s, "miss_pct": 0.1, "mean_wait_min": 40.0 + 0.1 * s}
        )  # lower wait, but misses
        rows.append({"policy": "fifo", "seed": s, "miss_pct": 20.0, "mean_wait_min": 150.0 + s})
    per_seed = pd.DataFrame(rows)
    for m in ("mean_tardiness_min", "cost_usd"):
        per_seed[m] = 0.0
    table, tests = comparison(
        per_seed[per_seed.policy == "ppo"].drop(columns="policy"), per_seed[per_seed.policy != "ppo"], label="ppo"
    )
    d = tmp_path / name
    d.mkdir()
    per_seed.to_csv(d / "final_eval_per_seed.csv", index=False)
    tests.to_csv(d / "final_eval_tests.csv", index=False)
    (d / "config.yaml").write_text(
        yaml.safe_dump(
            {"algo": {"name": "ppo"}, "seed": 3, "env": {"params": {"stock_process": "markov", "stock_dwell_s": 900}}}
        )
    )
    return d
