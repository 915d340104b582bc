"""The event dynamics of the JAX env: stock draws, dispatch and the advance to the next decision point.

The reference (:meth:`gpu_sched_env.cgrsp.sim.Simulator.advance`) pops events from a heap in
a Python loop; here one ``lax.while_loop`` iteration handles one event: the completions due
by then (the C slots' end times, a masked scatter) and at most one arrival (the next in submit
order; arrivals tied in time take one iteration each before the decision test), until a slot
is idle while a job waits, or nothing is left to happen. Each subqueue's arrived count grows
with its arrivals, so no step searches the day's submit times. Every update of an N-sized array
is a scatter at one index (or C indices), so a step costs O(C + log N) whatever the queue, also
under ``vmap`` (no ``lax.cond`` there: a branch taken by one env would make every env pay for
both).

The reward parts are booked as :class:`~gpu_sched_env.cgrsp.rewards.RewardLedger` books them.
Misses are counted without scanning the queue: a job whose deadline passes during an advance
from t0 to t1 is missed if it still waits at t1 (a waiting subqueue's jobs are a contiguous
run in deadline order: two binary searches) or if it was on a slot at t0 and has not
completed by its deadline (C checks); a job that completed before t0 met its deadline.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from gpu_sched_env.cgrsp.jax.types import N_SUB, REWARD_PARTS, Day, EnvParams, EnvState, day_of, flat

DAY_S = 86400.0
INF = float("inf")  # minima and masks inside a computation; the "not yet" of the per-job records
# [s] The time of an event that never comes (an idle slot's end and start, the redraw after a stock path's last):
# a finite sentinel, so the dynamic state is finite (Jumanji's check_env_does_not_smoke asserts every leaf is).
# 2**80 is exact in float32 and float64, above every simulated time, and absorbs what a step adds to it as inf does
# (half an ulp of 2**80 is 2**27 s, about 4 years, in float64; 2**56 s in float32): NEVER + run == NEVER, so sums
# and orders built on it come out as they did on inf. Two infs stay, by contract: the per-job records' "not yet"
# (CGRSP-v0's records; records=False drops them) and a mixed env's padded jobs' submit time (they never arrive).
NEVER = 2.0**80


class Spec(NamedTuple):
    """Static sizes and switches (closed over by jit)."""

    n: int  # jobs per day (a mixed env: the largest day's; smaller days are padded)
    c: int  # slots
    t: int  # GPU types
    markov: bool | None  # stock process; None: per env, params.markov (a mixed env)


def seg_search(
    vals: jnp.ndarray, lo: jnp.ndarray, hi: jnp.ndarray, v: jnp.ndarray, strict: bool, max_len: int
) -> jnp.ndarray:
    """First index in ``[lo, hi)`` whose value is ``>= v`` (``strict``) or ``> v``; ``hi`` if none.

    Vectorised; ``vals`` is sorted on every range, and no range is longer than ``max_len``
    (static). Branchless, with one carry: the position moves by halving powers of two while the
    value before it is below ``v``, ``max_len.bit_length()`` gathers per query. One carry
    instead of the pair ``(lo, hi)`` of the textbook search costs half the selects and writes
    per iteration (one A/B under load measured the step ~15 % faster, 2026-11-27; a second A/B
    could not resolve it); the loop is not unrolled: XLA then fused the chain of gathers into
    fusions that recompute it (slower in the same A/B).
    """
    last = vals.shape[0] - 1
    n_iter = max(int(max_len), 1).bit_length()  # 2**n_iter − 1 ≥ max_len

    def body(k, pos):
        cand = pos + jnp.left_shift(1, n_iter - 1 - k)
        x = vals[jnp.minimum(cand - 1, last)]  # cand ≥ lo + 1 ≥ 1: never below 0
        below = (x < v) if strict else (x <= v)
        return jnp.where((cand <= hi) & below, cand, pos)

    return lax.fori_loop(0, n_iter, body, lo)


_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))  # threefry2x32's rotations, alternating per block of 4 rounds


def _threefry2x32(k1: jnp.ndarray, k2: jnp.ndarray, x1: jnp.ndarray, x2: jnp.ndarray) -> tuple:
    """JAX's threefry2x32 hash (the default PRNG's), written out: the same bits as ``jax.random``'s.

    Why: on the CPU JAX lowers each hash to a ``while`` loop of 5 iterations; the env hashes a
    few times per step (the stock draws), and under ``vmap`` those loops cost ~7 % of a step
    (2026-11-27 profile, 1 024 envs). Written out, XLA fuses the 20 rounds into one loop over
    the batch. ``tests/cgrsp/jax/test_prng.py`` checks the bits against ``jax.random``.
    """
    ks = (k1, k2, k1 ^ k2 ^ jnp.uint32(0x1BD11BDA))
    x1, x2 = x1 + ks[0], x2 + ks[1]
    for i in range(5):
        for r in _ROT[i % 2]:
            x1 = x1 + x2
            x2 = (x2 << jnp.uint32(r)) | (x2 >> jnp.uint32(32 - r))
            x2 = x1 ^ x2
        x1 = x1 + ks[(i + 1) % 3]
        x2 = x2 + ks[(i + 2) % 3] + jnp.uint32(i + 1)
    return x1, x2


def _typed(key: jnp.ndarray) -> bool:
    """A new-style key (``jax.random.key``): its implementation may not be threefry, so ``jax.random`` draws."""
    return jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)


def fold_in(key: jnp.ndarray, data) -> jnp.ndarray:
    """``jax.random.fold_in(key, data)`` (same bits; written out for raw ``uint32[2]`` keys)."""
    if _typed(key):
        return jax.random.fold_in(key, data)
    y1, y2 = _threefry2x32(key[0], key[1], jnp.uint32(0), jnp.asarray(data).astype(jnp.uint32))
    return jnp.stack([y1, y2])


def uniform(key: jnp.ndarray, n: int | None, dtype) -> jnp.ndarray:
    """``jax.random.uniform(key, shape, dtype)`` in [0, 1), shape ``(n,)`` or ``()`` for ``n=None`` (same bits)."""
    if _typed(key):
        return jax.random.uniform(key, () if n is None else (n,), dtype)
    cnt = jnp.arange(1 if n is None else n, dtype=jnp.uint32)
    b1, b2 = _threefry2x32(key[0], key[1], jnp.zeros_like(cnt), cnt)
    if jnp.dtype(dtype) == jnp.float64:
        bits = (b1.astype(jnp.uint64) << jnp.uint64(32)) | b2.astype(jnp.uint64)
        one, nbits, nmant = jnp.uint64(0x3FF0000000000000), 64, 52
    else:
        bits, one, nbits, nmant = b1 ^ b2, jnp.uint32(0x3F800000), 32, 23
    x = lax.bitcast_convert_type((bits >> (nbits - nmant)).astype(bits.dtype) | one, dtype) - 1.0
    x = jnp.maximum(0.0, x).astype(dtype)
    return x[0] if n is None else x


def exponential(key: jnp.ndarray, dtype) -> jnp.ndarray:
    """``jax.random.exponential(key, (), dtype)`` (same bits)."""
    return -jnp.log1p(-uniform(key, None, dtype))


def pool_row(key: jnp.ndarray, size: int) -> jnp.ndarray:
    """A uniform row index in ``[0, size)`` from ``key``: one hash (:func:`uniform`).

    ``jax.random.randint`` takes three hashes (a split and two draws, each a 5-step loop on the
    CPU): 12 % of an auto-reset step of 1 024 envs (2026-11-27 profile). A float32 uniform
    resolves 2⁻²⁴, so for pools of thousands of days the rows are uniform to ~1e-4 relative.
    """
    return jnp.minimum((uniform(key, None, jnp.float32) * size).astype(jnp.int32), size - 1)


def band_of(params: EnvParams, t: jnp.ndarray) -> jnp.ndarray:
    """Time-of-day band index at sim time ``t`` (as ``Fleet.band``)."""
    clock = jnp.fmod(params.start_offset + t, DAY_S)
    return jnp.searchsorted(params.band_starts, clock, side="right").astype(jnp.int32) - 1


def levels_of(params: EnvParams, t: jnp.ndarray, u: jnp.ndarray) -> jnp.ndarray:
    """Stock level per type from one uniform per type (as ``Fleet.stock_levels``)."""
    b = band_of(params, t)
    return jnp.where(u < params.p_high[b], 0, jnp.where(u < params.p_hm[b], 1, 2)).astype(jnp.int32)


def _lam(params: EnvParams, clock: jnp.ndarray) -> jnp.ndarray:
    """Cumulative redraw hazard per type at UTC clock ``clock`` [s] (``_Path._lam``)."""
    k = jnp.floor(clock / DAY_S)
    lam_day = params.lam_knots[:, -1]
    inner = jax.vmap(lambda knots: jnp.interp(clock - k * DAY_S, params.clock_knots, knots))(params.lam_knots)
    return k * lam_day + inner


def _lam_inv(params: EnvParams, lam: jnp.ndarray) -> jnp.ndarray:
    """UTC clock [s] per type where the cumulative hazard reaches ``lam`` (f[T])."""
    lam_day = params.lam_knots[:, -1]
    k = jnp.floor(lam / lam_day)
    inner = jax.vmap(lambda x, knots: jnp.interp(x, knots, params.clock_knots))(lam - k * lam_day, params.lam_knots)
    return k * DAY_S + inner


def _markov_key(day: Day, g: jnp.ndarray, k: jnp.ndarray) -> jnp.ndarray:
    return fold_in(fold_in(fold_in(day.key, 1), g), k)


def markov_init(spec: Spec, params: EnvParams, s: EnvState, dtype) -> tuple:
    """``(mk_k, mk_u, mk_next, mk_lam)`` at time 0 (stationary start: U(0) uniform)."""
    day = day_of(s, params)
    z = jnp.zeros(spec.t, dtype)
    k = jnp.zeros(spec.t, jnp.int32)
    if spec.markov is False:
        return k, z, jnp.full(spec.t, NEVER, dtype), z
    if day.markov_times.shape[1]:  # materialised paths
        nxt = day.markov_times[:, 1] if day.markov_times.shape[1] > 1 else jnp.full(spec.t, NEVER, dtype)
        return k, day.markov_us[:, 0], nxt, z
    g = jnp.arange(spec.t)
    keys = jax.vmap(lambda gg: _markov_key(day, gg, 0))(g)
    u = jax.vmap(lambda kk: uniform(fold_in(kk, 0), None, dtype))(keys)
    e = jax.vmap(lambda kk: exponential(fold_in(kk, 1), dtype))(keys)
    lam = _lam(params, params.start_offset) + e
    nxt = _lam_inv(params, lam) - params.start_offset
    if spec.markov is None:  # mixed env: the fresh start where this env's stock is fresh (no redraw ever due)
        m = params.markov
        return k, jnp.where(m, u, z), jnp.where(m, nxt, NEVER), jnp.where(m, lam, z)
    return k, u, nxt, lam


def markov_sync(spec: Spec, params: EnvParams, day: Day, s: EnvState, t: jnp.ndarray) -> EnvState:
    """Advance every type's redraw events up to time ``t``.

    The status holds the last quantile drawn at or before ``t``.
    """
    mat = day.markov_times.shape[1] > 0
    width = day.markov_times.shape[1]
    g = jnp.arange(spec.t)

    def body(c):
        k, u, nxt, lam = c
        adv = nxt <= t
        k2 = k + adv.astype(jnp.int32)
        if mat:
            u2 = day.markov_us[g, jnp.minimum(k2, width - 1)]
            n2 = jnp.where(k2 + 1 < width, day.markov_times[g, jnp.minimum(k2 + 1, width - 1)], NEVER)
            lam2 = lam
        else:
            keys = jax.vmap(lambda gg, kk: _markov_key(day, gg, kk))(g, k2)
            u2 = jax.vmap(lambda kk: uniform(fold_in(kk, 0), None, u.dtype))(keys)
            lam2 = lam + jax.vmap(lambda kk: exponential(fold_in(kk, 1), u.dtype))(keys)
            n2 = _lam_inv(params, lam2) - params.start_offset
        return (k2, jnp.where(adv, u2, u), jnp.where(adv, n2, nxt), jnp.where(adv, lam2, lam))

    k, u, nxt, lam = lax.while_loop(lambda c: jnp.any(c[2] <= t), body, (s.mk_k, s.mk_u, s.mk_next, s.mk_lam))
    return s.replace(mk_k=k, mk_u=u, mk_next=nxt, mk_lam=lam)


def draw_stock(spec: Spec, params: EnvParams, s: EnvState) -> EnvState:
    """The status of every type at this decision point (the reference's ``stock.levels(t)``)."""
    day = day_of(s, params)
    if spec.markov is None:  # mixed env (native days): a fresh env's redraws are never due, its sync is a no-op
        s = markov_sync(spec, params, day, s, s.t)
        fresh = jax.random.uniform(jax.random.fold_in(jax.random.fold_in(day.key, 0), s.n_dec), (spec.t,), s.t.dtype)
        u = jnp.where(params.markov, s.mk_u, fresh)
    elif spec.markov:
        s = markov_sync(spec, params, day, s, s.t)
        u = s.mk_u
    elif day.fresh_u.shape[0]:
        u = day.fresh_u[jnp.minimum(s.n_dec, day.fresh_u.shape[0] - 1)]
    else:
        u = uniform(fold_in(fold_in(day.key, 0), s.n_dec), spec.t, s.t.dtype)
    return s.replace(stock=levels_of(params, s.t, u), n_dec=s.n_dec + 1)


def n_waiting(s: EnvState) -> jnp.ndarray:
    """Jobs waiting (arrived, not dispatched)."""
    return s.n_arrived - jnp.sum(s.ptr, dtype=jnp.int32)


def n_idle(s: EnvState) -> jnp.ndarray:
    """Idle slots."""
    return jnp.sum(s.slot_job < 0, dtype=jnp.int32)


def book(like: jnp.ndarray, **parts: jnp.ndarray) -> jnp.ndarray:
    """The raw reward parts named in ``parts`` as one vector in :data:`REWARD_PARTS` order (a part not named is 0).

    By name, so the order lives in one place (``rewards.PARTS``); an unknown name fails at trace time.
    """
    unknown = sorted(set(parts) - set(REWARD_PARTS))
    if unknown:
        raise KeyError(f"reward parts {unknown} are not in REWARD_PARTS {REWARD_PARTS}")
    zero = 0.0 * like
    return jnp.stack([parts.get(k, zero) for k in REWARD_PARTS])


def advance(spec: Spec, params: EnvParams, s: EnvState, go: jnp.ndarray) -> tuple[EnvState, jnp.ndarray, jnp.ndarray]:
    """Process events to the next decision point when ``go`` (else nothing happens).

    Returns ``(state, raw parts booked [f[len(REWARD_PARTS)]], tight misses)``; ``state.done`` is set when
    the day is over.
    """
    day = day_of(s, params)
    n = spec.n
    t0, n0, q0, idle0, job0, end0 = s.t, s.n_arrived, n_waiting(s), n_idle(s), s.slot_job, s.slot_end

    def cond(c):
        return c[1]

    def body(c):
        # one arrival per iteration (no binary search over the day), arrivals tied in time taken
        # in successive iterations before the decision test, so every event at tn is in
        st, _, c1 = c
        ta = jnp.where(st.n_arrived < n, day.submit[jnp.minimum(st.n_arrived, n - 1)], NEVER)
        tn = jnp.minimum(ta, jnp.min(st.slot_end))
        live = tn < NEVER  # a padded job's submit (inf) is past NEVER too
        fin = (st.slot_end <= tn) & live
        idx = jnp.where(fin, st.slot_job, n)  # out of range: dropped
        comp = st.completion.at[idx].set(st.slot_end, mode="drop") if st.completion.shape[0] else st.completion
        arr = live & (ta <= tn)
        j = jnp.minimum(st.n_arrived, n - 1)
        sub = 2 * day.cx[j] + day.tight[j].astype(jnp.int32)  # the arriving job's subqueue
        na = st.n_arrived + arr.astype(jnp.int32)
        st = st.replace(
            t=jnp.where(live, tn, st.t),
            completion=comp,
            n_arrived=na,
            n_completed=st.n_completed + jnp.sum(fin, dtype=jnp.int32),
            slot_job=jnp.where(fin, -1, st.slot_job),
            slot_end=jnp.where(fin, NEVER, st.slot_end),
            end=st.end + ((jnp.arange(N_SUB) == sub) & arr).astype(jnp.int32),
        )
        tie = (na < n) & (day.submit[jnp.minimum(na, n - 1)] <= tn)  # another arrival at this same time
        decision = (n_idle(st) > 0) & (n_waiting(st) > 0) & ~tie
        # an arrival is processed at its own submit time (tn = ta), so Σ_arrivals (t1 − submit)
        # = Σ_iterations k·(t1 − tn): kept as offsets from t0, exact enough in float32 too
        c1 = c1 + (na - c[0].n_arrived) * (tn - t0)
        return st, live & ~decision, jnp.where(live, c1, c[2])

    s, _, c1 = lax.while_loop(cond, body, (s, go, jnp.zeros((), s.t.dtype)))
    alive = (n_idle(s) > 0) & (n_waiting(s) > 0)
    drawn = draw_stock(spec, params, s)
    redraw = go & alive
    pick = lambda name: jnp.where(redraw, getattr(drawn, name), getattr(s, name))  # noqa: E731
    s = s.replace(**{k: pick(k) for k in ("stock", "n_dec", "mk_k", "mk_u", "mk_next", "mk_lam")})
    s = s.replace(done=s.done | (go & ~alive), dp_count=jnp.where(go, 0, s.dp_count))
    # --- reward parts of the advance (RewardLedger.on_advance)
    t1, n1 = s.t, s.n_arrived
    dt = t1 - t0
    wait = q0 * dt + (n1 - n0) * dt - c1  # the queue integral (RewardLedger: q0·Δt + Σ_arrivals (t1 − submit))
    waste = jnp.where(q0 > 0, idle0 * dt * q0 / spec.c, 0.0)
    # misses: deadlines in (t0, t1] of jobs still waiting, or on a slot at t0 and not done by then
    dl_vals, dl_base = flat(day.seg_deadline)
    lo = day.sub_off[:-1] + s.ptr + dl_base
    hi = day.sub_off[:-1] + s.end + dl_base
    both = seg_search(dl_vals, jnp.tile(lo, 2), jnp.tile(hi, 2), jnp.repeat(jnp.stack([t1, t0]), N_SUB), False, spec.n)
    waiting_miss = both[:N_SUB] - both[N_SUB:]  # one search loop for both ends
    j = jnp.maximum(job0, 0)
    dj = day.deadline[j]
    flight_miss = (job0 >= 0) & (dj > t0) & (dj <= t1) & (end0 > dj)  # a slot's job completes at its end time
    miss = jnp.sum(waiting_miss) + jnp.sum(flight_miss)
    tight_miss = (jnp.sum(waiting_miss[1::2]) + jnp.sum(flight_miss & day.tight[j])).astype(jnp.int32)
    raw = book(t1, wait=wait, miss=miss.astype(t1.dtype), waste=waste)
    return s, raw, tight_miss


def dispatch(
    spec: Spec, params: EnvParams, s: EnvState, sub: jnp.ndarray, slot: jnp.ndarray, do: jnp.ndarray
) -> tuple[EnvState, jnp.ndarray, jnp.ndarray]:
    """Dispatch the head of subqueue ``sub`` to idle ``slot`` now, when ``do``.

    Returns ``(state, raw parts, job or −1)``.
    """
    day = day_of(s, params)
    n = spec.n
    sub = jnp.clip(sub, 0, N_SUB - 1)
    slot = jnp.clip(slot, 0, spec.c - 1)
    j = day.order_sub[jnp.minimum(day.sub_off[sub] + s.ptr[sub], n - 1)]
    g = params.slot_type[slot]
    lvl = s.stock[g]
    t = s.t
    start = t + params.delay_lo[lvl] + day.prov_q[j] * params.delay_span[lvl]
    run = day.runtime[j, g]
    q_before = n_waiting(s)
    ji = jnp.where(do, j, n)
    sel = jnp.arange(spec.c) == slot
    put = sel & do
    if s.dispatch.shape[0]:  # per-job records kept (records=True)
        s = s.replace(
            dispatch=s.dispatch.at[ji].set(t, mode="drop"),
            start=s.start.at[ji].set(start, mode="drop"),
            job_slot=s.job_slot.at[ji].set(slot, mode="drop"),
        )
    s = s.replace(
        ptr=s.ptr + ((jnp.arange(N_SUB) == sub) & do).astype(jnp.int32),
        slot_job=jnp.where(put, j, s.slot_job),
        slot_end=jnp.where(put, start + run, s.slot_end),
        slot_start=jnp.where(put, start, s.slot_start),
        slot_disp=jnp.where(put, t, s.slot_disp),
        slot_level=jnp.where(put, lvl, s.slot_level),
        dp_count=s.dp_count + do.astype(jnp.int32),
    )
    delay = start - t
    rate = q_before.astype(t.dtype) / spec.c  # in the state's float (an int32 quotient is float32 under x64)
    excess = params.wbar_excess[day.cx[j], g]  # the class's mean run time against the mix's
    # the class's mean run time against the shortest class still waiting (subqueue 2c + tight; j already taken off)
    mine = params.wbar[day.cx[j], g]
    others = (s.ptr < s.end).reshape(N_SUB // 2, 2).any(axis=1)
    regret = mine - jnp.minimum(mine, jnp.min(jnp.where(others, params.wbar[:, g], INF)))
    cost = run * params.price_per_s[g]
    raw = book(
        t,
        wait=delay,
        cost=cost,
        waste=delay * rate,
        run=run * rate,
        delay=delay,
        excess_run=excess * rate,
        order_regret=regret * rate,
    )
    raw = jnp.where(do, raw, 0.0)
    s = s.replace(
        sum_wait=s.sum_wait + jnp.where(do, start - day.submit[j], 0.0),
        sum_delay=s.sum_delay + jnp.where(do, delay, 0.0),
        cost=s.cost + jnp.where(do, cost, 0.0),
    )
    return s, raw, jnp.where(do, j, -1)


__all__ = [
    "INF",
    "NEVER",
    "Spec",
    "advance",
    "band_of",
    "book",
    "dispatch",
    "draw_stock",
    "exponential",
    "fold_in",
    "levels_of",
    "markov_init",
    "n_idle",
    "n_waiting",
    "pool_row",
    "seg_search",
    "uniform",
]
