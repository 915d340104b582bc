"""Observation encoding of the CGRSP env (NumPy, O(queue) per step).

:class:`ObsEncoder` turns a paused :class:`~gpu_sched_env.cgrsp.sim.Simulator` into the
``Dict`` observation of :class:`~gpu_sched_env.cgrsp.env.CGRSPEnv` (the action scheme,
:mod:`gpu_sched_env.cgrsp.actions`, adds its mask); :class:`JobWindow` decides which waiting
jobs the window shows (and so which the actions address).
It reads only what a scheduler may know (never realised run times or provisioning delays).
Every entry is scaled to O(1) and clipped to the documented bounds of the space, so
``observation_space.contains(obs)`` always holds.

"""

from __future__ import annotations

import math
from typing import get_args

import numpy as np
from gymnasium import spaces

from gpu_sched_env.cgrsp.config import Features, Order, WindowBy
from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.stock import defer_cost, next_event_gap
from gpu_sched_env.cgrsp.view import SimView
from gpu_sched_env.core.errors import check_choice, check_number

ORDERS: tuple[str, ...] = get_args(Order)
# which waiting jobs fill the window: the first K in the canonical order, or the first of each
# complexity class (jobs of one class differ only in deadline and tightness, so the class
# heads are the whole job choice of a policy that keeps the order within a class)
WINDOW_BY: tuple[str, ...] = get_args(WindowBy)
FEATURES: tuple[str, ...] = get_args(Features)
HOUR = 3600.0  # [s] time unit of the observation
WAIT_CLIP = 24.0  # [h] waits (and the backlog per slot) are clipped here
CR_CLIP = 10.0  # critical ratios are clipped to [0, CR_CLIP] and divided by it
LAX_BINS = (0.0, 0.25, 1.0, 2.0, 4.0)  # [h] inner edges of the laxity histogram (6 bins)

JOB_COLS = ("present", "tight", "cx_low", "cx_medium", "cx_high", "critical_ratio", "wait_h")
BEYOND_COLS = (
    ("count", "tight_frac", "cx_low_frac", "cx_medium_frac", "cx_high_frac")
    + tuple(f"lax_bin{i}_frac" for i in range(len(LAX_BINS) + 1))
    + ("mean_wait_h",)
)
SLOT_COLS = (
    "busy",
    "provisioning",
    "time_to_free_h",
    "price_rel",
    "stock_high",
    "stock_medium",
    "stock_low",
    "offered",
)
# ``features="model"``: the public stock model's expectations per GPU type (what the deferring
# rules compute, :mod:`gpu_sched_env.cgrsp.stock`). Times on a log scale, log1p(minutes) /
# log1p(MODEL_CLIP_MIN), clipped to [0, 1]: seconds to hours stay distinguishable.
MODEL_COLS = ("delay_now", "defer_cost", "expected_delay", "p_high", "p_medium", "next_event")
MODEL_CLIP_MIN = 240.0
GLOBAL_COLS = (
    "tod_sin",
    "tod_cos",
    "queue",
    "arrived_frac",
    "completed_frac",
    "idle_frac",
    "offered_load",
    "backlog_h",
)


# Index of each block of the ``beyond`` vector, derived from BEYOND_COLS; ``_marg``'s columns
# (one row per bincount code) are the same fractions, then Σ e_j (the work they hold).
_B_COUNT, _B_WAIT = BEYOND_COLS.index("count"), BEYOND_COLS.index("mean_wait_h")
_B_FRACS = slice(BEYOND_COLS.index("tight_frac"), _B_WAIT)
_M_FRACS, _M_WORK = slice(0, _B_WAIT - _B_FRACS.start), _B_WAIT - _B_FRACS.start


class JobWindow:
    """Which waiting jobs the window shows, in canonical order (O(queue) per step).

    ``by="order"``: the first ``size`` waiting jobs in the canonical ``order``; ``"class"``:
    the first waiting job of each complexity class (at most ``size`` of them), in that order.
    The env tells it about dispatches (:meth:`remove`); arrivals it reads off the simulator.
    """

    def __init__(self, size: int, order: str = "deadline", by: str = "order") -> None:
        check_choice("order", order, ORDERS)
        check_choice("window_by", by, WINDOW_BY)
        self.K, self.order, self.by = int(size), order, by
        self._rank: np.ndarray | None = None

    def reset(self, sim: Simulator) -> None:
        """The day's canonical rank of every job (from the simulator's fleet); nothing waits yet."""
        wl, fl = sim.workload, sim.fleet
        d, sub, cx = wl.deadline, wl.submit, wl.complexity
        n = wl.n_jobs
        self._cx = cx
        if self.order == "submit":
            by_rank = np.arange(n)
        elif self.order == "spt":  # SPT's key: nominal W̄ (fleet.nominal_type), then deadline, submit
            nominal = np.array([fl.wbar[k][fl.nominal_type] for k in range(3)])
            by_rank = np.lexsort((sub, d, nominal[cx]))
        else:
            primary = d if self.order == "deadline" else d - np.asarray(fl.fastest_wbar)[cx]  # laxity: d − e_κ
            by_rank = np.lexsort((sub, primary))
        self._by_rank = by_rank  # job id at each rank of the canonical order
        self._rank = np.empty(n, np.int64)
        self._rank[by_rank] = np.arange(n)
        # waiting jobs as a boolean array over ranks; [lo, hi) covers every waiting rank
        self._inq = np.zeros(n, bool)
        self._lo, self._hi, self._seen = n, 0, 0

    def remove(self, job: int) -> None:
        """``job`` was dispatched (the env calls this after assign)."""
        self._inq[self._rank[job]] = False

    def __call__(self, sim: Simulator) -> tuple[np.ndarray, np.ndarray]:
        """(the window's jobs, the other waiting jobs), both in canonical order."""
        if sim.n_arrived > self._seen:  # arrivals since the last call
            r = self._rank[self._seen : sim.n_arrived]
            self._inq[r] = True
            self._lo, self._hi = min(self._lo, int(r.min())), max(self._hi, int(r.max()) + 1)
            self._seen = sim.n_arrived
        pos = self._inq[self._lo : self._hi].nonzero()[0]
        if pos.size != len(sim.waiting):  # someone assigned behind the window's back: rebuild
            self._inq[:] = False
            self._inq[self._rank[np.fromiter(sim.waiting, np.int64, len(sim.waiting))]] = True
            self._lo, self._hi = 0, self._inq.size
            pos = np.flatnonzero(self._inq)
        ids = self._by_rank[pos + self._lo]
        if pos.size:
            self._lo += int(pos[0])  # ranks below the first waiting one are done with
        if self.by == "class" and ids.size:
            heads = np.sort(np.unique(self._cx[ids], return_index=True)[1])[: self.K]
            rest = np.ones(ids.size, bool)
            rest[heads] = False
            return ids[heads], ids[rest]
        return ids[: self.K], ids[self.K :]


class ObsEncoder:
    """Builds the observation space and encodes simulator states for one parameter set.

    ``features="model"`` adds the ``model`` block (:data:`MODEL_COLS`, one row per GPU type).
    """

    def __init__(self, params: CGRSPParams, window: int, slot_rows: int | None = None, features: str = "basic") -> None:
        check_choice("features", features, FEATURES)
        self.params, self.K, self.features = params, int(window), features
        p = params
        self.C = p.c_max
        if slot_rows is not None:
            check_number("slot_rows", slot_rows, lo=p.c_max, integer=True)
        self.R = self.C if slot_rows is None else int(slot_rows)  # rows of the slot table (≥ C; extra rows stay 0)
        self.T = len(p.gpu_types)
        type_idx = {n: i for i, n in enumerate(p.type_names)}
        self.slot_type = np.array([type_idx[n] for n in p.resolved_slot_types()], np.int64)
        self.wbar = np.array([g.mean_runtime_s for g in p.gpu_types], float).T  # (3, T) [s]
        fleet = Fleet.from_params(p)  # e_κ, ρ and the nominal type are computed there, once
        self.e_k = np.asarray(fleet.fastest_wbar)  # (3,) fastest W̄ in the fleet [s]
        self.wbar_rel = self.wbar / self.wbar.max()
        price = np.array([g.price_per_h for g in p.gpu_types], float)
        self.slot_price_rel = price[self.slot_type] / max(price.max(), 1e-12)
        self.slot_onehot = np.eye(self.T)[self.slot_type]  # (C, T)
        self.lax_h = max(p.tight_window, p.loose_window) / HOUR  # laxity bound [h]
        delay_mean = max((lo + hi) / 2.0 for lo, hi in (p.delay_high, p.delay_medium, p.delay_low))
        self.ttf_h = (delay_mean + self.wbar.max()) / HOUR  # bound of time-until-free [h]
        self.rho = fleet.offered_load
        self.rho_feat = self.rho / (1.0 + self.rho)
        self.fleet = fleet
        self._model_times = [MODEL_COLS.index(c) for c in ("delay_now", "defer_cost", "expected_delay", "next_event")]
        self._log_clip = math.log1p(MODEL_CLIP_MIN)
        self._log_n = math.log1p(p.n_jobs)
        self._eye3 = np.eye(3)
        self._lax_bins = np.asarray(LAX_BINS)
        t = self.T
        self.job_lo = np.concatenate([np.zeros(len(JOB_COLS)), np.full(t, -self.lax_h), np.zeros(t)])
        self.job_hi = np.concatenate([np.ones(len(JOB_COLS) - 1), [WAIT_CLIP], np.full(t, self.lax_h), np.ones(t)])
        self.job_cols = (
            JOB_COLS + tuple(f"laxity_h[{n}]" for n in p.type_names) + tuple(f"wbar_rel[{n}]" for n in p.type_names)
        )
        self.slot_cols = tuple(f"type[{n}]" for n in p.type_names) + SLOT_COLS
        sc = {c: i for i, c in enumerate(self.slot_cols)}  # column indices, from the table
        self._busy, self._prov, self._ttf, self._offered = (
            sc["busy"],
            sc["provisioning"],
            sc["time_to_free_h"],
            sc["offered"],
        )
        self._stock_cols = slice(sc["stock_high"], sc["stock_low"] + 1)
        slot_hi = np.ones(len(self.slot_cols))
        slot_hi[self._ttf] = self.ttf_h
        self.slot_hi = slot_hi
        self.beyond_hi = np.ones(len(BEYOND_COLS))
        self.beyond_hi[BEYOND_COLS.index("mean_wait_h")] = WAIT_CLIP
        self.global_lo = np.zeros(len(GLOBAL_COLS))
        self.global_lo[[GLOBAL_COLS.index("tod_sin"), GLOBAL_COLS.index("tod_cos")]] = -1.0
        self.global_hi = np.ones(len(GLOBAL_COLS))
        self.global_hi[GLOBAL_COLS.index("backlog_h")] = WAIT_CLIP
        static = np.zeros((self.R, len(self.slot_cols)), np.float32)
        static[: self.C, :t] = self.slot_onehot
        static[: self.C, sc["price_rel"]] = self.slot_price_rel
        self._slot_static = static

    # ------------------------------------------------------------------ spaces
    def space(self, n_actions: int) -> spaces.Dict:
        """The observation space (bounds as documented in :class:`CGRSPEnv`) for ``n_actions`` actions."""
        f32 = np.float32
        k, c, t = self.K, self.R, self.T
        return spaces.Dict(
            {
                "jobs": spaces.Box(
                    np.tile(self.job_lo, (k, 1)).astype(f32), np.tile(self.job_hi, (k, 1)).astype(f32), dtype=f32
                ),
                "beyond": spaces.Box(np.zeros(len(BEYOND_COLS), f32), self.beyond_hi.astype(f32), dtype=f32),
                "slots": spaces.Box(
                    np.zeros((c, len(self.slot_cols)), f32), np.tile(self.slot_hi, (c, 1)).astype(f32), dtype=f32
                ),
                "stock": spaces.Box(0.0, 1.0, (t, 3), dtype=f32),
                "globals": spaces.Box(self.global_lo.astype(f32), self.global_hi.astype(f32), dtype=f32),
                "offer": spaces.Box(np.zeros(len(self.slot_cols), f32), self.slot_hi.astype(f32), dtype=f32),
                **(
                    {"model": spaces.Box(0.0, 1.0, (t, len(MODEL_COLS)), dtype=f32)} if self.features == "model" else {}
                ),
                "action_mask": spaces.MultiBinary(n_actions),
            }
        )

    # ------------------------------------------------------------------ episodes
    def reset(self, sim: Simulator) -> None:
        """Per-episode arrays: the time-affine job features.

        Every window column is ``a_j + t * b_j`` for the current time ``t`` (critical ratio,
        wait and laxity are affine in ``t``; the rest is constant), so a step costs one
        gather, one multiply-add and a clip, whatever the number of columns.
        """
        wl = sim.workload
        d, sub, cx, tight = wl.deadline, wl.submit, wl.complexity, wl.tight
        n, T = wl.n_jobs, self.T
        e = self.e_k[cx]
        self._e, self._sub, self._cx = e, sub, cx
        F = len(self.job_cols)
        ab = np.zeros((n, 2 * F))  # [a | b]
        col = {c: i for i, c in enumerate(JOB_COLS)}
        cr, wt, lax = col["critical_ratio"], col["wait_h"], len(JOB_COLS)  # laxity columns follow JOB_COLS
        ab[:, col["present"]] = 1.0
        ab[:, col["tight"]] = tight
        ab[:, col["cx_low"] : col["cx_high"] + 1] = self._eye3[cx]
        ab[:, cr], ab[:, F + cr] = d / (e * CR_CLIP), -1.0 / (e * CR_CLIP)
        ab[:, wt], ab[:, F + wt] = -sub / HOUR, 1.0 / HOUR
        ab[:, lax : lax + T] = (d[:, None] - self.wbar[cx]) / HOUR
        ab[:, F + lax : F + lax + T] = -1.0 / HOUR
        ab[:, lax + T : F] = self.wbar_rel[cx]
        self._ab = ab
        # jobs beyond the window: one bincount over codes (tight, complexity, laxity bin)
        self._x = d - e  # laxity d − t − e_j is x − t
        self._code = (tight.astype(np.int64) * 3 + cx) * 6
        self._edges = np.asarray(LAX_BINS) * HOUR
        self._xcs = np.column_stack([self._x, self._code, sub])  # one gather per step
        codes = np.arange(36)
        lax_bin, cx_c, tight_c = codes % 6, (codes // 6) % 3, codes // 18
        self._marg = np.column_stack(
            [tight_c, *(cx_c == k for k in range(3)), *(lax_bin == b for b in range(6)), self.e_k[cx_c]]
        ).astype(float)

    # ------------------------------------------------------------------ encoding
    def encode(
        self, sim: Simulator, win: np.ndarray, beyond: np.ndarray, offered: int | None = None, marked=()
    ) -> dict[str, np.ndarray]:
        """Observation dict (without ``action_mask``, which the action scheme adds).

        ``win``, ``beyond``: the window's jobs and the other waiting jobs (:class:`JobWindow`);
        ``offered``: the slot the action scheme offers now (its ``offered``; None: it offers none);
        ``marked``: more slots whose ``offered`` column is 1 (``joint_hold``: the idle slots not held).
        """
        t = sim.t
        k, nb = win.size, beyond.size
        C, F = self.C, len(self.job_cols)
        # --- window jobs: a + t·b, clipped to the documented bounds
        jobs = np.zeros((self.K, F), np.float32)
        if k:
            ab = self._ab[win]
            x = ab[:, F:]
            x *= t
            x += ab[:, :F]
            np.minimum(x, self.job_hi, out=x)
            np.maximum(x, self.job_lo, out=x)
            jobs[:k] = x
        # --- jobs beyond the window
        bey = np.zeros(len(BEYOND_COLS), np.float32)
        backlog = self._e[win].sum() if k else 0.0
        if nb:
            xcs = self._xcs[beyond]  # columns: x = d − e, code, submit
            code = (self._edges + t).searchsorted(xcs[:, 0], side="right") + xcs[:, 1].astype(np.int64)
            m = np.bincount(code, minlength=36) @ self._marg  # tight, cx (3), lax bins (6), Σe
            bey[_B_COUNT] = math.log1p(nb) / self._log_n
            bey[_B_FRACS] = m[_M_FRACS] / nb  # tight, complexity and laxity-bin fractions
            bey[_B_WAIT] = min(WAIT_CLIP, (t - xcs[:, 2].sum() / nb) / HOUR)
            backlog += m[_M_WORK]
        # --- slots and stock
        stock = self._eye3[sim.stock]
        slots = self._slot_static.copy()
        slots[: self.C, self._stock_cols] = stock[self.slot_type]
        slot_job = sim.slot_job
        for s in range(C):
            if slot_job[s] >= 0:
                slots[s, self._busy] = 1.0
                slots[s, self._prov] = 0.0 if sim.started(s) else 1.0
                slots[s, self._ttf] = min(self.ttf_h, (sim.expected_free(s) - t) / HOUR)
        offer = np.zeros(len(self.slot_cols), np.float32)
        slots[list(marked), self._offered] = 1.0
        if offered is not None:
            slots[offered, self._offered] = 1.0
            offer[:] = slots[offered]
        # --- globals
        hour = (self.params.start_hour_utc + t / HOUR) % 24.0
        n = sim.n_jobs
        glob = np.array(
            [
                math.sin(2 * math.pi * hour / 24.0),
                math.cos(2 * math.pi * hour / 24.0),
                math.log1p(k + nb) / self._log_n,
                sim.n_arrived / n,
                sim.n_completed / n,
                sim.n_idle / C,
                self.rho_feat,
                min(WAIT_CLIP, backlog / (C * HOUR)),
            ],
            np.float32,
        )
        obs = {
            "jobs": jobs,
            "beyond": bey,
            "slots": slots,
            "stock": stock.astype(np.float32),
            "globals": glob,
            "offer": offer,
        }
        if self.features == "model":
            obs["model"] = self.model_block(sim)
        return obs

    def model_block(self, sim: Simulator | SimView) -> np.ndarray:
        """The ``model`` block: per GPU type, the public stock model's expectations (:data:`MODEL_COLS`).

        The mean delay of the type's status now, the expected time until a slot of that type
        left idle now starts (waiting for a better status, :func:`~gpu_sched_env.cgrsp.stock.defer_cost`),
        the mean delay of a status not yet drawn, P(High) and P(Medium) in this time-of-day
        band, and the expected time to the next event. The deferring rules compare the first
        two; the learner is given them, not the comparison. Times are log1p(minutes) /
        log1p(:data:`MODEL_CLIP_MIN`), clipped to [0, 1]. It reads only what a policy's
        read-only :class:`~gpu_sched_env.cgrsp.view.SimView` offers (either may be given).
        """
        fl, t = self.fleet, sim.t
        band = fl.band(t)
        gap = next_event_gap(sim)
        out = np.empty((self.T, len(MODEL_COLS)), np.float32)
        dm = fl.delay_mean
        for g in range(self.T):
            probs = fl.level_probs(band, g)
            out[g] = (dm[sim.stock[g]], defer_cost(sim, g, gap), fl.expected_delay(band, g), probs[0], probs[1], gap)
        times = out[:, self._model_times]
        out[:, self._model_times] = np.minimum(np.log1p(times / 60.0) / self._log_clip, 1.0)
        return out


__all__ = [
    "BEYOND_COLS",
    "FEATURES",
    "GLOBAL_COLS",
    "JOB_COLS",
    "MODEL_CLIP_MIN",
    "MODEL_COLS",
    "ORDERS",
    "SLOT_COLS",
    "WINDOW_BY",
    "JobWindow",
    "ObsEncoder",
]
