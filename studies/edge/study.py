"""The study's published figures next to ours, and how the gap depends on the model variants.

:func:`sensitivity` reruns MemBatch and the baseline ILP for every ILP variant (baseline
GPU-share constraint on/off x load-aware rounds on/off x the baseline's deferral price) and
:func:`llf_sensitivity` FCFS-LLF for its ranking options, both without run-time noise so
that the tables show the model's effect alone. :func:`published_table` compares the main
run with the study, row by row: ``faithful``, ``deviates (size, cause)`` or ``missing``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.edge.ilp import (
    GPU_SHARE,
    ROUNDS,
    SolverConfig,
    baseline_ilp_schedule,
    membatch_schedule,
)
from gpu_sched_agents.heuristics.edge.llf import LLFConfig, fcfs_llf_schedule
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.model import Cluster, Task
from gpu_sched_env.edge.sim import SimResult, simulate

# the study's figures (spec: shared/spec/membatch.md)
FIVE_MAKESPAN_MIN = {"membatch": 115.0, "baseline_ilp": 123.0, "fcfs_llf": 155.0}
FIVE_TOTAL_MIN = {"membatch": 282.0, "baseline_ilp": 221.0, "fcfs_llf": 404.04}
MAKESPAN_100_H = {"membatch": 25.0, "baseline_ilp": 64.0, "fcfs_llf": 48.0}
GAIN_100_PCT = {"baseline_ilp": -61.0, "fcfs_llf": -48.0}
RUNTIME_100_S = {"membatch": 36.7, "baseline_ilp": 130.0, "fcfs_llf": 0.11}
TOLERANCE = 0.05  # a number within 5 % (or 5 points for a change in %) of the study's counts as reproduced
LLF_STREAM = "fcfs_llf"


@dataclass(frozen=True)
class IlpVariant:
    """One cell of the ILP sensitivity table (``SolverConfig`` options)."""

    gpu_share: str  # the baseline's GPU-share sum: "enforce" (study) / "ignore"
    rounds: str  # both ILPs: "load_aware" / "independent"
    deferral: str  # the baseline's price of a deferred task: "best_time" / "penalty"

    @property
    def is_default(self) -> bool:
        """The project's default model."""
        return (self.gpu_share, self.rounds, self.deferral) == ("enforce", "load_aware", "best_time")

    def membatch(self, base: SolverConfig) -> SolverConfig:
        """MemBatch's solver settings (it always enforces the GPU share)."""
        return base.replace(rounds=self.rounds, gpu_share="enforce", deferral="penalty")

    def baseline(self, base: SolverConfig) -> SolverConfig:
        """The baseline ILP's solver settings."""
        return base.replace(rounds=self.rounds, gpu_share=self.gpu_share, deferral=self.deferral)


ILP_VARIANTS = tuple(IlpVariant(s, r, d) for d, s, r in itertools.product(("best_time", "penalty"), GPU_SHARE, ROUNDS))

# FCFS-LLF: the default, each option changed alone, and the earlier model
LLF_VARIANTS: dict[str, LLFConfig] = {
    "default (share, threshold 0.5, random ties)": LLFConfig(),
    "utilisation = share_hours": LLFConfig(utilisation="share_hours"),
    "spread_threshold = 0": LLFConfig(spread_threshold=0.0),
    "ties = index": LLFConfig(ties="index"),
    "earlier model (share_hours, 0, index)": LLFConfig(utilisation="share_hours", spread_threshold=0.0, ties="index"),
}


def split_placement(sim: SimResult, cluster: Cluster) -> str:
    """Device types of the first split task's shards, in shard order (e.g. ``"nano+xavier_nx"``)."""
    df = sim.schedule[sim.schedule.task != sim.schedule.parent]
    if df.empty:
        return ""
    first = df[df.parent == df.parent.iloc[0]].sort_values("task")
    return "+".join(cluster.devices[j].dtype for j in first.device)


def sensitivity(
    five: Sequence[Task],
    scaled: Mapping[int, Sequence[Task]],
    cluster: Cluster,
    solver: SolverConfig,
    llf: LLFConfig | None = None,
) -> pd.DataFrame:
    """MemBatch and baseline makespans for every :data:`ILP_VARIANTS` entry (no noise).

    Args:
        five: the five-task example.
        scaled: seed -> the large workload of that seed (the same n for every seed).
        cluster: the workers.
        solver: time limit etc.; the variant's options replace its ``rounds``,
            ``gpu_share`` and ``deferral``.
        llf: FCFS-LLF options for the "vs FCFS-LLF" column.
    """
    llf_mk = {
        s: simulate(fcfs_llf_schedule(t, cluster, stream(s, LLF_STREAM), llf), cluster).makespan_s
        for s, t in scaled.items()
    }
    cache: dict[tuple, float] = {}

    def mk(kind: str, cfg: SolverConfig, key, tasks) -> float:
        k = (kind, cfg, key)
        if k not in cache:
            fn = membatch_schedule if kind == "membatch" else baseline_ilp_schedule
            cache[k] = simulate(fn(tasks, cluster, cfg), cluster).makespan_s
        return cache[k]

    rows = []
    for v in ILP_VARIANTS:
        mcfg, bcfg = v.membatch(solver), v.baseline(solver)
        mb = np.array([mk("membatch", mcfg, s, t) for s, t in scaled.items()])
        base = np.array([mk("baseline", bcfg, s, t) for s, t in scaled.items()])
        llf_arr = np.array([llf_mk[s] for s in scaled])
        rows.append(
            {
                "baseline GPU share": v.gpu_share,
                "rounds": v.rounds,
                "baseline deferral": v.deferral,
                "default": v.is_default,
                "five: MemBatch [min]": mk("membatch", mcfg, "five", five) / 60,
                "five: baseline [min]": mk("baseline", bcfg, "five", five) / 60,
                "MemBatch [h]": mb.mean() / 3600,
                "baseline [h]": base.mean() / 3600,
                "FCFS-LLF [h]": llf_arr.mean() / 3600,
                "MemBatch vs baseline [%]": float(np.mean(mb / base - 1) * 100),
                "MemBatch vs FCFS-LLF [%]": float(np.mean(mb / llf_arr - 1) * 100),
            }
        )
    return pd.DataFrame(rows)


def llf_sensitivity(
    five: Sequence[Task],
    scaled: Mapping[int, Sequence[Task]],
    cluster: Cluster,
    membatch_h: Mapping[int, float],
    five_seeds: int = 10,
) -> pd.DataFrame:
    """FCFS-LLF per :data:`LLF_VARIANTS` entry: five-task makespan, total, where Chest X-ray runs (no noise).

    ``membatch_h``: seed -> MemBatch's makespan [h] on ``scaled[seed]`` (for the gain column).
    """
    rows = []
    for name, cfg in LLF_VARIANTS.items():
        sims = [
            simulate(fcfs_llf_schedule(five, cluster, stream(s, LLF_STREAM), cfg), cluster) for s in range(five_seeds)
        ]
        where = [split_placement(s, cluster) for s in sims]
        big = np.array(
            [
                simulate(fcfs_llf_schedule(t, cluster, stream(s, LLF_STREAM), cfg), cluster).makespan_s / 3600
                for s, t in scaled.items()
            ]
        )
        mb = np.array([membatch_h[s] for s in scaled])
        rows.append(
            {
                "FCFS-LLF variant": name,
                "five: makespan [min]": float(np.mean([s.makespan_s for s in sims]) / 60),
                "five: total [min]": float(np.mean([s.total_comp_s for s in sims]) / 60),
                "five: min total [min]": float(np.min([s.total_comp_s for s in sims]) / 60),
                "sub-tasks both on Nanos": f"{sum(w == 'nano+nano' for w in where)}/{five_seeds}",
                "a sub-task on a Nano": f"{sum('nano' in w.split('+') for w in where)}/{five_seeds}",
                "makespan [h]": float(big.mean()),
                "MemBatch vs it [%]": float(np.mean(mb / big - 1) * 100),
            }
        )
    return pd.DataFrame(rows)


def _status(ours: float, study: float, fitted: bool, cause: str, pts: bool = False, assumed: str = "") -> str:
    diff = ours - study if pts else (ours / study - 1) * 100
    size = f"{diff:+.1f} points" if pts else f"{diff:+.0f} %"
    if assumed:
        return f"deviates ({size}; matched under an assumption: {assumed})"
    if fitted:
        return (
            f"deviates ({size}; fitted: the profile table was derived from this number, so agreement is by "
            "construction)"
        )
    if abs(diff) <= TOLERANCE * 100:
        return f"faithful ({size})"
    return f"deviates ({size}; {cause})"


def published_table(five: pd.DataFrame, scaling: pd.DataFrame, n: int, causes: Mapping[str, str]) -> pd.DataFrame:
    """One row per published figure: the study's value, ours (mean of the main run) and a status.

    Args:
        five: the main run's five-task rows (``five_task.csv``).
        scaling: the main run's rows (``scaling.csv``); the ``n``-task rows are used.
        n: the largest size of the run (the study's 100).
        causes: row key (``five_mk_<sched>``, ``five_tot_<sched>``, ``place_<sched>``,
            ``mk100_<sched>``, ``gain_<sched>``, ``runtime``) -> the measured cause shown when
            the row deviates; ``assumed_gain_<sched>``: the assumption a matching gain rests on
            (the row then reads ``deviates``) (the caller builds it from :func:`sensitivity` and
            :func:`llf_sensitivity`, so every number in it is measured).
    """
    rows = [*_five_task_rows(five, causes), *_scaling_rows(scaling, n, causes)]
    rows.append(
        _row(
            "per-device GPU utilisation plot; Gantt charts per scheduler",
            "figures",
            "figures in runs/edge",
            "faithful (utilisation_five.png, utilisation_n*.png, gantt_*.png)",
        )
    )
    return pd.DataFrame(rows)


def _row(what: str, study: str, ours: str, status: str) -> dict[str, str]:
    return {"figure": what, "study": study, "ours": ours, "status": status}


def _five_task_rows(five: pd.DataFrame, causes: Mapping[str, str]) -> list[dict[str, str]]:
    """The five-task example: each scheduler's makespan, total computation and sub-task placement."""
    f = five.groupby("scheduler")
    rows = []

    def add(*cells: str) -> None:
        rows.append(_row(*cells))

    for k, lab in (("membatch", "MemBatch"), ("baseline_ilp", "baseline ILP"), ("fcfs_llf", "FCFS-LLF")):
        m = float(f.makespan_min.mean()[k])
        add(
            f"five tasks: {lab} makespan [min]",
            f"{FIVE_MAKESPAN_MIN[k]:g}",
            f"{m:.1f}",
            _status(m, FIVE_MAKESPAN_MIN[k], True, causes.get(f"five_mk_{k}", "")),
        )
    for k, lab in (("membatch", "MemBatch"), ("baseline_ilp", "baseline ILP"), ("fcfs_llf", "FCFS-LLF")):
        m = float(f.total_comp_min.mean()[k])
        add(
            f"five tasks: {lab} total computation [min]",
            f"{FIVE_TOTAL_MIN[k]:g}",
            f"{m:.1f}",
            _status(m, FIVE_TOTAL_MIN[k], k != "fcfs_llf", causes.get(f"five_tot_{k}", "")),
        )
    place = {k: f.split_placement.agg(lambda s: s.value_counts().to_dict())[k] for k in FIVE_MAKESPAN_MIN}
    exp = {"membatch": "orin_nx+xavier_nx", "baseline_ilp": "orin_nx+orin_nx", "fcfs_llf": "nano+nano"}
    for k, lab in (
        ("membatch", "MemBatch: Orin + Xavier"),
        ("baseline_ilp", "baseline: both on the Orin"),
        ("fcfs_llf", "FCFS-LLF: both on Nanos"),
    ):
        hit, tot = place[k].get(exp[k], 0), sum(place[k].values())
        ours = ", ".join(f"{w} {c}/{tot}" for w, c in sorted(place[k].items(), key=lambda x: -x[1]))
        st = (
            "faithful"
            if hit == tot
            else ("deviates (" + (f"{hit}/{tot} runs; " if hit else "never; ") + causes.get(f"place_{k}", "") + ")")
        )
        add(f"five tasks: Chest X-ray sub-tasks, {lab}", "as named", ours, st)
    return rows


def _scaling_rows(scaling: pd.DataFrame, n: int, causes: Mapping[str, str]) -> list[dict[str, str]]:
    """The ``n``-task runs: each scheduler's makespan, MemBatch's gain and the schedulers' runtimes."""
    big = scaling[scaling.n_tasks == n]
    last = big.pivot(index="seed", columns="scheduler", values="makespan_h")
    rows = []

    def add(*cells: str) -> None:
        rows.append(_row(*cells))

    for k, lab in (("membatch", "MemBatch"), ("baseline_ilp", "baseline ILP"), ("fcfs_llf", "FCFS-LLF")):
        m = float(last[k].mean())
        add(
            f"{n} tasks: {lab} makespan [h]",
            f"{MAKESPAN_100_H[k]:g}",
            f"{m:.1f}",
            _status(m, MAKESPAN_100_H[k], False, causes.get(f"mk100_{k}", "")),
        )
    for k, lab in (("baseline_ilp", "baseline ILP"), ("fcfs_llf", "FCFS-LLF")):
        g = float(((last.membatch / last[k] - 1) * 100).mean())
        add(
            f"{n} tasks: MemBatch vs {lab} [%]",
            f"{GAIN_100_PCT[k]:g}",
            f"{g:.1f}",
            _status(
                g,
                GAIN_100_PCT[k],
                False,
                causes.get(f"gain_{k}", ""),
                pts=True,
                assumed=causes.get(f"assumed_gain_{k}", ""),
            ),
        )
    rt = big.groupby("scheduler").runtime_s.mean()
    order_ok = rt["baseline_ilp"] > rt["membatch"] > rt["fcfs_llf"]
    add(
        f"{n} tasks: scheduler runtime baseline / MemBatch / FCFS-LLF [s]",
        " / ".join(f"{RUNTIME_100_S[k]:g}" for k in ("baseline_ilp", "membatch", "fcfs_llf")),
        " / ".join(f"{rt[k]:.3g}" for k in ("baseline_ilp", "membatch", "fcfs_llf")),
        "deviates (" + ("order kept, " if order_ok else "order not kept, ") + causes.get("runtime", "") + ")",
    )
    return rows


def measured_causes(
    five: pd.DataFrame,
    scaling: pd.DataFrame,
    n: int,
    sens: pd.DataFrame | None,
    llf_sens: pd.DataFrame | None,
    time_limit: float,
) -> dict[str, str]:
    """The cause shown for each deviating row of :func:`published_table`, from measured numbers."""
    big = scaling[scaling.n_tasks == n]
    mk = big.groupby("scheduler").makespan_h.mean()
    ratio = {k: mk[k] / MAKESPAN_100_H[k] for k in MAKESPAN_100_H if k in mk}
    lo, hi = min(ratio.values()), max(ratio.values())
    tot = five[five.scheduler == "fcfs_llf"].total_comp_min
    out = {
        f"mk100_{k}": (
            f"all three makespans are {lo:.2f}-{hi:.2f} x the study's: the unpublished profiles "
            "set the time scale, the order is kept"
        )
        for k in MAKESPAN_100_H
    }
    out["five_tot_fcfs_llf"] = (
        f"the random top-k pick gives {tot.min():.0f}-{tot.max():.0f} min over "
        f"{len(tot)} runs; the study reports one run"
    )
    solves = big.groupby("scheduler").n_solves.mean()
    out["runtime"] = (
        f"CP-SAT with a deterministic limit of {time_limit:g} per round on 1 worker of this machine, "
        f"not the study's solver and Jetson head; {solves.get('baseline_ilp', 0):.0f} baseline and "
        f"{solves.get('membatch', 0):.0f} MemBatch rounds per run"
    )
    if llf_sens is not None:
        r = llf_sens.set_index("FCFS-LLF variant")
        out["place_fcfs_llf"] = (
            "each sub-task goes to one of the two top-ranked devices; both on Nanos in "
            + ", ".join(f"{v} with {k}" for k, v in r["sub-tasks both on Nanos"].items())
        )
        g = r["MemBatch vs it [%]"]
        out["gain_fcfs_llf"] = (
            f"FCFS-LLF's ranking rule: MemBatch vs FCFS-LLF is {g.min():.0f} to {g.max():.0f} % "
            "over the FCFS-LLF variants (table below)"
        )
    if sens is not None:
        s = sens.set_index(["baseline GPU share", "rounds", "baseline deferral"])
        pen = s.loc[("enforce", "load_aware", "penalty"), "MemBatch vs baseline [%]"]
        ign = s.loc[("ignore", "load_aware", "penalty"), "MemBatch vs baseline [%]"]
        out["gain_baseline_ilp"] = (
            f"set by the baseline's price for deferring a task, which the study does not "
            f"state: {pen:.0f} % when it places as many tasks per round as it can "
            f"(deferral=penalty), {ign:.0f} % if it may also oversubscribe the GPU"
        )
        if s.loc[("enforce", "load_aware", "best_time"), "default"]:
            out["assumed_gain_baseline_ilp"] = (
                f"the baseline's deferral price best_time (a task waits for its fastest "
                f"device), not stated in the study; with penalty {pen:.0f} %, "
                "sensitivity table"
            )
    return out
