"""Edge cluster experiments: the five-task example and the 5 -> 100 task scaling study.

    .venv/bin/python -m studies edge-experiment                  # everything, into runs/edge
    .venv/bin/python -m studies edge-experiment --update-docs    # ... and the tables into docs/edge.md
    .venv/bin/python -m studies edge-experiment --sizes 5,10 --seeds 1 --out runs/edge_small

Each repetition s uses workload seed s (scaling), FCFS-LLF stream s and execution-noise
stream s (lognormal run-time factors, --noise-sigma); tables give means and 95 % CIs over
the repetitions (SciPy t-intervals, ``core.stats.mean_ci``).

Resumable: each (scheduler, n_tasks, seed) point is one cell of the shared resume store
(``gpu_sched_env/core/store.py``) under <out>/cells/, keyed by the point, the run's settings and the
code version (package version + hash of the edge simulator's and schedulers' sources); a
rerun computes only the points not stored under the current key (``--force`` recomputes all).
The run's configuration is recorded in <out>/config.json.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from gpu_sched_agents.heuristics.edge import LLF_STREAM, BaselineILP, FcfsLLF, MemBatchILP
from gpu_sched_agents.heuristics.edge.ilp import DEFERRAL, FINISH, GPU_SHARE, ROUNDS, SolverConfig
from gpu_sched_agents.heuristics.edge.llf import SPREAD_THRESHOLD, TIES, UTILISATION, LLFConfig
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import (
    atomic_write_json,
    atomic_write_table,
    atomic_write_text,
    replace_doc_section,
)
from gpu_sched_env.core.rng import stream
from gpu_sched_env.core.stats import mean_ci
from gpu_sched_env.core.store import CellStore
from gpu_sched_env.edge.model import EdgeProblem, jetson_cluster
from gpu_sched_env.edge.profiles import default_profiles, load_profiles
from gpu_sched_env.edge.sim import execution_noise, simulate
from gpu_sched_env.edge.workload import five_task_example, random_workloads, tasks_from_workloads
from studies.edge.report import (
    LABELS,
    md_table,
    plot_gantt,
    plot_scaling,
    plot_utilisation,
    save_fig,
)
from studies.edge.study import (
    FIVE_MAKESPAN_MIN,
    FIVE_TOTAL_MIN,
    GAIN_100_PCT,
    MAKESPAN_100_H,
    llf_sensitivity,
    measured_causes,
    published_table,
    sensitivity,
    split_placement,
)

MAIN = ("membatch", "baseline_ilp", "fcfs_llf")
ABLATION = ("baseline_ilp-nosplit", "fcfs_llf-nosplit")
NOISE_STREAM = "edge.noise"
# the study's figures: five-task makespan and total computation [min]; makespan at 100 tasks [h]
STUDY_FIVE = {k: (FIVE_MAKESPAN_MIN[k], FIVE_TOTAL_MIN[k]) for k in FIVE_MAKESPAN_MIN}
STUDY_100 = MAKESPAN_100_H
GAIN_TOLERANCE_PTS = 10.0  # documented tolerance on MemBatch's gains at 100 tasks [percentage points]
POOL = 1000  # workloads drawn per seed; a run with n tasks uses the first n (nested sizes)
DEFAULT_SIZES = "5,10,15,20,25,30,40,50,60,70,80,90,100"
# the code that decides a point's numbers: the edge model and simulator, its profiles, the schedulers
EDGE_SOURCES = (
    "gpu_sched_env/edge/*.py",
    "gpu_sched_env/edge/*.csv",
    "gpu_sched_env/core/rng.py",
    "agents/heuristics/edge/*.py",
    "studies/edge/study.py",
)


def parse_args(argv=None) -> argparse.Namespace:
    """The command line, checked (ConfigError names the bad option)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/edge", help="output folder (default runs/edge)")
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help=f"comma-separated task counts (default {DEFAULT_SIZES})")
    ap.add_argument("--seeds", type=int, default=10, help="repetitions 0..N-1 per size (default 10)")
    ap.add_argument(
        "--noise-sigma",
        type=float,
        default=0.05,
        help="log-sd of the lognormal run-time noise (default 0.05, ~5 %% run-to-run; 0 = none)",
    )
    ap.add_argument(
        "--update-docs",
        nargs="?",
        const="docs/edge.md",
        default=None,
        help="write the result tables between the edge-results markers of this file",
    )
    ap.add_argument(
        "--time-limit",
        type=float,
        default=1.0,
        help="CP-SAT limit per ILP solve, deterministic units ~ s (default 1.0)",
    )
    ap.add_argument("--wall-time", action="store_true", help="treat --time-limit as wall seconds (not reproducible)")
    ap.add_argument("--finish", default="max", choices=FINISH, help="device finish-time model in the ILP (default max)")
    ap.add_argument(
        "--rounds",
        default="load_aware",
        choices=ROUNDS,
        help="ILP rounds count work committed earlier (load_aware, default) or start idle (independent)",
    )
    ap.add_argument(
        "--baseline-gpu-share",
        default="enforce",
        choices=GPU_SHARE,
        help="baseline ILP: enforce the per-device GPU-share sum (default, the study) or ignore it",
    )
    ap.add_argument(
        "--baseline-deferral",
        default="auto",
        choices=DEFERRAL,
        help="baseline ILP: price of a task left for the next round (auto = best_time)",
    )
    ap.add_argument("--llf-utilisation", default="share", choices=UTILISATION, help="FCFS-LLF: what it ranks by")
    ap.add_argument(
        "--llf-spread-threshold",
        type=float,
        default=SPREAD_THRESHOLD,
        help="FCFS-LLF: utilisation below this ranks as idle (Ray's 0.5; 0 = off)",
    )
    ap.add_argument("--llf-ties", default="random", choices=TIES, help="FCFS-LLF: order of equal ranks")
    ap.add_argument(
        "--sensitivity-seeds",
        type=int,
        default=3,
        help="seeds of the variant tables at the largest size, no noise (default 3; 0 = skip)",
    )
    ap.add_argument("--include-head", action="store_true", help="let the head Orin NX run tasks too")
    ap.add_argument("--profiles", default=None, help="profile table CSV/YAML (default: the built-in table)")
    ap.add_argument("--llf-top-k-fraction", type=float, default=0.2)
    ap.add_argument("--llf-top-k-min", type=int, default=2)
    ap.add_argument("--no-ablation", action="store_true", help="skip the no-splitting ablations of the baselines")
    ap.add_argument("--no-figures", action="store_true")
    ap.add_argument("--force", action="store_true", help="recompute finished points")
    args = ap.parse_args(argv)
    try:
        args.sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        raise ConfigError(f"--sizes = {args.sizes!r}: give comma-separated integers, e.g. 5,10,20") from None
    if not args.sizes or min(args.sizes) < 1 or max(args.sizes) > POOL:
        raise ConfigError(f"--sizes = {args.sizes!r}: each size must be in [1, {POOL}]")
    if args.seeds < 1:
        raise ConfigError(f"--seeds = {args.seeds!r}: must be >= 1")
    if args.sensitivity_seeds < 0:
        raise ConfigError(f"--sensitivity-seeds = {args.sensitivity_seeds!r}: must be >= 0")
    if not args.noise_sigma >= 0:
        raise ConfigError(f"--noise-sigma = {args.noise_sigma!r}: must be >= 0")
    return args


def solver_config(args) -> SolverConfig:
    """MemBatch's solver settings (the baseline's add its GPU-share and deferral options)."""
    return SolverConfig(
        time_limit_s=args.time_limit, deterministic=not args.wall_time, finish=args.finish, rounds=args.rounds
    )


def llf_config(args) -> LLFConfig:
    """FCFS-LLF's options from the command line."""
    return LLFConfig(
        args.llf_top_k_fraction, args.llf_top_k_min, args.llf_utilisation, args.llf_spread_threshold, args.llf_ties
    )


def make(name: str, args, cluster):
    """The scheduler ``name`` with the run's solver and FCFS-LLF options."""
    solver = solver_config(args)
    base = solver.replace(gpu_share=args.baseline_gpu_share, deferral=args.baseline_deferral)
    thr = cluster.min_mem_gb
    table = {
        "membatch": lambda: MemBatchILP(solver, thr),
        "baseline_ilp": lambda: BaselineILP(base, thr),
        "fcfs_llf": lambda: FcfsLLF(llf_config(args), thr),
        "baseline_ilp-nosplit": lambda: BaselineILP(base, split=False),
        "fcfs_llf-nosplit": lambda: FcfsLLF(llf_config(args), split=False),
    }
    return table[name]()


def run_point(name, tasks, cluster, seed, args):
    """One (scheduler, tasks, seed) point: its row, the simulation and the solver reports."""
    sched = make(name, args, cluster)
    problem = EdgeProblem(tuple(tasks), cluster)
    plan = sched.plan(problem, stream(seed, LLF_STREAM))
    noise = execution_noise(plan.tasks, args.noise_sigma, stream(seed, NOISE_STREAM))
    sim = simulate(plan, cluster, noise)
    reps = plan.reports
    peak = sim.peak_utilisation()
    row = {
        "scheduler": name,
        "seed": seed,
        "n_tasks": len(tasks),
        "n_placed": len(plan.tasks),
        "makespan_s": sim.makespan_s,
        "makespan_h": sim.makespan_s / 3600,
        "makespan_min": sim.makespan_s / 60,
        "total_comp_h": sim.total_comp_s / 3600,
        "total_comp_min": sim.total_comp_s / 60,
        "runtime_s": plan.runtime_s,
        "peak_util_pct": 100 * float(peak.mean()),
        "peak_util_max_pct": 100 * float(peak.max()),
        "mean_util_pct": 100 * float(sim.mean_utilisation().mean()),
        "n_solves": len(reps),
        "n_optimal": sum(r.status == "OPTIMAL" for r in reps),
        "n_feasible": sum(r.status == "FEASIBLE" for r in reps),
        "n_fallback": sum(r.fallback for r in reps),
        "max_gap": max((r.gap for r in reps if r.gap == r.gap), default=float("nan")),
        "n_batches": len({r.batch for r in reps}) if reps else 0,
        "split_placement": split_placement(sim, cluster),
    }
    solves = pd.DataFrame([r.as_dict() for r in reps])
    return row, sim, solves


def labels(cluster):
    """The cluster's device labels."""
    return cluster.labels()


def five_task(args, cluster, table, out: Path, names):
    """The five-task example for every scheduler and repetition (schedules and figures under ``out``)."""
    tasks = five_task_example(table, cluster)
    rows, scheds, solves = [], {}, []
    for seed in range(args.seeds):
        for name in names:
            row, sim, sv = run_point(name, tasks, cluster, seed, args)
            rows.append(row)
            if seed == 0:
                scheds[name] = sim.schedule
                atomic_write_table(out / f"five_task_schedule_{name}.csv", sim.schedule)
                if len(sv):
                    solves.append(sv.assign(scheduler=name))
    df = pd.DataFrame(rows)
    atomic_write_table(out / "five_task.csv", df)
    if solves:
        atomic_write_table(out / "five_task_solves.csv", pd.concat(solves))
    if not args.no_figures:
        for name in MAIN:
            save_fig(
                plot_gantt(
                    scheds[name],
                    labels(cluster),
                    f"Five-task example (rep 0) — {LABELS[name]}",
                    time_unit=60,
                    time_label="time [min]",
                ),
                out / f"gantt_five_{name}.png",
            )
        save_fig(
            plot_utilisation(
                {k: scheds[k] for k in MAIN},
                labels(cluster),
                "GPU utilisation — five-task example",
                time_unit=60,
                time_label="time [min]",
            ),
            out / "utilisation_five.png",
        )
    return df


def run_config(args) -> dict:
    """The settings a point's numbers depend on (besides scheduler, size, seed and the code)."""
    cfg = {
        k: v
        for k, v in vars(args).items()
        if k not in ("out", "no_figures", "force", "seeds", "sizes", "update_docs", "sensitivity_seeds", "no_ablation")
    }
    if args.profiles is not None:  # the table's content, not only its name
        cfg["profiles_sha1"] = hashlib.sha1(Path(args.profiles).read_bytes()).hexdigest()
    return cfg


def scaling(args, cluster, table, out: Path, names):
    """The scaling study, one store cell per point; finished points are read back."""
    store = CellStore(out / "cells", EDGE_SOURCES)
    schedules = out / "schedules"
    cfg = run_config(args)
    todo = [(name, n, s) for s in range(args.seeds) for n in args.sizes for name in names]
    keys = {p: store.key({"scheduler": p[0], "n_tasks": p[1], "seed": p[2], "pool": POOL, **cfg}) for p in todo}
    nmax = max(args.sizes)
    have = set() if args.force else store.keys()
    # a figure's schedule (largest size, seed 0) is kept beside the store, named by its point's key
    need = [
        p
        for p in todo
        if keys[p] not in have or (p[1] == nmax and p[2] == 0 and not (schedules / f"{keys[p]}.csv").is_file())
    ]
    print(f"edge scaling: {len(todo) - len(need)} of {len(todo)} points from the store", file=sys.stderr)
    pools = {s: random_workloads(POOL, stream(s, "tasks")) for s in range(args.seeds)}
    with store.writer(flush_every=20) as w:
        bar = tqdm(need, desc="edge scaling", unit="pt", file=sys.stderr)
        for name, n, s in bar:
            bar.set_postfix_str(f"{name} n={n} seed={s}")
            tasks = tasks_from_workloads(pools[s][:n], table, cluster)
            row, sim, _ = run_point(name, tasks, cluster, s, args)
            if n == nmax and s == 0:
                atomic_write_table(schedules / f"{keys[(name, n, s)]}.csv", sim.schedule)
            w.add(keys[(name, n, s)], [row])
    rows = store.rows([keys[p] for p in todo]).drop(columns="key")
    df = pd.DataFrame(rows).sort_values(["scheduler", "n_tasks", "seed"]).reset_index(drop=True)
    atomic_write_table(out / "scaling.csv", df)
    if not args.no_figures:
        save_fig(
            plot_scaling(
                df,
                "makespan_h",
                "makespan [h]",
                "Makespan vs number of tasks (mean, min–max over seeds)",
                schedulers=MAIN,
            ),
            out / "makespan_vs_tasks.png",
        )
        save_fig(
            plot_scaling(
                df,
                "runtime_s",
                "scheduler runtime [s]",
                "Scheduler runtime vs number of tasks",
                logy=True,
                schedulers=MAIN,
            ),
            out / "runtime_vs_tasks.png",
        )
        scheds = {k: pd.read_csv(schedules / f"{keys[(k, nmax, 0)]}.csv") for k in MAIN}
        save_fig(
            plot_utilisation(scheds, labels(cluster), f"GPU utilisation — {nmax} tasks, seed 0"),
            out / f"utilisation_n{nmax}.png",
        )
        for k in MAIN:
            save_fig(
                plot_gantt(scheds[k], labels(cluster), f"{nmax} tasks, seed 0 — {LABELS[k]}"),
                out / f"gantt_n{nmax}_{k}.png",
            )
    return df


def ci_cell(x, fmt: str = ".1f") -> str:
    """``mean [lo, hi]`` (95 % t-interval) of a sample."""
    c = mean_ci(list(x))
    if c.n < 2:
        return format(c.mean, fmt)
    return f"{format(c.mean, fmt)} [{format(c.lo, fmt)}, {format(c.hi, fmt)}]"


def five_table(five: pd.DataFrame) -> pd.DataFrame:
    """The five-task table beside the study's figures."""
    rows = []
    for name, g in five.groupby("scheduler", sort=False):
        study = [f"{v:g}" for v in STUDY_FIVE[name]] if name in STUDY_FIVE else ["–", "–"]
        rows.append(
            {
                "scheduler": LABELS.get(name, name),
                "makespan [min]": ci_cell(g.makespan_min),
                "study": study[0],
                "total computation [min]": ci_cell(g.total_comp_min),
                "study total": study[1],
                "GPU util, study def. [%]": ci_cell(g.peak_util_pct),
                "GPU util, time average [%]": ci_cell(g.mean_util_pct),
                "sub-tasks": int(g.n_placed.iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def gains(df: pd.DataFrame, n: int) -> pd.DataFrame:
    """MemBatch's makespan change vs each baseline at ``n`` tasks, paired per repetition."""
    last = df[df.n_tasks == n].pivot(index="seed", columns="scheduler", values="makespan_h")
    rows = []
    for other, study in GAIN_100_PCT.items():
        if {"membatch", other} <= set(last.columns):
            g = (last.membatch / last[other] - 1) * 100
            c = mean_ci(g.to_list())
            rows.append(
                {
                    "MemBatch vs": LABELS[other],
                    "change [%]": ci_cell(g),
                    "study [%]": f"{study:g}",
                    "difference [points]": f"{c.mean - study:+.1f}",
                    f"within ±{GAIN_TOLERANCE_PTS:g} points": abs(c.mean - study) <= GAIN_TOLERANCE_PTS,
                }
            )
    return pd.DataFrame(rows)


def variant_tables(args, cluster, table, out: Path):
    """The ILP and FCFS-LLF sensitivity tables at the largest size (no noise); None when skipped."""
    if args.sensitivity_seeds == 0:
        return None, None
    nmax = max(args.sizes)
    five = five_task_example(table, cluster)
    scaled = {
        s: tasks_from_workloads(random_workloads(POOL, stream(s, "tasks"))[:nmax], table, cluster)
        for s in range(args.sensitivity_seeds)
    }
    solver = solver_config(args)
    print(f"variant tables: {len(scaled)} seeds x {nmax} tasks ...", file=sys.stderr)
    sens = sensitivity(five, scaled, cluster, solver, llf_config(args))
    mb = {
        s: simulate(MemBatchILP(solver).plan(EdgeProblem(tuple(t), cluster)), cluster).makespan_s / 3600
        for s, t in scaled.items()
    }
    llf = llf_sensitivity(five, scaled, cluster, mb)
    atomic_write_table(out / "sensitivity.csv", sens)
    atomic_write_table(out / "llf_sensitivity.csv", llf)
    return sens, llf


def summarise(five: pd.DataFrame, df: pd.DataFrame, args, out: Path, sens=None, llf=None, given=()) -> str:
    """The Markdown report (report.md, and the doc block with ``--update-docs``)."""
    nmax = max(args.sizes)
    cmd = "`.venv/bin/python -m studies edge-experiment " + " ".join(given) + "`"
    g = df.groupby(["n_tasks", "scheduler"]).makespan_h.mean().unstack("scheduler").reset_index()
    rt = df.groupby(["n_tasks", "scheduler"]).runtime_s.mean().unstack("scheduler").reset_index()
    big = df[df.n_tasks == nmax]
    order = [k for k in (*MAIN, *ABLATION) if k in set(big.scheduler)]
    at_n = pd.DataFrame(
        [
            {
                "scheduler": LABELS.get(k, k),
                "makespan [h]": ci_cell(s.makespan_h),
                "study [h]": f"{STUDY_100[k]:g}" if k in STUDY_100 else "–",
                "GPU util, study def. [%]": ci_cell(s.peak_util_pct),
                "GPU util, time average [%]": ci_cell(s.mean_util_pct),
                "runtime [s]": ci_cell(s.runtime_s, ".3f"),
            }
            for k, s in ((k, big[big.scheduler == k]) for k in order)
        ]
    )
    st = df.groupby("scheduler")[["n_solves", "n_optimal", "n_feasible", "n_fallback"]].sum().reset_index()
    causes = measured_causes(five, df, nmax, sens, llf, args.time_limit)
    pub = published_table(five, df, nmax, causes)
    lines = [
        f"Measured with {cmd}: {args.seeds} repetitions (rep s: workload seed s, FCFS-LLF stream s, "
        f"run-time noise stream s, lognormal log-sd {args.noise_sigma:g}); mean [95 % CI].",
        "",
        f"**Published vs ours** (means of the run below; the study's largest size is 100, ours {nmax})",
        "",
        md_table(pub),
        "",
        "**Five-task example** (one task per dataset)",
        "",
        md_table(five_table(five)),
        "",
        f"**At {nmax} tasks**",
        "",
        md_table(at_n),
        "",
        md_table(gains(df, nmax)),
        "",
        "**Mean makespan [h] per number of tasks**",
        "",
        md_table(g),
        "",
        "**Mean scheduler runtime [s]**",
        "",
        md_table(rt, ".3f"),
        "",
        "**Solver status over all ILP solves**",
        "",
        md_table(st, ".0f"),
    ]
    if df.max_gap.notna().any():
        lines += ["", f"Largest relative gap: {df.max_gap.max():.2e}"]
    if sens is not None:
        lines += [
            "",
            f"**Sensitivity to the ILP variants** ({nmax} tasks, seeds 0-{args.sensitivity_seeds - 1}, "
            "no noise; five tasks: the example without noise; the default model is marked)",
            "",
            md_table(sens),
            "",
            f"**Sensitivity to FCFS-LLF's ranking** (five tasks: seeds 0-9; {nmax} tasks: seeds "
            f"0-{args.sensitivity_seeds - 1}; no noise; MemBatch in the default model)",
            "",
            md_table(llf),
        ]
    text = "\n".join(lines)
    atomic_write_text(out / "report.md", f"# Edge experiment ({out})\n\n" + text + "\n")
    if args.update_docs:
        replace_doc_section(args.update_docs, "edge-results", text)
    return text


def main(argv=None) -> int:
    """Run the experiment; returns the exit status."""
    given = list(sys.argv[1:] if argv is None else argv)  # the command line, for the record
    with np.printoptions(precision=3):
        return _main(parse_args(given), given)


def _main(args: argparse.Namespace, given: list[str]) -> int:
    out = Path(args.out)
    cluster = jetson_cluster(include_head=args.include_head)
    table = default_profiles() if args.profiles is None else load_profiles(args.profiles)
    names = MAIN + (() if args.no_ablation else ABLATION)
    atomic_write_json(out / "config.json", {**run_config(args), "seeds": args.seeds, "sizes": args.sizes})
    atomic_write_text(out / "command.txt", " ".join(["python -m studies edge-experiment", *given]) + "\n")
    five = five_task(args, cluster, table, out, names)
    df = scaling(args, cluster, table, out, names)
    sens, llf = variant_tables(args, cluster, table, out)
    print(summarise(five, df, args, out, sens, llf, given))
    return 0
