"""The energetic LP relaxation of an edge instance: a valid makespan bound and a fractional assignment.

Shared by the bound (:mod:`~gpu_sched_agents.heuristics.edge.bounds`, where the proof is) and the LP-rounding
rule (:class:`~gpu_sched_agents.heuristics.edge.strong.LPRound`). Variables: ``x_ij`` in ``[0, 1]`` (share of
task i on device j, 0 where it does not fit alone), ``sum_j x_ij = 1``, and the makespan ``C`` [h]; rows, per
device j and resource (memory, GPU share) and dual-feasible function ``f`` (identity, ``u^(1)``, ``u^(2)`` of
Fekete & Schepers 2001): ``sum_i t_ij f(d_ij / cap_j) x_ij <= C``; per (i, j): ``t_ij x_ij <= C``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog

from gpu_sched_env.edge.model import Cluster

DFF_K = (1, 2)  # Fekete & Schepers' u^(k) used besides the identity
CAP_SLACK = Fraction(1, 10**6)  # fractions of a capacity are taken of capacity * (1 + CAP_SLACK)
ROUND_DOWN = 1e-12  # relative: the dual bound is lowered by this much for float rounding


def dff(x: Fraction, k: int) -> Fraction:
    """Fekete & Schepers' ``u^(k)``: ``x`` where ``(k+1) x`` is an integer, else ``floor((k+1) x) / k``."""
    y = (k + 1) * x
    return x if y.denominator == 1 else Fraction(math.floor(y), k)


def _functions() -> list[Callable[[Fraction], Fraction]]:
    return [lambda x: x, *(lambda x, k=k: dff(x, k) for k in DFF_K)]


@dataclass(frozen=True)
class EnergeticLP:
    """The LP's outcome: ``bound_s`` (valid, from the duals) [s], ``x`` (n × d primal shares; zeros if unsolved)."""

    bound_s: float
    x: np.ndarray
    solved: bool


def energetic_lp(t: np.ndarray, g: np.ndarray, m: np.ndarray, fits: np.ndarray, cluster: Cluster) -> EnergeticLP:
    """Solve the LP (HiGHS) over (task, device) arrays ``t`` [s], ``g`` [%], ``m`` [GB] and ``fits``.

    ``bound_s`` is ``sum_i min_j (sum_k y_k a_kij) / sum_k y_k`` at HiGHS's row duals ``y`` (clipped at 0),
    lowered by 1e-12 relative: a valid bound by weak duality whatever the solver's tolerances (0 if unsolved).
    """
    n, d = t.shape
    if n == 0:
        return EnergeticLP(0.0, np.zeros((0, d)), True)
    cells = [(i, j) for i in range(n) for j in range(d) if fits[i, j]]
    col = {c: k for k, c in enumerate(cells)}
    rows: list[dict[int, float]] = []
    for j, dev in enumerate(cluster.devices):
        for dem, cap in ((m, dev.mem_gb), (g, dev.gpu_cap)):
            capf = Fraction(float(cap)) * (1 + CAP_SLACK)
            frac = {i: Fraction(float(dem[i, j])) / capf for i in range(n) if fits[i, j]}
            for f in _functions():
                row = {col[i, j]: float(t[i, j]) * float(f(x)) for i, x in frac.items() if f(x) > 0}
                if row:
                    rows.append(row)
    rows += [{col[c]: float(t[c])} for c in cells]
    nv = len(cells) + 1  # the x cells, then C
    a_ub = np.zeros((len(rows), nv))
    for r, row in enumerate(rows):
        for k, v in row.items():
            a_ub[r, k] = v / 3600.0  # in hours: coefficients near 1
    a_ub[:, -1] = -1.0
    a_eq = np.zeros((n, nv))
    for (i, _), k in col.items():
        a_eq[i, k] = 1.0
    cost = np.zeros(nv)
    cost[-1] = 1.0
    res = linprog(
        cost, A_ub=a_ub, b_ub=np.zeros(len(rows)), A_eq=a_eq, b_eq=np.ones(n), bounds=[(0, None)] * nv, method="highs"
    )
    x = np.zeros((n, d))
    if res.status != 0:
        return EnergeticLP(0.0, x, False)
    for (i, j), k in col.items():
        x[i, j] = res.x[k]
    y = np.clip(-np.asarray(res.ineqlin.marginals, dtype=float), 0.0, None)
    if y.sum() <= 0:
        return EnergeticLP(0.0, x, True)
    coef = np.zeros(len(cells))
    for r in np.flatnonzero(y > 0):
        for k, v in rows[r].items():
            coef[k] += y[r] * v
    c = np.full((n, d), math.inf)
    for (i, j), k in col.items():
        c[i, j] = coef[k]
    return EnergeticLP(float(c.min(axis=1).sum() / y.sum()) * (1 - ROUND_DOWN), x, True)


__all__ = ["CAP_SLACK", "DFF_K", "EnergeticLP", "dff", "energetic_lp"]
