"""Bounds on what any scheduler can reach on a CGRSP day: two relaxed worlds and a clairvoyant bound.

* ``all_high``: the rule on the same day with every stock status High (provisioning 0-10 s
  always): what the stock process costs the rule.
* ``no_delay``: the rule on the same day with no provisioning delay at all.
* ``srpt``: a clairvoyant lower bound on the mean wait of *any* policy on the same jobs
  (:func:`srpt_wait_bound`): one machine C times as fast as a slot, preemptive SRPT (optimal
  for total flow time on one machine with release dates), each job's work its least realised
  run time over the fleet's types, provisioning delays 0. Every schedule of the C slots can
  be run on that machine no slower, so its total flow time bounds any policy's from below;
  a job's wait is its flow time minus its run time, so Σ wait ≥ F_SRPT − Σ_j max_g p_jg.
  No miss bound is claimed (0).

The two relaxed worlds use the day's own draws (arrivals, run times, provisioning quantiles
are keyed by the seed, not by the stock model), so they are paired with the rule's day.
"""

from __future__ import annotations

import heapq
from dataclasses import replace
from typing import Any

import numpy as np

from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.workload import generate

BOUNDS = ("all_high", "no_delay", "srpt")


def relaxed_params(kind: str, day: str, **params: Any) -> dict[str, Any]:
    """Simulator overrides of the relaxed world ``kind`` (``all_high`` or ``no_delay``) on top of ``params``."""
    if kind == "no_delay":
        return {**params, "delay_high": (0.0, 0.0), "delay_medium": (0.0, 0.0), "delay_low": (0.0, 0.0)}
    if kind == "all_high":  # β = 1, one band with multiplier 1, cap 1: p_High = 1 at every instant
        base = make_params(day, **params)
        return {
            **params,
            "p_high_cap": 1.0,
            "tod_bands": ((0.0, 1.0),),
            "gpu_types": tuple(replace(g, beta_high=1.0) for g in base.gpu_types),
        }
    raise ValueError(f"kind = {kind!r} is not a relaxed world; allowed: all_high, no_delay")


def srpt_flow(release: np.ndarray, work: np.ndarray) -> float:
    """Total flow time [s] of preemptive SRPT on one unit-speed machine (optimal for Σ C_j − r_j)."""
    order = np.argsort(release, kind="stable")
    r, p = release[order].tolist(), work[order].tolist()
    n, i, t, total = len(r), 0, 0.0, 0.0
    heap: list[tuple[float, int]] = []  # (remaining work, job)
    while i < n or heap:
        if not heap:
            t = max(t, r[i])
        while i < n and r[i] <= t:
            heapq.heappush(heap, (p[i], i))
            i += 1
        rem, j = heapq.heappop(heap)
        t_next = r[i] if i < n else float("inf")
        if t + rem <= t_next:  # finishes before the next release
            t += rem
            total += t - r[j]
        else:  # runs until the next release, then competes again
            heapq.heappush(heap, (rem - (t_next - t), j))
            t = t_next
    return total


def srpt_wait_bound(day: str, seed: int, **params: Any) -> float:
    """Clairvoyant lower bound on the mean wait [min] of any policy on day ``(day, seed)`` (module doc)."""
    p = make_params(day, **params)
    wl = generate(p, seed)
    types = sorted({p.type_names.index(n) for n in p.resolved_slot_types()})
    rt = np.asarray(wl.runtime)[:, types]  # [s] realised run time on each type the fleet has
    c = p.c_max
    flow = srpt_flow(np.asarray(wl.submit, float), rt.min(axis=1) / c)
    return max(0.0, (flow - float(rt.max(axis=1).sum())) / wl.n_jobs / 60.0)


__all__ = ["BOUNDS", "relaxed_params", "srpt_flow", "srpt_wait_bound"]
