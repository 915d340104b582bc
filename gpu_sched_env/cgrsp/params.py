"""CGRSP parameters: every quantity of spec §1 (the world), validated.

The heuristics' knobs (spec §3: θ, P, CR*, ρ_res, weights ...) are not here: each policy has
its own config (``gpu_sched_agents.heuristics.cgrsp.config``), so the simulator knows nothing of them.

All times are in seconds, prices in $/h, rates in jobs/s. ``make_params(day, **overrides)``
is the one way to build a parameter set: unknown names and invalid values raise
:class:`~gpu_sched_env.core.errors.ConfigError` naming the field, the value and what is
allowed.

Every number has a range that keeps the model finite and its cost bounded (NaN and ±inf are
refused everywhere); each field's comment says its range and why. The limits shared by several
fields are the constants below (:data:`MAX_TIME_S`, :data:`MAX_JOBS`, :data:`MAX_SLOTS` ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from gpu_sched_env.core.envconfig import MAX_EPISODE_ITEMS, MAX_REWARD_WEIGHT
from gpu_sched_env.core.errors import ConfigError, check_choice, check_keys, check_number

COMPLEXITIES = ("low", "medium", "high")
STOCK_LEVELS = ("High", "Medium", "Low")
STOCK_PROCESSES = ("fresh", "markov")
DEFAULT_STOCK_DWELL_S = 900.0  # [s] see CGRSPParams.stock_dwell_s

# ---- the limits of the parameters' ranges (each field's comment says which applies and why)
# [s] one year: the longest duration a parameter may give (a provisioning delay, a mean run time,
# a deadline window, a Markov dwell).
MAX_TIME_S = 365 * 86400.0
# [s] the longest expected arrival span n_jobs / arrival_rate of a generated day. Below it float64
# seconds resolve 2e-6 s, so a run time or a window added to a time stays exact to microseconds
# (at 1e20 s neighbouring float64 values are 16 384 s apart and every wait reads 0); MAX_JOBS jobs
# at the quiet day's rate (a job log replayed with the quiet day's parameters) span 1.25e9 s.
MAX_SPAN_S = 1e10
# jobs per day: every scenario's limit (core.envconfig.MAX_EPISODE_ITEMS), 10x the largest day of
# the scaling study (100 000 jobs, ``bench sim``); the simulator's per-job records and the
# workload's arrays are O(n_jobs), so memory stays bounded.
MAX_JOBS = MAX_EPISODE_ITEMS
# slots (c_max): 100x the largest fleet the studies rent (10); the env's joint action space has
# K·C + 1 actions and its observation one row per slot.
MAX_SLOTS = 1024
# [s] the shortest gap between decision points the public stock model reckons with (the floor of
# stock.next_event_gap, stock.MIN_GAP_S), and so the least Markov mean dwell: a status that lasts
# less is redrawn before the next decision point anyway (the fresh process in distribution,
# tests/cgrsp/test_stock_process.py at D = 1 s), while the redraws drawn per simulated second
# grow as 1/D (at D = 1e-3 s a day needed more than 3 GB).
MIN_GAP_S = 1.0
# Redraws per GPU type a day's Markov stock path may need over its expected arrival span: the path
# is kept as two Python lists (~64 bytes per redraw, stock.MarkovStock), so 10^6 bounds it at
# ~64 MB per type. The shipped days need at most ~5e5 at D = 1 s (the normal day:
# 50 000 s / (1 s · 0.095), its most certain band's 1 − Σπ²).
MAX_REDRAWS = 1_000_000
# log-sd of the run times: at 3 the median run is already e^(-4.5) ≈ 1 % of its mean W̄ (the mean
# carried by rare runs 10^3-10^4 x the median); wider log-normals only push the tail draws
# exp(log W̄ − σ²/2 + σz) towards float32's range (the JAX twin's dtype).
MAX_RUNTIME_SIGMA = 3.0
# [$/h] 10^4 x the dearest cloud GPU node; a day's cost (≤ MAX_JOBS runs of at most a few years
# each) stays finite in float32.
MAX_PRICE_PER_H = 1e6


def _plain(v: Any) -> Any:
    """NumPy scalars as Python numbers, lists and arrays as tuples (recursively); else ``v``.

    So ``c_max=np.int64(5)`` or ``complexity_probs=np.array([...])`` behave as their Python
    forms everywhere downstream (gymnasium's spaces refuse NumPy integers as sizes).
    """
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return tuple(_plain(x) for x in v)
    return v.item() if isinstance(v, np.generic) else v


def _plain_fields(obj: Any) -> None:
    """Every field of the frozen dataclass ``obj`` in its :func:`_plain` form."""
    for f in fields(obj):
        object.__setattr__(obj, f.name, _plain(getattr(obj, f.name)))


def _shape(field: str, value: Any, n: int | None, allowed: str) -> tuple:
    """``value`` if it is a tuple (lists and arrays are tuples by now) of ``n`` entries, else raise."""
    if not isinstance(value, tuple) or (n is not None and len(value) != n) or (n is None and not value):
        raise ConfigError(f"{field} = {value!r} is not allowed; allowed: {allowed}")
    return value


def _validate_gpu_type(g: GPUType) -> None:
    where = f"gpu_types[{g.name!r}]" if isinstance(g.name, str) else "gpu_types"
    if not isinstance(g.name, str) or not g.name:
        raise ConfigError(f"{where}.name = {g.name!r} is not allowed; allowed: a non-empty string")
    check_number("cuda_cores", g.cuda_cores, lo=1, integer=True, section=where)
    check_number("vram_gb", g.vram_gb, lo=1, integer=True, section=where)
    check_number("price_per_h", g.price_per_h, lo=0.0, hi=MAX_PRICE_PER_H, section=where)
    check_number("beta_high", g.beta_high, lo=0.0, hi=1.0, section=where)
    _shape(f"{where}.mean_runtime_s", g.mean_runtime_s, 3, "3 positive numbers of seconds (low, medium, high)")
    for k, w in zip(COMPLEXITIES, g.mean_runtime_s):
        check_number(f"mean_runtime_s[{k}]", w, lo=0.0, lo_open=True, hi=MAX_TIME_S, section=where)


@dataclass(frozen=True)
class GPUType:
    """One rentable GPU type."""

    name: str
    # any integer ≥ 1 that a float can hold: descriptive, the dynamics never read them
    cuda_cores: int
    vram_gb: int
    price_per_h: float  # [$/h] in [0, MAX_PRICE_PER_H], charged per second of execution only
    mean_runtime_s: tuple[float, float, float]  # [s] W̄ by complexity low/medium/high, each in (0, MAX_TIME_S]
    beta_high: float  # baseline probability of High stock, in [0, 1]

    def __post_init__(self) -> None:
        _plain_fields(self)
        _validate_gpu_type(self)


# Spec §1 table. A5000/medium and A4500/medium are the spec's documented assumptions.
DEFAULT_GPU_TYPES: tuple[GPUType, ...] = (
    GPUType("RTX 3090", 10496, 24, 0.46, (59.7, 70.2, 100.9), 0.50),
    GPUType("RTX A5000", 8192, 24, 0.27, (60.9, 69.0, 99.6), 0.65),
    GPUType("RTX A4500", 7168, 20, 0.25, (62.2, 70.5, 88.7), 0.70),
    GPUType("RTX A4000", 6144, 16, 0.25, (60.0, 68.7, 98.2), 0.75),
)

# Day types (spec §1): arrival rate [jobs/s] and jobs per day.
DAY_TYPES: dict[str, dict[str, float]] = {
    "quiet": {"arrival_rate": 0.0008, "n_jobs": 6},
    "normal": {"arrival_rate": 0.002, "n_jobs": 100},
    "hectic": {"arrival_rate": 0.100, "n_jobs": 950},
    "surge": {"arrival_rate": 0.020, "n_jobs": 730},
}


@dataclass(frozen=True)
class CGRSPParams:
    """Every simulator parameter (defaults = spec §1 calibrated defaults).

    Attributes are grouped: fleet, stock/provisioning, workload, objective.
    """

    # --- fleet ---------------------------------------------------------------------------
    c_max: int = 5  # concurrency cap = number of slots, in [1, MAX_SLOTS]
    # slot GPU types by name; None = round-robin 3090, A5000, A4500, A4000, 3090, ...
    # in the order below (C_max = 5 gives two 3090s, one of each other type).
    slot_types: tuple[str, ...] | None = None
    slot_pattern: tuple[str, ...] = ("RTX 3090", "RTX A5000", "RTX A4500", "RTX A4000")
    gpu_types: tuple[GPUType, ...] = DEFAULT_GPU_TYPES
    runtime_sigma: float = 0.11  # log-sd of realised run time (all strata), in [0, MAX_RUNTIME_SIGMA]
    # --- stock and provisioning ----------------------------------------------------------
    start_hour_utc: float = 5.0  # UTC hour at simulated time 0 (calibrated default), in [0, 24)
    # time-of-day multiplier bands: (start hour UTC, multiplier), start hours ascending from 0.
    # A multiplier is any finite number ≥ 0: the probabilities it scales are capped (p_high_cap,
    # p_medium_cap), so every finite value gives probabilities in [0, 1].
    tod_bands: tuple[tuple[float, float], ...] = ((0.0, 1.0), (6.0, 0.9), (9.0, 0.5), (18.0, 1.3))
    p_high_cap: float = 0.95  # in [0, 1]
    p_medium_cap: float = 0.90  # in [0, 1]
    p_medium_factor: float = 1.5  # finite, ≥ 0 (capped by p_medium_cap, as the multipliers)
    # provisioning delay ranges [s] by stock level High, Medium, Low (uniform), 0 ≤ low ≤ high ≤ MAX_TIME_S
    delay_high: tuple[float, float] = (0.0, 10.0)
    delay_medium: tuple[float, float] = (30.0, 120.0)
    delay_low: tuple[float, float] = (600.0, 7200.0)
    # --- stock process (gpu_sched_env.cgrsp.stock) ---------------------------------------
    # "fresh": every type's status is drawn afresh at every decision point (calibrated
    # default; waiting for the next event re-rolls a Low status for free). "markov": per type
    # a continuous-time Markov chain with the band's (p_H, p_M, p_L) as stationary law.
    stock_process: str = "fresh"
    # [s] markov only: mean time a status lasts. 15 min: far above the ~10-75 s between
    # decision points and a job's run time (waiting out a Low status costs real time), far
    # below the 3-9 h time-of-day bands (each band still sees its stationary mix).
    # Range [MIN_GAP_S, MAX_TIME_S] = [1 s, 1 year] (see MIN_GAP_S: a shorter status is the fresh
    # process at a cost of 1/D redraws per second), and at most MAX_REDRAWS redraws per
    # GPU type over the day's arrival span, so the drawn path's memory is bounded.
    stock_dwell_s: float = DEFAULT_STOCK_DWELL_S
    # --- workload ------------------------------------------------------------------------
    # λ [jobs/s], > 0, with the expected arrival span n_jobs / λ at most MAX_SPAN_S
    arrival_rate: float = 0.100
    n_jobs: int = 950  # jobs per day (exactly), in [1, MAX_JOBS]
    complexity_probs: tuple[float, float, float] = (0.4, 0.4, 0.2)  # each ≥ 0, summing to 1
    tight_fraction: float = 0.2  # in [0, 1]
    tight_window: float = 3600.0  # [s] deadline = submit + window, in (0, MAX_TIME_S]
    loose_window: float = 28800.0  # [s] in (0, MAX_TIME_S]
    # --- objective -----------------------------------------------------------------------
    # each in [0, MAX_REWARD_WEIGHT] (core.envconfig: 1e9, so the env's rewards, scaled by at most
    # MAX_REWARD_SCALE, stay finite in float32)
    alpha1: float = 1.0  # per second of wait
    alpha2: float = 10.0  # per missed deadline

    # ------------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        _plain_fields(self)
        _validate(self)

    @property
    def type_names(self) -> tuple[str, ...]:
        """GPU type names in table order."""
        return tuple(g.name for g in self.gpu_types)

    def resolved_slot_types(self) -> tuple[str, ...]:
        """Slot type names (explicit, or the round-robin pattern for ``c_max`` slots)."""
        if self.slot_types is not None:
            return tuple(self.slot_types)
        return tuple(self.slot_pattern[i % len(self.slot_pattern)] for i in range(self.c_max))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (for logging and tidy tables)."""
        return asdict(self)


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in fields(CGRSPParams))


_PAIR = f"a pair (low, high) of seconds with 0 <= low <= high <= {MAX_TIME_S:g}"
_PROBS = "3 non-negative numbers (low, medium, high) summing to 1"
_BANDS = (
    "a non-empty sequence of (start hour UTC, multiplier) pairs, start hours beginning at 0, "
    "ascending strictly and below 24"
)
_GPU_FIELDS = tuple(f.name for f in fields(GPUType))
_GPU_TYPES = f"a non-empty sequence of GPUType (or of mappings with keys {', '.join(_GPU_FIELDS)})"


def _pair(p: CGRSPParams, name: str) -> None:
    lo, hi = _shape(name, getattr(p, name), 2, _PAIR)
    check_number(f"{name}[0]", lo, lo=0.0, hi=MAX_TIME_S)
    check_number(f"{name}[1]", hi, lo=0.0, hi=MAX_TIME_S)
    if hi < lo:
        raise ConfigError(f"{name} = {getattr(p, name)!r}: lower bound exceeds upper bound; allowed: {_PAIR}")


def _validate(p: CGRSPParams) -> None:
    check_number("c_max", p.c_max, lo=1, hi=MAX_SLOTS, integer=True)
    for i, g in enumerate(_shape("gpu_types", p.gpu_types, None, _GPU_TYPES)):
        if not isinstance(g, GPUType):
            raise ConfigError(
                f"gpu_types[{i}] = {g!r} is not allowed; allowed: a GPUType or a mapping with keys "
                f"{', '.join(_GPU_FIELDS)}"
            )
    names = [g.name for g in p.gpu_types]
    if len(set(names)) != len(names):
        raise ConfigError(f"gpu_types: names must be unique, got {names!r}")
    for name in ("slot_pattern", "slot_types"):
        v = getattr(p, name)
        if not (v is None and name == "slot_types") and not isinstance(v, tuple):
            allowed = "a sequence of GPU type names" + (
                " or None (round-robin pattern)" if name == "slot_types" else ""
            )
            raise ConfigError(f"{name} = {v!r} is not allowed; allowed: {allowed} from {names!r}")
    for n in p.slot_pattern:
        check_choice("slot_pattern", n, names)
    if p.slot_types is not None:
        if len(p.slot_types) != p.c_max:
            raise ConfigError(
                f"slot_types has {len(p.slot_types)} entries but c_max = {p.c_max}; give one type per slot"
            )
        for n in p.slot_types:
            check_choice("slot_types", n, names)
    check_number("runtime_sigma", p.runtime_sigma, lo=0.0, hi=MAX_RUNTIME_SIGMA)
    check_number("start_hour_utc", p.start_hour_utc, lo=0.0, hi=24.0, hi_open=True)
    for k, band in enumerate(_shape("tod_bands", p.tod_bands, None, _BANDS)):
        _shape(f"tod_bands[{k}]", band, 2, "a (start hour UTC, multiplier) pair")
        check_number(f"tod_bands[{k}][0]", band[0], lo=0.0, hi=24.0, hi_open=True)
    hours = [h for h, _ in p.tod_bands]
    if hours[0] != 0.0 or any(b <= a for a, b in zip(hours, hours[1:])):
        raise ConfigError(f"tod_bands = {p.tod_bands!r} is not allowed; allowed: {_BANDS}")
    for h, m in p.tod_bands:
        check_number(f"tod_bands[{h:g}h]", m, lo=0.0)
    check_number("p_high_cap", p.p_high_cap, lo=0.0, hi=1.0)
    check_number("p_medium_cap", p.p_medium_cap, lo=0.0, hi=1.0)
    check_number("p_medium_factor", p.p_medium_factor, lo=0.0)
    for name in ("delay_high", "delay_medium", "delay_low"):
        _pair(p, name)
    check_choice("stock_process", p.stock_process, STOCK_PROCESSES)
    check_number("stock_dwell_s", p.stock_dwell_s, lo=MIN_GAP_S, hi=MAX_TIME_S)
    if p.stock_process != "markov" and p.stock_dwell_s != DEFAULT_STOCK_DWELL_S:
        _dwell_unused(p.stock_dwell_s, p.stock_process)
    check_number("arrival_rate", p.arrival_rate, lo=0.0, lo_open=True)
    check_number("n_jobs", p.n_jobs, lo=1, hi=MAX_JOBS, integer=True)
    span = p.n_jobs / p.arrival_rate
    if not span <= MAX_SPAN_S:
        raise ConfigError(
            f"arrival_rate = {p.arrival_rate!r} with n_jobs = {p.n_jobs!r}: the expected arrival span "
            f"n_jobs / arrival_rate = {span:.4g} s is out of range; allowed: at most {MAX_SPAN_S:g} s, "
            f"i.e. arrival_rate >= {p.n_jobs / MAX_SPAN_S:.4g} jobs/s for {p.n_jobs} jobs"
        )
    for k, x in zip(COMPLEXITIES, _shape("complexity_probs", p.complexity_probs, 3, _PROBS)):
        check_number(f"complexity_probs[{k}]", x, lo=0.0)
    if abs(sum(p.complexity_probs) - 1) > 1e-9:
        raise ConfigError(f"complexity_probs = {p.complexity_probs!r} is not allowed; allowed: {_PROBS}")
    check_number("tight_fraction", p.tight_fraction, lo=0.0, hi=1.0)
    check_number("tight_window", p.tight_window, lo=0.0, lo_open=True, hi=MAX_TIME_S)
    check_number("loose_window", p.loose_window, lo=0.0, lo_open=True, hi=MAX_TIME_S)
    check_number("alpha1", p.alpha1, lo=0.0, hi=MAX_REWARD_WEIGHT)
    check_number("alpha2", p.alpha2, lo=0.0, hi=MAX_REWARD_WEIGHT)
    if p.stock_process == "markov":
        _check_redraws(p)


def markov_redraw_rate(p: CGRSPParams) -> float:
    """The fastest Markov redraw rate [1/s] over the bands and GPU types: 1/(D·(1 − Σπ²)) (``stock.redraw_rates``).

    π is a band's (p_H, p_M, p_L) as ``Fleet.level_probs`` realises them: p_H = min(p_high_cap,
    β·m), p_H + p_M = min(1, p_H + min(p_medium_cap, p_medium_factor·β·m)); a band with one
    certain status redraws at 1/D.
    """
    d = float(p.stock_dwell_s)
    rate = 0.0
    for _, m in p.tod_bands:
        for g in p.gpu_types:
            ph = min(p.p_high_cap, g.beta_high * m)
            phm = min(1.0, ph + min(p.p_medium_cap, p.p_medium_factor * g.beta_high * m))
            ph = min(1.0, ph)
            gini = 1.0 - (ph * ph + (phm - ph) ** 2 + (1.0 - phm) ** 2)
            rate = max(rate, 1.0 / (d * gini) if gini > 1e-12 else 1.0 / d)
    return rate


def _check_redraws(p: CGRSPParams) -> None:
    """ConfigError when a day's Markov path needs more than MAX_REDRAWS redraws per type over its arrival span."""
    rate = markov_redraw_rate(p)
    span = p.n_jobs / p.arrival_rate
    need = span * rate
    if need > MAX_REDRAWS:
        raise ConfigError(
            f"stock_dwell_s = {p.stock_dwell_s!r} is too short for this day: its Markov path would need about "
            f"{need:.3g} redraws per GPU type over the arrival span n_jobs / arrival_rate = {span:.4g} s (fastest "
            f"band: {rate:.3g} redraws/s); allowed: at most {MAX_REDRAWS:g}, i.e. stock_dwell_s >= "
            f"{p.stock_dwell_s * need / MAX_REDRAWS:.4g} s for this day"
        )


def _dwell_unused(dwell: Any, process: Any) -> None:
    raise ConfigError(
        f"stock_dwell_s = {dwell!r} is not allowed with stock_process = {process!r}: the fresh process "
        "has no dwell time; allowed: stock_dwell_s only together with stock_process='markov'"
    )


def _gpu_type(i: int, g: Any) -> Any:
    """A mapping entry of ``gpu_types`` as a GPUType (other entries are left to the validation)."""
    if not isinstance(g, Mapping):
        return g
    check_keys(g, _GPU_FIELDS, section=f"gpu_types[{i}] keys")
    missing = [k for k in _GPU_FIELDS if k not in g]
    if missing:
        raise ConfigError(
            f"gpu_types[{i}] = {dict(g)!r} lacks {', '.join(missing)}; allowed: a mapping with keys "
            f"{', '.join(_GPU_FIELDS)}"
        )
    return GPUType(**g)


def make_params(day: str = "hectic", **overrides: Any) -> CGRSPParams:
    """Parameters for a day type with overrides; raises ConfigError on anything unknown.

    NumPy scalars are taken as the Python numbers they hold, lists and arrays as tuples.
    """
    check_choice("day", day, DAY_TYPES)
    check_keys(overrides, PARAM_NAMES, section="CGRSP parameters")
    values: dict[str, Any] = {**DAY_TYPES[day], **overrides}
    if "stock_dwell_s" in overrides:
        process = check_choice("stock_process", values.get("stock_process", "fresh"), STOCK_PROCESSES)
        if process != "markov":
            _dwell_unused(overrides["stock_dwell_s"], process)
    gpu_types = values.get("gpu_types")
    if isinstance(gpu_types, (list, tuple, np.ndarray)):
        values["gpu_types"] = tuple(_gpu_type(i, g) for i, g in enumerate(gpu_types))
    return CGRSPParams(**values)


def with_overrides(p: CGRSPParams, **overrides: Any) -> CGRSPParams:
    """A copy of ``p`` with some fields replaced (validated)."""
    check_keys(overrides, PARAM_NAMES, section="CGRSP parameters")
    return replace(p, **overrides)


__all__ = [
    "COMPLEXITIES",
    "DAY_TYPES",
    "DEFAULT_GPU_TYPES",
    "DEFAULT_STOCK_DWELL_S",
    "MAX_JOBS",
    "MAX_PRICE_PER_H",
    "MAX_REDRAWS",
    "MAX_RUNTIME_SIGMA",
    "MAX_SLOTS",
    "MAX_TIME_S",
    "MIN_GAP_S",
    "PARAM_NAMES",
    "STOCK_LEVELS",
    "STOCK_PROCESSES",
    "CGRSPParams",
    "GPUType",
    "make_params",
    "markov_redraw_rate",
    "with_overrides",
]
