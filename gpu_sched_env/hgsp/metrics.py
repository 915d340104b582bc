"""HGSP metrics of a schedule (definitions in docs/hgsp.md, "Metrics")."""

from __future__ import annotations

import numpy as np

from gpu_sched_env.hgsp.sim import Schedule

METRICS = ("twct", "act", "dmc", "dmr_pct", "wt", "makespan", "gpu_util_pct", "mem_util_pct", "skipped")


def summarize(s: Schedule) -> dict[str, float]:
    """All spec metrics over the scheduled tasks; ``skipped`` counts tasks no GPU can hold.

    TWCT = sum w (c - a); ACT = mean (c - a); DMC = #(c > d); DMR = DMC / n_scheduled;
    WT = sum w max(0, c - d); makespan = max c; GPU utilisation = busy time /
    (m * (makespan - min a)); memory utilisation = sum m_i p_i / (sum_j M_j * (makespan - min a)).
    """
    pr, t = s.problem, s.problem.tasks
    ok = s.scheduled
    n = int(ok.sum())
    if n == 0:
        nan = float("nan")
        return dict(
            twct=0.0,
            act=nan,
            dmc=0,
            dmr_pct=nan,
            wt=0.0,
            makespan=nan,
            gpu_util_pct=nan,
            mem_util_pct=nan,
            skipped=int(pr.n),
        )
    c, a, d, w = s.end[ok], t.arrival[ok], t.deadline[ok], t.weight[ok]
    busy = s.end[ok] - s.start[ok]
    flow = c - a
    makespan = float(c.max())
    span = makespan - float(a.min())
    missed = c > d
    return dict(
        twct=float(np.sum(w * flow)),
        act=float(flow.mean()),
        dmc=int(missed.sum()),
        dmr_pct=100.0 * float(missed.mean()),
        wt=float(np.sum(w * np.maximum(0.0, c - d))),
        makespan=makespan,
        gpu_util_pct=100.0 * float(busy.sum()) / (pr.m * span) if span > 0 else float("nan"),
        mem_util_pct=(
            100.0 * float(np.sum(t.memory[ok] * busy)) / (float(pr.cluster.memory.sum()) * span)
            if span > 0
            else float("nan")
        ),
        skipped=int(pr.n - n),
    )


def per_gpu_utilisation(s: Schedule) -> dict[str, tuple[float, float]]:
    """GPU name -> (busy %, memory-time %) over the same window as :func:`summarize`."""
    pr, t = s.problem, s.problem.tasks
    ok = s.scheduled
    if not ok.any():
        return {name: (0.0, 0.0) for name in pr.cluster.names}
    span = float(s.end[ok].max() - t.arrival[ok].min())
    out = {}
    for j, name in enumerate(pr.cluster.names):
        on = ok & (s.gpu == j)
        busy = s.end[on] - s.start[on]
        out[name] = (
            100.0 * busy.sum() / span if span > 0 else 0.0,
            100.0 * float(np.sum(t.memory[on] * busy)) / (pr.cluster.memory[j] * span) if span > 0 else 0.0,
        )
    return out
