"""The window of class heads, the action mask and the observation, as one flat float vector.

The same quantities as :class:`gpu_sched_env.cgrsp.obs.ObsEncoder` (read its docstring for
their meaning), computed from the subqueue pointers: the class head is the earlier (deadline,
submit) of the heads of the class's two subqueues, the ``beyond`` block counts each
subqueue's waiting run with binary searches (laxity is monotone within a subqueue), so a
step never scans the queue.

Flat layout (``gymnasium.spaces.flatten`` of CGRSP-v0's Dict space, whose keys are sorted,
without its leading ``action_mask``): ``beyond`` (12), ``globals`` (8), ``jobs`` (K × (7 + 2T),
row-major), ``model`` (T × 6, ``features="model"`` only), ``offer`` (T + 8, zero in joint
mode), ``slots`` (R × (T + 8), row-major), ``stock`` (T × 3).
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from gpu_sched_env.cgrsp.jax.core import INF, Spec, band_of, n_idle, n_waiting, seg_search
from gpu_sched_env.cgrsp.jax.legal import pair_mask
from gpu_sched_env.cgrsp.jax.types import N_SUB, EnvParams, EnvState, day_of, flat, n_jobs_of, per_job
from gpu_sched_env.cgrsp.obs import CR_CLIP, HOUR, LAX_BINS, MODEL_CLIP_MIN, WAIT_CLIP
from gpu_sched_env.cgrsp.stock import MIN_GAP_S


def _one_hot(i: jnp.ndarray, k: int, dt) -> jnp.ndarray:
    """One-hot rows of ``i`` over ``k`` values, by comparison (an eye-matrix gather costs more under vmap)."""
    return (i[..., None] == jnp.arange(k)).astype(dt)


def heads(
    s: EnvState, params: EnvParams, class_order: tuple[int, ...], n: int
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """Per class (in ``class_order``): ``(present, job id, subqueue)`` of its head."""
    day = day_of(s, params)
    cls = jnp.asarray(class_order)
    subs = jnp.stack([2 * cls, 2 * cls + 1], axis=1)  # (3, 2): loose, tight
    has = s.ptr[subs] < s.end[subs]
    j = day.order_sub[jnp.minimum(day.sub_off[subs] + s.ptr[subs], n - 1)]
    d, sub_t = day.deadline[j], day.submit[j]
    tight_first = has[:, 1] & (~has[:, 0] | (d[:, 1] < d[:, 0]) | ((d[:, 1] == d[:, 0]) & (sub_t[:, 1] < sub_t[:, 0])))
    pick = tight_first.astype(jnp.int32)
    rows = jnp.arange(len(class_order))
    return has.any(axis=1), j[rows, pick], subs[rows, pick]


def window(
    s: EnvState, params: EnvParams, class_order: tuple[int, ...], k: int, n: int
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """The window: ``(job id or −1, subqueue or −1)`` per position, and the number filled."""
    present, j, sub = heads(s, params, class_order, n)
    pos = jnp.cumsum(present) - 1
    tgt = jnp.where(present & (pos < k), pos, k)
    win_j = jnp.full(k, -1, jnp.int32).at[tgt].set(j.astype(jnp.int32), mode="drop")
    win_s = jnp.full(k, -1, jnp.int32).at[tgt].set(sub.astype(jnp.int32), mode="drop")
    return win_j, win_s, jnp.minimum(jnp.sum(present), k)


def action_mask(spec: Spec, s: EnvState, k: int, n_win: jnp.ndarray, params: EnvParams | None = None) -> jnp.ndarray:
    """CGRSP-v0's joint mask: window position × idle slot, then *wait* while a future event exists.

    ``params`` is needed for a mixed env only (the day's job count is data there).
    """
    return pair_mask(spec, s, jnp.arange(k) < n_win, params)


def expected_free(params: EnvParams, s: EnvState, busy: jnp.ndarray) -> jnp.ndarray:
    """Each slot's expected free time [s] from public knowledge (``Simulator.expected_free``); ``t`` for idle ones."""
    t = s.t
    j = jnp.maximum(s.slot_job, 0)
    w = params.wbar[day_of(s, params).cx[j], params.slot_type]
    started = s.slot_start <= t
    f = jnp.where(started, s.slot_start + w, jnp.maximum(t, s.slot_disp + params.delay_mean[s.slot_level]) + w)
    return jnp.where(busy, jnp.where(f > t, f, t), t)


def next_event_gap(spec: Spec, params: EnvParams, s: EnvState, busy: jnp.ndarray) -> jnp.ndarray:
    """:func:`gpu_sched_env.cgrsp.stock.next_event_gap` with ``busy`` as the busy slots."""
    gap = jnp.min(jnp.where(busy, expected_free(params, s, busy) - s.t, INF))
    gap = jnp.where(s.n_arrived < n_jobs_of(spec.n, params), jnp.minimum(gap, 1.0 / params.arrival_rate), gap)
    return jnp.maximum(gap, MIN_GAP_S)


def defer_cost(params: EnvParams, band: jnp.ndarray, gap: jnp.ndarray, markov: bool) -> jnp.ndarray:
    """:func:`gpu_sched_env.cgrsp.stock.defer_cost` for every type (f[T])."""
    probs = params.level_probs[band]  # (T, 3)
    w = jnp.maximum(gap, params.redraw_wait[band]) if markov else jnp.broadcast_to(gap, probs.shape[:1])
    dm = params.delay_mean
    best = jnp.full(probs.shape[:1], INF, w.dtype)
    for n_acc in (1, 2):
        pa = sum(probs[:, i] for i in range(n_acc))
        v = w / pa + sum(probs[:, i] * dm[i] for i in range(n_acc)) / pa
        best = jnp.where(pa > 0.0, jnp.minimum(best, v), best)
    return best


def observe(
    spec: Spec,
    params: EnvParams,
    s: EnvState,
    win_j: jnp.ndarray,
    win_s: jnp.ndarray,
    k_fill: jnp.ndarray,
    k: int,
    rows: int,
    model: bool,
    offered: jnp.ndarray | None = None,
    offer: tuple[jnp.ndarray, jnp.ndarray] | None = None,
) -> jnp.ndarray:
    """The flat observation (see the module docstring); float32.

    ``offered`` (bool[C]): the slots whose ``offered`` column is 1 (``joint_hold``: the idle
    slots not held); None: none (the joint design). ``offer`` (slot, present): the slot whose row
    the ``offer`` block repeats (``when``: the next pair's slot; zeros when not present); None:
    zeros (the joint design).

    Long by design: its sections (window jobs, beyond, slots, globals, model) build one flat vector
    whose column order the module docstring fixes and the equivalence tests pin bit for bit; they
    share ``day``, ``t``, ``dt`` and ``log_n``, and read in that order here, in one traced body.
    """
    day = day_of(s, params)
    t = s.t
    dt = t.dtype
    T, C = spec.t, spec.c
    f32 = jnp.float32
    # --- window jobs: a + t·b as the reference computes it, clipped
    present = win_j >= 0
    j = jnp.maximum(win_j, 0)
    cx, d, sub = day.cx[j], day.deadline[j], day.submit[j]
    e = params.e_k[cx]
    cr = jnp.clip(-1.0 / (e * CR_CLIP) * t + d / (e * CR_CLIP), 0.0, 1.0)
    wait = jnp.clip(1.0 / HOUR * t + (-sub / HOUR), 0.0, WAIT_CLIP)
    lax_ = jnp.clip(-1.0 / HOUR * t + (d[:, None] - params.wbar[cx]) / HOUR, -params.lax_h, params.lax_h)
    cols = jnp.concatenate(
        [
            jnp.ones((k, 1), dt),
            day.tight[j][:, None].astype(dt),
            _one_hot(cx, 3, dt),
            cr[:, None],
            wait[:, None],
            lax_,
            params.wbar_rel[cx],
        ],
        axis=1,
    )
    jobs = jnp.where(present[:, None], cols, 0.0).astype(f32)
    # --- beyond: each subqueue's waiting run, less the window's heads
    in_win = jnp.zeros(N_SUB, jnp.int32).at[jnp.where(present, win_s, N_SUB)].add(1, mode="drop")
    lo = day.sub_off[:-1] + s.ptr + in_win
    hi = day.sub_off[:-1] + s.end
    cnt = jnp.maximum(hi - lo, 0)
    nb = jnp.sum(cnt)
    edges = jnp.asarray(LAX_BINS, dt) * HOUR + t
    x_vals, x_base = flat(day.seg_x)
    lo_b = jnp.repeat(lo + x_base, 5)
    lt = seg_search(x_vals, lo_b, jnp.repeat(jnp.maximum(hi, lo) + x_base, 5), jnp.tile(edges, N_SUB), True, spec.n)
    lt = (lt - lo_b).reshape(N_SUB, 5).sum(axis=0)
    bins = jnp.concatenate([lt[:1], jnp.diff(lt), (nb - lt[-1])[None]]).astype(dt)
    sum_sub = jnp.sum(day.seg_cum_submit[jnp.maximum(hi, lo)] - day.seg_cum_submit[lo])
    cls_cnt = cnt.reshape(3, 2).sum(axis=1).astype(dt)
    nbf = jnp.maximum(nb, 1).astype(dt)
    log_n = math.log1p(spec.n) if params.log_n is None else params.log_n
    bey = jnp.concatenate(
        [
            jnp.atleast_1d(jnp.log1p(nb.astype(dt)) / log_n),
            jnp.atleast_1d(jnp.sum(cnt[1::2]).astype(dt) / nbf),
            cls_cnt / nbf,
            bins / nbf,
            # t − mean submit ≥ 0 [h]; the prefix-sum difference rounds to −4e-18 when every such job arrived at t
            jnp.atleast_1d(jnp.clip((t - sum_sub / nbf) / HOUR, 0.0, WAIT_CLIP)),
        ]
    )
    bey = jnp.where(nb > 0, bey, 0.0).astype(f32)
    # --- slots and stock
    busy = s.slot_job >= 0
    stock1 = _one_hot(s.stock, 3, dt)  # (T, 3)
    ef = expected_free(params, s, busy)
    slot_tab = jnp.concatenate(
        [
            _one_hot(params.slot_type, T, dt),
            busy[:, None].astype(dt),
            (busy & (s.slot_start > t))[:, None].astype(dt),
            jnp.where(busy, jnp.minimum(params.ttf_h, (ef - t) / HOUR), 0.0)[:, None],
            params.slot_price_rel[:, None],
            stock1[params.slot_type],
            jnp.zeros((C, 1), dt) if offered is None else offered[:, None].astype(dt),
        ],
        axis=1,
    ).astype(f32)
    slots = jnp.zeros((rows, T + 8), f32).at[:C].set(slot_tab)
    # --- globals
    hour = jnp.mod(params.start_hour + t / HOUR, 24.0)
    q = n_waiting(s)
    backlog = jnp.sum((s.end - s.ptr).reshape(3, 2).sum(axis=1) * params.e_k)
    glob = jnp.stack(
        [
            jnp.sin(2 * math.pi * hour / 24.0),
            jnp.cos(2 * math.pi * hour / 24.0),
            jnp.log1p(q.astype(dt)) / log_n,
            per_job(s.n_arrived, spec.n, params),  # a mixed env: the regime's count (data)
            per_job(s.n_completed, spec.n, params),
            n_idle(s) / C,
            params.rho_feat,
            jnp.minimum(WAIT_CLIP, backlog / (C * HOUR)),
        ]
    ).astype(f32)
    parts = [bey, glob, jobs.reshape(-1)]
    if model:
        band = band_of(params, t)
        gap = next_event_gap(spec, params, s, busy)
        m = jnp.stack(
            [
                params.delay_mean[s.stock],
                defer_cost(params, band, gap, spec.markov is not False),  # mixed: redraw_wait is 0 under fresh stock
                params.expected_delay[band],
                params.level_probs[band, :, 0],
                params.level_probs[band, :, 1],
                jnp.broadcast_to(gap, (T,)),
            ],
            axis=1,
        )
        scaled = jnp.minimum(jnp.log1p(m / 60.0) / math.log1p(MODEL_CLIP_MIN), 1.0)
        m = jnp.where(jnp.asarray([True, True, True, False, False, True]), scaled, m)
        parts.append(m.astype(f32).reshape(-1))
    offer_row = jnp.zeros(T + 8, f32) if offer is None else jnp.where(offer[1], slots[offer[0]], 0.0)
    parts += [offer_row, slots.reshape(-1), stock1.astype(f32).reshape(-1)]
    return jnp.concatenate(parts)


__all__ = [
    "action_mask",
    "defer_cost",
    "expected_free",
    "heads",
    "next_event_gap",
    "observe",
    "window",
]
