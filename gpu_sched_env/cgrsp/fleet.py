"""Fleet, run-time and stock model compiled into flat lists for the simulator's hot loop.

Python lists (not NumPy arrays) hold the per-slot and per-type values because the event
loop reads single elements, where list indexing is several times faster than NumPy scalar
access.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from gpu_sched_env.cgrsp.params import CGRSPParams

HIGH, MEDIUM, LOW = 0, 1, 2  # stock levels (indices of delay_lo/delay_span/delay_mean)


@dataclass
class Fleet:
    """Per-type and per-slot tables derived from :class:`CGRSPParams`."""

    type_names: list[str]
    price_per_s: list[float]  # [$/s] by type
    price_per_h: list[float]  # [$/h] by type
    wbar: list[list[float]]  # [s] wbar[complexity][type] expected run time
    slot_type: list[int]  # type index of each slot (registration order)
    p_high: list[list[float]]  # [band][type]
    p_high_medium: list[list[float]]  # [band][type] cumulative p_H + p_M
    band_starts: list[float]  # [s of UTC day] band start times
    delay_lo: list[float]  # [s] by stock level
    delay_span: list[float]  # [s] by stock level
    delay_mean: list[float]  # [s] by stock level
    start_offset: float  # [s] UTC second of day at simulated time 0
    nominal_type: int  # type whose W̄ is SPT's nominal estimate (RTX 3090, else type 0)
    fastest_wbar: list[float]  # [s] e_κ by complexity: the least W̄ over the fleet's slot types
    mean_wbar: float  # [s] W̄_mean: mean over the slots of the complexity-weighted W̄ of their type
    offered_load: float  # ρ = λ·W̄_mean/C_max

    @classmethod
    def from_params(cls, p: CGRSPParams) -> Fleet:
        """Compile the tables."""
        names = list(p.type_names)
        idx = {n: i for i, n in enumerate(names)}
        wbar = [[g.mean_runtime_s[k] for g in p.gpu_types] for k in range(3)]
        p_h, p_hm = [], []
        for _, m in p.tod_bands:
            ph = [min(p.p_high_cap, g.beta_high * m) for g in p.gpu_types]
            pm = [min(p.p_medium_cap, p.p_medium_factor * g.beta_high * m) for g in p.gpu_types]
            p_h.append(ph)
            p_hm.append([a + b for a, b in zip(ph, pm)])
        delays = (p.delay_high, p.delay_medium, p.delay_low)
        slot_type = [idx[n] for n in p.resolved_slot_types()]
        fleet_types = set(slot_type)
        probs = p.complexity_probs
        w_mean = float(np.mean([sum(probs[k] * wbar[k][g] for k in range(3)) for g in slot_type]))  # [s]
        return cls(
            type_names=names,
            price_per_s=[g.price_per_h / 3600.0 for g in p.gpu_types],
            price_per_h=[g.price_per_h for g in p.gpu_types],
            wbar=wbar,
            slot_type=slot_type,
            p_high=p_h,
            p_high_medium=p_hm,
            band_starts=[h * 3600.0 for h, _ in p.tod_bands],
            delay_lo=[d[0] for d in delays],
            delay_span=[d[1] - d[0] for d in delays],
            delay_mean=[(d[0] + d[1]) / 2.0 for d in delays],
            start_offset=p.start_hour_utc * 3600.0,
            nominal_type=idx.get("RTX 3090", 0),
            fastest_wbar=[min(wbar[k][g] for g in fleet_types) for k in range(3)],
            mean_wbar=w_mean,
            offered_load=p.arrival_rate * w_mean / p.c_max,
        )

    @property
    def n_types(self) -> int:
        """Number of GPU types."""
        return len(self.type_names)

    def band(self, t: float) -> int:
        """Index of the time-of-day band at simulated time ``t`` [s]."""
        return bisect_right(self.band_starts, math.fmod(self.start_offset + t, 86400.0)) - 1

    def level_probs(self, band: int, g: int) -> tuple[float, float, float]:
        """(p_H, p_M, p_L) of type ``g`` in ``band``, as :meth:`stock_levels` realises them.

        p_H is capped at ``p_high_cap`` and p_M at ``p_medium_cap`` (spec §1); where
        p_H + p_M exceeds 1 the draw never reaches Low, so p_M is what is left above p_H.
        """
        ph = min(1.0, self.p_high[band][g])
        phm = min(1.0, self.p_high_medium[band][g])
        return ph, phm - ph, 1.0 - phm

    def expected_delay(self, band: int, g: int) -> float:
        """Mean provisioning delay [s] of type ``g`` for a dispatch in ``band`` whose status is not yet known."""
        return sum(p * d for p, d in zip(self.level_probs(band, g), self.delay_mean))

    def stock_levels(self, t: float, u: list[float]) -> list[int]:
        """Stock level per type at time ``t`` from one uniform draw per type."""
        b = self.band(t)
        ph, phm = self.p_high[b], self.p_high_medium[b]
        return [HIGH if u[g] < ph[g] else (MEDIUM if u[g] < phm[g] else LOW) for g in range(len(u))]
