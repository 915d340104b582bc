"""Evaluate a trained CGRSP model against all eleven heuristics on N held-out seeds.

    python evaluate.py runs/train/ppo_hectic_seed0/<time>            # best model, 30 seeds
    python evaluate.py RUN_DIR --seeds 50 --seed0 30000 --day surge  # another day / seeds
    python evaluate.py RUN_DIR --model final_model.zip
    python evaluate.py RUN_DIR --stock 900                          # under the persistent stock, D = 900 s
    python evaluate.py RUN_DIR --month --reps 10                     # the month protocol (30 days x 10)
    python evaluate.py RUN_DIR --persistence --seeds 20              # fresh and D = 60..3600 s, hectic and surge
    python evaluate.py RUN_DIR --trace jobs.csv --seeds 5           # on a job log (gpu-sched trace writes one)

Prints and writes (into the run directory) a table of mean wait, miss %, tardiness and cost
with 95 % CIs, paired t-tests and Wilcoxon signed-rank tests against each heuristic (Holm-
adjusted), and a comparison figure (PNG).
"""

import argparse
import dataclasses
import logging
import sys
from pathlib import Path

import torch as th
from omegaconf import OmegaConf

from gpu_sched_agents.rl.envs import env_config
from gpu_sched_agents.rl.registry import get_algo, load_model
from gpu_sched_agents.rl.train import baselines, compare_model
from gpu_sched_env.cgrsp.params import DAY_TYPES
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.errors import ConfigError


def main(argv=None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path, help="a training run directory (holds config.yaml)")
    ap.add_argument("--model", default="best_model.zip", help="model file inside the run directory")
    ap.add_argument("--seeds", type=int, default=30, help="number of seeds (default 30)")
    ap.add_argument("--seed0", type=int, default=20_000, help="first seed (default 20000: never used in training)")
    ap.add_argument("--day", choices=list(DAY_TYPES), default=None, help="day type (default: the training day)")
    ap.add_argument(
        "--stock",
        default=None,
        help="stock model to evaluate under: 'fresh' or a mean dwell in s (default: the training one)",
    )
    ap.add_argument(
        "--month",
        action="store_true",
        help="the month protocol instead of single days (30 days of the mix, --reps replications)",
    )
    ap.add_argument("--reps", type=int, default=10, help="month replications (default 10)")
    ap.add_argument(
        "--persistence",
        action="store_true",
        help="evaluate under every stock model of the persistence sweep on the hectic and surge days; writes "
        "persistence_points.csv for scripts/persistence.py --extra",
    )
    ap.add_argument(
        "--label",
        default=None,
        help="label of the learned points (--persistence; default: algo, training stock model and seed)",
    )
    ap.add_argument(
        "--trace",
        type=Path,
        default=None,
        metavar="FILE",
        help="a job log (CSV/Parquet) that replaces each seed's generated jobs: the model and the "
        "heuristics play it with the run's env settings (seeds still draw run times and stock)",
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
    cfg_path = args.run_dir / "config.yaml"
    if not cfg_path.exists():
        ap.error(f"{args.run_dir}: no config.yaml here; pass a run directory written by train.py")
    model_path = args.run_dir / args.model
    if not model_path.exists():
        ap.error(
            f"{model_path} does not exist; models in the run: {sorted(p.name for p in args.run_dir.glob('*.zip'))}"
        )
    if args.seeds < 2:
        ap.error(f"--seeds {args.seeds}: need at least 2 for confidence intervals and paired tests")
    cfg = OmegaConf.load(cfg_path)
    th.set_num_threads(
        int(cfg.train.get("torch_threads", 1))
    )  # as in training: one thread per process (oversubscribed cores crawl)
    if args.day:
        cfg.day.name = args.day
    spec = get_algo(cfg.algo.name)
    model = load_model(cfg.algo.name, model_path, device="cpu")
    config = env_config(cfg)
    tag = ""
    if args.stock is not None:
        try:
            config = with_stock(config, args.stock)
        except ConfigError as e:
            ap.error(f"--stock {args.stock!r}: {e}")
        tag = f"_stock{args.stock}"
    if args.trace is not None:
        seeds = list(range(args.seed0, args.seed0 + args.seeds))
        try:
            return on_trace(
                model,
                config,
                args.trace,
                seeds,
                cfg.algo.name,
                args.run_dir,
                f"trace_{args.trace.stem}_{args.seeds}seeds{tag}_{Path(args.model).stem}",
            )
        except ConfigError as e:
            ap.error(f"--trace {str(args.trace)!r}: {e}")
    if args.persistence:
        return persistence(model, spec, config, args, cfg)
    if args.month:
        if args.reps < 2:
            ap.error(f"--reps {args.reps}: need at least 2 replications for confidence intervals and paired tests")
        return month(
            model,
            spec,
            config,
            cfg.algo.name,
            args.run_dir,
            f"month_{args.reps}reps{tag}_{Path(args.model).stem}",
            args.reps,
        )
    seeds = list(range(args.seed0, args.seed0 + args.seeds))
    stem = f"eval_{cfg.day.name}_{args.seeds}seeds{tag}_{Path(args.model).stem}"
    compare_model(model, spec, config, seeds, cfg.algo.name, args.run_dir, stem, names=baselines(), progress=True)
    return 0


def with_stock(config, stock: str):
    """``config`` under another stock model: ``fresh`` or a mean dwell D [s] of the persistent one."""
    params = {k: v for k, v in config.params.items() if k not in ("stock_process", "stock_dwell_s")}
    return dataclasses.replace(config, params={**params, "stock_process": "fresh", **stock_params(stock)})


def on_trace(model, config, trace: Path, seeds: list[int], label: str, out_dir: Path, stem: str) -> int:
    """The model and every baseline heuristic on a job log; writes ``<stem>.csv`` (per seed) and ``<stem>_summary.csv``.

    The model plays ``CGRSPEnv(config, trace=trace)``; each heuristic is ``simulate`` on the
    same trace with the same simulator parameters, so every policy sees the same jobs, run
    times and stock per seed.
    """
    import pandas as pd

    from gpu_sched_env.cgrsp.batch import run_grid, summarise
    from gpu_sched_env.cgrsp.env import CGRSPEnv
    from gpu_sched_env.cgrsp.evaluation import run_episode
    from gpu_sched_env.core.io import atomic_write_table

    env = CGRSPEnv(config, trace=trace)
    ours = pd.DataFrame([run_episode(model, env, s) for s in seeds]).assign(policy=label, seed=seeds)
    heur = run_grid(
        list(baselines()),
        seeds,
        day=config.day,
        params=dict(config.params),
        trace=trace,
        executor="serial",
        progress=False,
    )
    df = pd.concat([ours[list(heur.columns.intersection(ours.columns))], heur], ignore_index=True)
    summary = summarise(df)
    atomic_write_table(out_dir / f"{stem}.csv", df)
    atomic_write_table(out_dir / f"{stem}_summary.csv", summary.reset_index())
    cols = ["mean_wait_min", "mean_wait_min_ci", "miss_pct", "miss_pct_ci", "mean_tardiness_min", "cost_usd"]
    print(f"{label} and the heuristics on trace {trace} ({env.params.n_jobs} jobs), seeds {seeds[0]}-{seeds[-1]}")
    print(summary[cols].round(2).to_string())
    return 0


PERSISTENCE_DWELLS = ("fresh", "60", "300", "900", "3600")
PERSISTENCE_DAYS = ("hectic", "surge")


def persistence(model, spec, config, args, cfg) -> int:
    """The learned policy under every stock model of the persistence sweep.

    Returns tidy rows for ``scripts/persistence.py --extra``.
    """
    import pandas as pd

    from gpu_sched_agents.rl.train import evaluate_model
    from gpu_sched_env.core.io import atomic_write_table

    p = config.sim_params()
    trained = "fresh" if p.stock_process == "fresh" else f"D={p.stock_dwell_s:g}s"
    label = args.label or f"learned {cfg.algo.name}, trained {trained}, seed {cfg.seed}"
    seeds = list(range(args.seed0, args.seed0 + args.seeds))
    rows = []
    for day in PERSISTENCE_DAYS:
        for dwell in PERSISTENCE_DWELLS:
            runs = evaluate_model(
                model, with_stock(config, dwell).replace(day=day), seeds, spec.masked_env, progress=True
            )
            rows.append(
                pd.DataFrame(
                    {
                        "label": label,
                        "policy": cfg.algo.name,
                        "day": day,
                        "stock": dwell,
                        "dwell_s": float("nan") if dwell == "fresh" else float(dwell),
                        "seed": seeds,
                        "miss_pct": runs.miss_pct.to_numpy(),
                        "mean_wait_min": runs.mean_wait_min.to_numpy(),
                    }
                )
            )
    out = pd.concat(rows, ignore_index=True)
    path = args.run_dir / f"persistence_points_{Path(args.model).stem}.csv"
    atomic_write_table(path, out)
    print(out.groupby(["day", "stock"], sort=False)[["miss_pct", "mean_wait_min"]].mean().round(2).to_string())
    print(f"written {path}")
    return 0


def month(model, spec, config, label: str, out_dir: Path, stem: str, reps: int) -> int:
    """The month protocol: the learned policy against every baseline; writes ``<stem>.{md,csv}``."""
    from gpu_sched_agents.rl.month import month_comparison, month_markdown, month_runs
    from gpu_sched_agents.rl.train import evaluate_model
    from gpu_sched_env.core.io import atomic_write_table, atomic_write_text

    stock = (
        "fresh"
        if config.sim_params().stock_process == "fresh"
        else f"persistent (D = {config.sim_params().stock_dwell_s:g} s)"
    )
    runs = month_runs(
        model,
        label,
        config,
        baselines(),
        range(reps),
        lambda m, c, s: evaluate_model(m, c, s, spec.masked_env, progress=True),
        progress=True,
    )
    table, tests = month_comparison(runs, label)
    atomic_write_table(out_dir / f"{stem}_per_day.csv", runs)
    atomic_write_table(out_dir / f"{stem}.csv", table.reset_index())
    text = month_markdown(table, tests, label, stock, reps)
    atomic_write_text(out_dir / f"{stem}.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
