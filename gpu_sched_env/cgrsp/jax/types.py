"""The pytrees of the JAX env: a day's arrays, the env state and the world's parameters.

Shapes: N jobs (the day type's ``n_jobs``, static), T GPU types, C slots, B time-of-day
bands, S = 6 *subqueues* (complexity class × tight/loose). Within a subqueue every job has
the same deadline window, so deadline order is submit order: a subqueue's waiting jobs are a
contiguous run ``[ptr, end)`` of its members in submit order, as long as only subqueue heads
are dispatched (every action of the env does that: a class head is the head of one of its
class's two subqueues). That keeps the window, the ``beyond`` block and the miss count O(1)
or O(log N) per step instead of O(N).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import MAX_RUNTIME_SIGMA, MAX_TIME_S, CGRSPParams
from gpu_sched_env.cgrsp.rewards import PRESETS, REWARD_PARTS, weights_of
from gpu_sched_env.core.envconfig import MAX_REWARD_SCALE, MIN_REWARD_SCALE
from gpu_sched_env.core.errors import ConfigError

N_SUB = 6  # subqueues: class c loose = 2c, tight = 2c + 1


@struct.dataclass
class Day:
    """One day's draws and the static orders derived from them (see the module docstring).

    ``fresh_u`` (decision points × T) is empty for native days (drawn with ``key`` instead) and
    under Markov stock; ``markov_times``/``markov_us`` (T × P) are empty for native days and
    under fresh stock.
    """

    key: jnp.ndarray  # PRNG key of the native stock draws
    submit: jnp.ndarray  # f[N] [s]
    cx: jnp.ndarray  # i32[N] complexity class
    tight: jnp.ndarray  # bool[N]
    deadline: jnp.ndarray  # f[N] [s]
    runtime: jnp.ndarray  # f[N, T] [s] realised
    prov_q: jnp.ndarray  # f[N] provisioning quantile
    order_sub: jnp.ndarray  # i32[N] job ids by (subqueue, submit)
    sub_off: jnp.ndarray  # i32[S+1] segment offsets into order_sub
    seg_submit: jnp.ndarray  # f[N] submit along order_sub
    seg_deadline: jnp.ndarray  # f[N]
    seg_x: jnp.ndarray  # f[N] d − e_κ along order_sub (the laxity is x − t)
    seg_cum_submit: jnp.ndarray  # f[N+1] cumulative seg_submit
    fresh_u: jnp.ndarray  # f[M, T]
    markov_times: jnp.ndarray  # f[T, P]
    markov_us: jnp.ndarray  # f[T, P]
    regime: jnp.ndarray | None = None  # i32 row of params.mix.table (mixed envs only; None otherwise)


@struct.dataclass
class EnvState:
    """The simulator paused at a decision point (or at the end of the day).

    ``day`` holds the day's arrays, or is empty (zero jobs) when the day is row ``day_idx`` of
    the parameters' pool (:meth:`JaxCGRSP.with_pool`: an auto-reset then costs O(1), not O(N)).
    The per-job records (``dispatch`` ... ``job_slot``) are empty when the env is built with
    ``records=False`` (training: the dynamics never read them).
    """

    day: Day
    day_idx: jnp.ndarray  # i32 row of params.pool (pool mode)
    t: jnp.ndarray  # f [s]
    n_arrived: jnp.ndarray  # i32
    n_completed: jnp.ndarray  # i32
    ptr: jnp.ndarray  # i32[S] first waiting member of each subqueue (index into its segment)
    end: jnp.ndarray  # i32[S] members arrived
    slot_job: jnp.ndarray  # i32[C] (−1 idle)
    slot_end: jnp.ndarray  # f[C] completion time of the slot's job (core.NEVER: idle)
    slot_start: jnp.ndarray  # f[C] realised start of the slot's job (core.NEVER before the slot's first job)
    slot_disp: jnp.ndarray  # f[C] dispatch time of the slot's job
    slot_level: jnp.ndarray  # i32[C] stock level at dispatch
    stock: jnp.ndarray  # i32[T] status per type at this decision point
    n_dec: jnp.ndarray  # i32 decision points so far
    dp_count: jnp.ndarray  # i32 dispatches at this decision point
    mk_k: jnp.ndarray  # i32[T] Markov: index of the current redraw event
    mk_u: jnp.ndarray  # f[T] Markov: current quantile
    mk_next: jnp.ndarray  # f[T] Markov: time of the next redraw (core.NEVER: none, as under fresh stock)
    mk_lam: jnp.ndarray  # f[T] Markov (native): cumulative hazard of the next redraw
    dispatch: jnp.ndarray  # f[N] per-job records (inf: not yet)
    start: jnp.ndarray  # f[N]
    completion: jnp.ndarray  # f[N]
    job_slot: jnp.ndarray  # i32[N]
    ep_raw: jnp.ndarray  # f[len(REWARD_PARTS)] summed raw reward parts (REWARD_PARTS)
    sum_wait: jnp.ndarray  # f Σ (start − submit) over dispatched jobs [s]
    sum_delay: jnp.ndarray  # f Σ provisioning delays [s]
    cost: jnp.ndarray  # f [$]
    n_miss: jnp.ndarray  # i32
    n_tight_miss: jnp.ndarray  # i32
    done: jnp.ndarray  # bool
    n_steps: jnp.ndarray  # i32
    n_invalid: jnp.ndarray  # i32 illegal actions played as their substitute (JaxCGRSP's docstring)
    held: jnp.ndarray | None = None  # bool[T] joint_hold: the GPU types held (.hold); None in the joint design
    held_level: jnp.ndarray | None = None  # i32[T] joint_hold: the stock status each type was held under


@struct.dataclass
class EnvParams:
    """The world (fleet, stock model, workload law) and the reward, as arrays."""

    wbar: jnp.ndarray  # f[3, T] [s]
    wbar_rel: jnp.ndarray  # f[3, T]
    wbar_excess: jnp.ndarray  # f[3, T] W̄[c, g] − Σ_c' p_c'·W̄[c', g] [s] (the excess_run part's per-dispatch charge)
    slot_type: jnp.ndarray  # i32[C]
    price_per_s: jnp.ndarray  # f[T]
    slot_price_rel: jnp.ndarray  # f[C]
    delay_lo: jnp.ndarray  # f[3] by level
    delay_span: jnp.ndarray  # f[3]
    delay_mean: jnp.ndarray  # f[3]
    band_starts: jnp.ndarray  # f[B] [s of UTC day]
    p_high: jnp.ndarray  # f[B, T]
    p_hm: jnp.ndarray  # f[B, T]
    level_probs: jnp.ndarray  # f[B, T, 3] as Fleet.level_probs
    expected_delay: jnp.ndarray  # f[B, T]
    redraw_wait: jnp.ndarray  # f[B, T] Markov: D·(1 − Σπ²) (0 under fresh stock)
    lam_knots: jnp.ndarray  # f[T, B+1] cumulative redraw hazard over one UTC day
    clock_knots: jnp.ndarray  # f[B+1]
    start_offset: jnp.ndarray  # f [s]
    start_hour: jnp.ndarray  # f [h]
    e_k: jnp.ndarray  # f[3] fastest W̄ per class in the fleet
    est: jnp.ndarray  # f[3] SPT's nominal estimate per class
    arrival_rate: jnp.ndarray  # f [jobs/s]
    complexity_probs: jnp.ndarray  # f[3]
    tight_fraction: jnp.ndarray  # f
    windows: jnp.ndarray  # f[2] deadline window (loose, tight) [s]
    runtime_sigma: jnp.ndarray  # f
    weights: jnp.ndarray  # f[len(REWARD_PARTS)] reward weights (REWARD_PARTS)
    reward_scale: jnp.ndarray  # f
    rho_feat: jnp.ndarray  # f ρ/(1 + ρ)
    lax_h: jnp.ndarray  # f laxity bound [h]
    ttf_h: jnp.ndarray  # f time-to-free bound [h]
    shaping_w: jnp.ndarray  # f[2] price of the shaping potentials: job-seconds of waiting, jobs at risk (.shaping)
    shaping_gamma: jnp.ndarray  # f γ of the shaping term γ·Φ(s′) − Φ(s)
    w_mean: jnp.ndarray  # f the fleet's mean W̄ [s] (the backlog and queue potentials)
    pool: Day | None = None  # days with a leading pool axis (JaxCGRSP.with_pool), or None
    pool_start: EnvState | None = None  # each pool day's state at its first decision point (a reset is a gather)
    # mixed envs (gpu_sched_env.cgrsp.jax.mix): the per-regime quantities a static Spec holds otherwise
    n_jobs: jnp.ndarray | None = None  # i32 the day's real job count (the rest of the N rows is padding)
    log_n: jnp.ndarray | None = None  # f log1p(n_jobs), as the reference's observation scales counts
    markov: jnp.ndarray | None = None  # bool Markov stock (else fresh)
    mix: Mix | None = None  # the regimes' table (unresolved params of a mixed env), or None


@struct.dataclass
class Mix:
    """The regimes of a mixed env: one :class:`EnvParams` row per (day type, stock model) and its probability."""

    table: EnvParams  # every field with a leading regime axis R
    probs: jnp.ndarray  # f[R], sums to 1


class _Row:
    """Row ``idx`` of a pooled array, indexed like the array of one day (``a[j]`` is ``pool[idx, j]``)."""

    __slots__ = ("a", "idx")

    def __init__(self, a: jnp.ndarray, idx: jnp.ndarray) -> None:
        self.a, self.idx = a, idx

    def __getitem__(self, key):
        return self.a[(self.idx, *(key if isinstance(key, tuple) else (key,)))]

    @property
    def shape(self) -> tuple:
        return self.a.shape[1:]


class PoolDay:
    """One day of a pool, read through gathers (no copy of the day)."""

    def __init__(self, pool: Day, idx: jnp.ndarray) -> None:
        self._pool, self._idx = pool, idx

    def __getattr__(self, name: str):
        a = getattr(self._pool, name)
        if a is None:  # an optional field the pool does not carry (regime of a single-regime pool)
            return None
        return a[self._idx] if name in ("key", "regime") else _Row(a, self._idx)


def day_of(s: EnvState, params: EnvParams) -> Day | PoolDay:
    """The state's day: its own arrays, or its row of the pool."""
    if s.day.submit.shape[0] == 0 and params.pool is not None:
        return PoolDay(params.pool, s.day_idx)
    return s.day


def n_jobs_of(n: int, params: EnvParams):
    """The day's job count: the static ``n`` of a single-regime env, the regime's (data) in a mixed env."""
    return n if params.n_jobs is None else params.n_jobs


def per_job(x: jnp.ndarray, n: int, params: EnvParams) -> jnp.ndarray:
    """``x / n_jobs``: by the static ``n``, or (a mixed env) by the regime's count, to the same bits."""
    return times_inv_n(x, n, params)


def times_inv_n(x: jnp.ndarray, n: int, params: EnvParams, num: float = 1.0, den: float = 1.0) -> jnp.ndarray:
    """``x · c`` with ``c = num / (n_jobs · den)`` rounded once in the quotient's dtype, for every env alike.

    ``n_jobs`` is :func:`n_jobs_of` (the static ``n`` of a single-regime env, a mixed env's regime
    count as data). The product is written out because XLA's folding of ``x / n / 60`` into a
    product is not a contract (it gave another last bit on the quiet day than the mixed env's);
    with ``c`` explicit a day plays to the same bits in its own env and in a mixed pool
    (tests/cgrsp/jax/test_mixed.py checks every step of whole days). The quotient's dtype is
    float32 for an int32 ``x`` (as ``jnp`` divides it), else ``x``'s. CGRSP-v0 divides twice in
    float64: within an ulp of this (the equivalence tests' tolerance).
    """
    x = jnp.asarray(x)
    dt = jnp.float32 if jnp.issubdtype(x.dtype, jnp.integer) else x.dtype
    count = jnp.asarray(n_jobs_of(n, params)).astype(dt)
    return x * (jnp.asarray(num, dt) / (count * jnp.asarray(den, dt)))


def flat(x) -> tuple[jnp.ndarray, jnp.ndarray | int]:
    """``(1-D array, offset of this day in it)`` of a day's array (for binary searches over segments)."""
    if isinstance(x, _Row):
        return x.a.reshape(-1), x.idx * x.a.shape[1]
    return x, 0


def make_params(p: CGRSPParams, cfg, dtype) -> EnvParams:
    """:class:`EnvParams` of simulator parameters ``p`` and env config ``cfg`` (float ``dtype``)."""
    fl = Fleet.from_params(p)
    f = lambda x: jnp.asarray(np.asarray(x, np.float64), dtype)  # noqa: E731
    wbar = np.asarray(fl.wbar, np.float64)
    b, t = len(fl.band_starts), fl.n_types
    probs = np.array([[fl.level_probs(i, g) for g in range(t)] for i in range(b)])
    exp_delay = np.array([[fl.expected_delay(i, g) for g in range(t)] for i in range(b)])
    gini = 1.0 - (probs**2).sum(axis=2)
    markov = p.stock_process == "markov"
    redraw = p.stock_dwell_s * gini if markov else np.zeros((b, t))
    clock_knots = np.array([*fl.band_starts, 86400.0])
    d = p.stock_dwell_s
    rates = np.where(gini > 1e-12, 1.0 / (d * np.maximum(gini, 1e-300)), 1.0 / d)  # as MarkovStock
    lam_knots = np.concatenate([np.zeros((t, 1)), np.cumsum(rates.T * np.diff(clock_knots), axis=1)], axis=1)
    weights, _ = weights_of(cfg, p)
    price = np.asarray(fl.price_per_h)
    delay_mean = max((lo + hi) / 2.0 for lo, hi in (p.delay_high, p.delay_medium, p.delay_low))
    rho = fl.offered_load
    return EnvParams(
        wbar=f(wbar),
        wbar_rel=f(wbar / wbar.max()),
        wbar_excess=f(wbar - np.asarray(p.complexity_probs, np.float64) @ wbar),
        slot_type=jnp.asarray(fl.slot_type, jnp.int32),
        price_per_s=f(fl.price_per_s),
        slot_price_rel=f(price[fl.slot_type] / max(price.max(), 1e-12)),
        delay_lo=f(fl.delay_lo),
        delay_span=f(fl.delay_span),
        delay_mean=f(fl.delay_mean),
        band_starts=f(fl.band_starts),
        p_high=f(fl.p_high),
        p_hm=f(fl.p_high_medium),
        level_probs=f(probs),
        expected_delay=f(exp_delay),
        redraw_wait=f(redraw),
        lam_knots=f(lam_knots),
        clock_knots=f(clock_knots),
        start_offset=f(fl.start_offset),
        start_hour=f(p.start_hour_utc),
        e_k=f(fl.fastest_wbar),
        est=f(wbar[:, fl.nominal_type]),
        arrival_rate=f(p.arrival_rate),
        complexity_probs=f(p.complexity_probs),
        tight_fraction=f(p.tight_fraction),
        windows=f([p.loose_window, p.tight_window]),
        runtime_sigma=f(p.runtime_sigma),
        weights=f([weights[k] for k in REWARD_PARTS]),
        reward_scale=f(cfg.reward_scale),
        rho_feat=f(rho / (1.0 + rho)),
        lax_h=f(max(p.tight_window, p.loose_window) / 3600.0),
        ttf_h=f((delay_mean + wbar.max()) / 3600.0),
        shaping_w=f([weights[PRESETS[cfg.reward].shaping_part], weights["miss"]]),  # as rewards.ShapingPotential
        shaping_gamma=f(cfg.shaping_gamma),
        w_mean=f(fl.mean_wbar),
    )


# The ranges check_params holds the world's fields to, beyond finiteness: (low, high, low open).
# They are CGRSPParams' and CGRSPEnvConfig's bounds on the values these fields are made of
# (make_params), so params built from a config always pass; ``params.replace(...)`` may not.
PARAM_RANGES: dict[str, tuple[float, float, bool]] = {
    "wbar": (0.0, MAX_TIME_S, True),
    "price_per_s": (0.0, np.inf, False),
    "delay_lo": (0.0, MAX_TIME_S, False),
    "delay_span": (0.0, MAX_TIME_S, False),
    "delay_mean": (0.0, MAX_TIME_S, False),
    "p_high": (0.0, 1.0, False),
    "p_hm": (0.0, 2.0, False),  # p_H + p_M before the cap at 1 (Fleet.p_high_medium)
    "level_probs": (0.0, 1.0, False),
    "redraw_wait": (0.0, MAX_TIME_S, False),
    "arrival_rate": (0.0, np.inf, True),
    "complexity_probs": (0.0, 1.0, False),
    "tight_fraction": (0.0, 1.0, False),
    "windows": (0.0, MAX_TIME_S, True),
    "runtime_sigma": (0.0, MAX_RUNTIME_SIGMA, False),
    "weights": (0.0, np.inf, False),
    "reward_scale": (MIN_REWARD_SCALE, MAX_REWARD_SCALE, False),
    "shaping_gamma": (0.0, 1.0, False),
}
_NOT_WORLD = ("pool", "pool_start", "mix", "n_jobs", "log_n", "markov")  # days, states and a mix's own fields


def check_params(params: EnvParams) -> EnvParams:
    """``params`` if every world field is finite and within :data:`PARAM_RANGES`; else ConfigError naming the entry.

    Host side, for the functions that take concrete params (``rules.evaluate``, ``rules.rollout``,
    ``JaxCGRSP.with_pool``): params built by :func:`make_params` from a validated config always
    pass, while ``params.replace(arrival_rate=nan)`` would otherwise play a silent, empty day.
    A mixed env's regimes (``params.mix.table``) are checked alike. Inside a trace (the leaves
    are tracers) nothing can be read, and nothing is checked.
    """
    tables = [("params", params)]
    if params.mix is not None:
        tables.append(("params.mix.table", params.mix.table))
    for where, table in tables:
        names = [f.name for f in dataclasses.fields(table) if f.name not in _NOT_WORLD]
        leaves = [getattr(table, n) for n in names]
        if any(isinstance(x, jax.core.Tracer) for x in leaves):
            return params
        for name, value in zip(names, jax.device_get(leaves)):
            _check_field(f"{where}.{name}", np.asarray(value), PARAM_RANGES.get(name))
    return params


def _check_field(where: str, value: np.ndarray, bounds: tuple[float, float, bool] | None) -> None:
    if value.dtype.kind not in "fc":
        return  # integer and boolean fields (slot types) are finite by their dtype
    bad = ~np.isfinite(value)
    allowed = "a finite number"
    if bounds is not None and not bad.any():
        lo, hi, lo_open = bounds
        bad = ((value <= lo) if lo_open else (value < lo)) | (value > hi)
        allowed = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        at = f"[{', '.join(map(str, idx))}]" if idx else ""
        raise ConfigError(f"{where}{at} = {value[idx].item()!r} is not allowed; allowed: {allowed}")


__all__ = [
    "N_SUB",
    "PARAM_RANGES",
    "REWARD_PARTS",
    "Day",
    "EnvParams",
    "EnvState",
    "Mix",
    "check_params",
    "PoolDay",
    "day_of",
    "flat",
    "make_params",
    "n_jobs_of",
    "per_job",
    "times_inv_n",
]
