"""Evaluate a trained CGRSP model against all eleven heuristics on N held-out seeds.

    python evaluate.py runs/train/ppo_hectic_seed0/<time>            # best model, 30 seeds
    python evaluate.py RUN_DIR --seeds 50 --seed0 30000 --day surge  # another day / seeds
    python evaluate.py RUN_DIR --model final_model.zip

Prints and writes (into the run directory) a table of mean wait, miss %, tardiness and cost
with 95 % CIs, paired t-tests and Wilcoxon signed-rank tests against each heuristic (Holm-
adjusted), and a comparison figure (PNG).
"""

import argparse
import logging
import sys
from pathlib import Path

from omegaconf import OmegaConf

from gpu_sched_agents.rl.envs import env_config
from gpu_sched_agents.rl.registry import get_algo, load_model
from gpu_sched_agents.rl.train import baselines, compare_model
from gpu_sched_env.cgrsp.params import DAY_TYPES


def main(argv=None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path, help="a training run directory (holds config.yaml)")
    ap.add_argument("--model", default="best_model.zip", help="model file inside the run directory")
    ap.add_argument("--seeds", type=int, default=30, help="number of seeds (default 30)")
    ap.add_argument("--seed0", type=int, default=20_000, help="first seed (default 20000: never used in training)")
    ap.add_argument("--day", choices=list(DAY_TYPES), default=None, help="day type (default: the training day)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    cfg_path = args.run_dir / "config.yaml"
    if not cfg_path.exists():
        ap.error(f"{args.run_dir}: no config.yaml here; pass a run directory written by train.py")
    model_path = args.run_dir / args.model
    if not model_path.exists():
        ap.error(f"{model_path} does not exist; models in the run: {sorted(p.name for p in args.run_dir.glob('*.zip'))}")
    if args.seeds < 2:
        ap.error(f"--seeds {args.seeds}: need at least 2 for confidence intervals and paired tests")
    cfg = OmegaConf.load(cfg_path)
    if args.day:
        cfg.day.name = args.day
    spec = get_algo(cfg.algo.name)
    model = load_model(cfg.algo.name, model_path, device="cpu")
    seeds = list(range(args.seed0, args.seed0 + args.seeds))
    stem = f"eval_{cfg.day.name}_{args.seeds}seeds_{Path(args.model).stem}"
    compare_model(model, spec, env_config(cfg), seeds, cfg.algo.name, args.run_dir, stem, names=baselines(), progress=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
