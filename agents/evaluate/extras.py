"""Two looks beside the standard protocol: a policy on a job log, and the persistence sweep's points.

    gpu-sched evaluate POLICY --trace jobs.csv --seeds 5      # the policy and every heuristic on a job log
    gpu-sched evaluate POLICY --persistence --seeds 20        # fresh and D = 60..3600 s on hectic and surge

``--trace``: the log is read once (``Trace.load``); the policy plays ``CGRSPEnv(config, trace=...)``
(a rule: ``simulate`` on the trace), each heuristic and deferring rule ``simulate`` on the same
jobs with the same simulator parameters, so every policy sees the same jobs, run times and stock
per seed; writes ``trace_<stem>.csv`` (per seed), ``trace_<stem>_summary.csv`` and
``trace_<stem>.json`` (the log's file, SHA-256 and rows) into ``--out``.
``--persistence``: tidy rows for ``python -m studies persistence --extra`` (``persistence_points.csv``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from gpu_sched_agents.evaluate.policy import Policy, env_for, learned_days, played
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.io import atomic_write_json, atomic_write_table

if TYPE_CHECKING:
    from gpu_sched_env.cgrsp.trace import Trace

PERSISTENCE_DWELLS = ("fresh", "60", "300", "900", "3600")
PERSISTENCE_DAYS = ("hectic", "surge")
TRACE_COLS = ["mean_wait_min", "mean_wait_min_ci", "miss_pct", "miss_pct_ci", "mean_tardiness_min", "cost_usd"]


def baselines() -> list[str]:
    """The published heuristics and the deferring rules (``final_eval``'s baselines)."""
    from gpu_sched_agents.rl.train import baselines as names

    return list(names())


def trace_files(trace: Path) -> list[str]:
    """The files :func:`on_trace` writes into ``--out`` (relative)."""
    stem = f"trace_{Path(trace).stem}"
    return [f"{stem}.csv", f"{stem}_summary.csv", f"{stem}.json"]  # per seed, summary, the log's file and hash


PERSISTENCE_FILES = ["persistence_points.csv"]  # what persistence() writes into --out


def on_trace(pol: Policy, trace: Trace, seeds: list[int], out: Path) -> Path:
    """The policy and every baseline on the job log ``trace`` (a ``Trace``, read once); returns the summary's path.

    Every run plays the jobs ``trace`` holds, not its file again: a log replaced meanwhile changes nothing.
    """
    from gpu_sched_agents.rl.envs import strict
    from gpu_sched_env.cgrsp.batch import run_grid, summarise
    from gpu_sched_env.cgrsp.env import CGRSPEnv
    from gpu_sched_env.cgrsp.evaluation import run_episode

    config = pol.config
    params = dict(config.params)
    names = [n for n in baselines() if n != pol.spec]
    heur = run_grid(names, seeds, day=config.day, params=params, trace=trace, executor="serial", progress=False)
    if pol.kind == "rule":
        own = run_grid([pol.spec], seeds, day=config.day, params=params, trace=trace, executor="serial")
    else:
        env = CGRSPEnv(strict(config), trace=trace)  # a policy's illegal action raises
        if hasattr(pol.model, "bind"):
            pol.model.bind(env)
        where = f"trace {Path(str(trace.source)).name}"
        rows = [played(pol, where, s, lambda s=s: run_episode(pol.model, env, s)) for s in seeds]
        own = pd.DataFrame(rows).assign(seed=seeds)
        env.close()
    own = own.assign(policy=pol.label)
    df = pd.concat([own[list(heur.columns.intersection(own.columns))], heur], ignore_index=True)
    summary = summarise(df)
    per_seed, summary_file, provenance = trace_files(Path(str(trace.source)))
    atomic_write_json(out / provenance, {**trace.provenance(), "policy": pol.label, "seeds": seeds})
    atomic_write_table(out / per_seed, df)
    path = atomic_write_table(out / summary_file, summary.reset_index())
    print(
        f"{pol.label} and the baselines on trace {trace.source} (sha256 {trace.sha256}, {trace.n_jobs} jobs), "
        f"seeds {seeds[0]}-{seeds[-1]}"
    )
    print(summary[TRACE_COLS].round(2).to_string())
    return path


def persistence(pol: Policy, seeds: list[int], out: Path, workers: int) -> Path:
    """The policy under every stock model of the persistence sweep; returns ``persistence_points.csv``."""
    from gpu_sched_env.cgrsp.batch import run_grid

    p = pol.config.sim_params()
    trained = "fresh" if p.stock_process == "fresh" else f"D={p.stock_dwell_s:g}s"
    label = pol.label if pol.kind == "rule" else f"{pol.label}, trained {trained}"
    rows = []
    for day in PERSISTENCE_DAYS:
        for dwell in PERSISTENCE_DWELLS:
            stock = stock_params(dwell)
            if pol.kind == "rule":
                runs = run_grid([pol.spec], seeds, day=day, params=pol.params(stock), executor="serial")
            else:
                env_for(pol, day, stock)  # checked before the days run
                runs = learned_days(pol, day, stock, seeds, workers)
            rows.append(
                pd.DataFrame(
                    {
                        "label": label,
                        "policy": pol.algo or pol.label,
                        "day": day,
                        "stock": dwell,
                        "dwell_s": float("nan") if dwell == "fresh" else float(dwell),
                        "seed": seeds,
                        "miss_pct": runs.miss_pct.to_numpy(),
                        "mean_wait_min": runs.mean_wait_min.to_numpy(),
                    }
                )
            )
    df = pd.concat(rows, ignore_index=True)
    path = atomic_write_table(out / PERSISTENCE_FILES[0], df)
    print(df.groupby(["day", "stock"], sort=False)[["miss_pct", "mean_wait_min"]].mean().round(2).to_string())
    return path


__all__ = ["PERSISTENCE_DAYS", "PERSISTENCE_DWELLS", "PERSISTENCE_FILES", "on_trace", "persistence", "trace_files"]
