"""How does a trained CGRSP policy fare off its training distribution? The generalisation table.

Plays a run's model (default ``best_model.zip``) on other day types and fleet sizes beside
every heuristic on the same held-out seeds (20 000 …), and writes one comparison per
setting (``gen_<setting>.{md,csv,png}`` with 95 % CIs and paired tests, as ``final_eval``)
plus ``generalisation.md``: per setting the learned policy's miss % and mean wait against
RH, CADR and the best heuristic on miss (miss % / wait min), with Holm-adjusted paired
t-test p-values (each setting's family: every heuristic × miss and wait).

    python -m studies generalise runs/train/ppo_hectic_seed0/<time> --seeds 30

Other fleet sizes need ``slot`` action mode (its action space does not depend on C_max) and
a slot table with enough rows (``env.slot_rows`` at training, 10 by default).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from omegaconf import OmegaConf

from gpu_sched_agents.rl.envs import TEST_SEED0, env_config
from gpu_sched_agents.rl.registry import get_algo, load_model
from gpu_sched_agents.rl.train import baselines, compare_model
from gpu_sched_env.core.io import atomic_write_text

SETTINGS: dict[str, tuple[str, dict]] = {
    "hectic": ("hectic", {}),
    "surge": ("surge", {}),
    "normal": ("normal", {}),
    "hectic_cmax7": ("hectic", {"c_max": 7}),
}


def holm_p(tests: pd.DataFrame, vs: str, metric: str) -> float:
    """The Holm-adjusted paired t-test p-value of learned − ``vs`` on ``metric``."""
    return float(tests[(tests.vs == vs) & (tests.metric == metric)].t_p_holm.iloc[0])


def main(argv: list[str] | None = None) -> int:
    """Play the run's model in every setting and write the generalisation table; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--model", default="best_model.zip")
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    a = ap.parse_args(argv)
    if not (a.run_dir / "config.yaml").exists() or not (a.run_dir / a.model).exists():
        ap.error(f"{a.run_dir} needs config.yaml and {a.model} (a run directory written by train.py)")
    if a.seeds < 2:
        ap.error(f"--seeds {a.seeds}: need at least 2 for paired tests")
    cfg = OmegaConf.load(a.run_dir / "config.yaml")
    spec = get_algo(cfg.algo.name)
    model = load_model(cfg.algo.name, a.run_dir / a.model, device="cpu")
    seeds = list(range(TEST_SEED0, TEST_SEED0 + a.seeds))
    rows = []
    for name in a.settings:
        day, extra = SETTINGS[name]
        config = env_config(cfg).replace(day=day, **extra)
        compare_model(model, spec, config, seeds, cfg.algo.name, a.run_dir, f"gen_{name}", names=baselines())
        table = pd.read_csv(a.run_dir / f"gen_{name}.csv").set_index("policy")
        tests = pd.read_csv(a.run_dir / f"gen_{name}_tests.csv")
        heur = table.drop(index=cfg.algo.name)
        best = heur.miss_pct.idxmin()  # ties: the first in table order

        rows.append(
            {
                "setting": name,
                "learned miss %": table.loc[cfg.algo.name, "miss_pct"],
                "learned wait min": table.loc[cfg.algo.name, "mean_wait_min"],
                "rh miss/wait": f"{table.loc['rh', 'miss_pct']:.2f} / {table.loc['rh', 'mean_wait_min']:.1f}",
                "cadr miss/wait": f"{table.loc['cadr', 'miss_pct']:.2f} / {table.loc['cadr', 'mean_wait_min']:.1f}",
                "best on miss": f"{best} {table.loc[best, 'miss_pct']:.2f} / {table.loc[best, 'mean_wait_min']:.1f}",
                "p miss vs rh": holm_p(tests, "rh", "miss_pct"),
                "p miss vs cadr": holm_p(tests, "cadr", "miss_pct"),
                "p wait vs best": holm_p(tests, best, "mean_wait_min"),
            }
        )
    out = pd.DataFrame(rows)
    text = (
        f"# Generalisation of {a.run_dir.name} ({a.model}), {a.seeds} held-out seeds from {TEST_SEED0}\n\n"
        + "```\n"
        + out.to_string(index=False, float_format=lambda x: f"{x:.3g}")
        + "\n```\n"
    )
    atomic_write_text(a.run_dir / "generalisation.md", text)
    print(text)
    return 0
