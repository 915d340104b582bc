"""LLM inference simulators: the discrete-time reference (dt = 0.01 s) and an event-driven variant.

Both follow the spec's loop: complete finished requests (free their GPUs), admit arrivals
to the queue, then while some queued request fits on the free GPUs let the policy pick one
and start it now. A request needs ``tau`` GPUs at once, each with memory >= m / tau; a busy
GPU runs one request (GPUs are not shared). Its run time is ``tokens / throughput`` of its
phase on the slowest allocated GPU.

*Discrete* (reference): time advances in steps of ``dt``; a request arriving at ``a`` joins
the queue at step ``ceil(a / dt)``; one started at step ``k`` completes at ``k dt + p`` and
frees its GPUs at step ``k + max(1, ceil(p / dt))`` (the first step at or after its end).
*Event*: exact continuous times (arrival and completion events on
:class:`gpu_sched_env.core.events.EventQueue`). When arrivals and run times lie on the
``dt`` grid (both presets) the two give the same schedule; otherwise each start in the
discrete engine waits for the next step boundary (less than one step per start).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_sched_env.core.errors import check_choice, check_number
from gpu_sched_env.core.events import EventQueue
from gpu_sched_env.llm.model import LLMCluster, Workload

ENGINES = ("discrete", "event")
_EPS = 1e-9


@dataclass(frozen=True)
class LLMSetup:
    """What a policy is handed at ``reset(setup, rng)``: the run's fixed world (never the simulator)."""

    cluster: LLMCluster
    n_requests: int
    dt: float  # [s] step of the discrete engine
    engine: str


@dataclass(frozen=True)
class LLMDecision:
    """What a policy sees: the time, the startable requests and the queue (arrived, not started).

    The per-request arrays are indexed by request and read-only; a request that has not
    arrived yet shows NaN (``tp``: 0), so future arrivals cannot be read.
    """

    time: float  # [s]
    candidates: np.ndarray  # request indices that fit on the free GPUs now
    queue: np.ndarray  # every queued request index (arrival order)
    arrival: np.ndarray  # [s] per request
    weight: np.ndarray
    p_est: np.ndarray  # [s] estimated run time per request (fastest fitting GPU type)
    tp: np.ndarray  # GPUs needed per request
    free_gpus: int


def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class LLMSim:
    """Step-wise simulator: ``advance()`` to a decision, ``start(i)``, repeat until done."""

    def __init__(self, workload: Workload, dt: float = 0.01, engine: str = "discrete") -> None:
        check_number("dt", dt, lo=0, lo_open=True)
        check_choice("engine", engine, ENGINES)
        self.workload, self.dt, self.engine = workload, float(dt), engine
        r, cl = workload.requests, workload.cluster
        self.n, self.m = r.n, cl.m
        self.ok_gpu = (r.memory / r.tp)[:, None] <= cl.memory[None, :] + _EPS  # [n, m]
        self.skipped = self.ok_gpu.sum(axis=1) < r.tp
        self.tps = np.stack([cl.tps(0), cl.tps(1)])  # [phase, m]
        best = np.where(self.ok_gpu, self.tps[r.phase], 0.0).max(axis=1)
        self.p_est = np.where(best > 0, r.tokens / np.where(best > 0, best, 1.0), np.inf)
        self.free = np.ones(self.m, bool)
        self.start_t = np.full(self.n, np.nan)
        self.end_t = np.full(self.n, np.nan)
        self.gpus: list[tuple[int, ...]] = [()] * self.n
        # what decisions show per request: filled as requests arrive (NaN / 0 before), read-only views
        self._pub = (
            np.full(self.n, np.nan),
            np.full(self.n, np.nan),
            np.full(self.n, np.nan),
            np.zeros(self.n, r.tp.dtype),
        )
        self._pub_ro = tuple(_read_only(a) for a in self._pub)
        self._arr_order = [int(i) for i in np.lexsort((np.arange(self.n), r.arrival)) if not self.skipped[i]]
        self._next_arr = 0
        self.queue: list[int] = []
        self._running = EventQueue()  # completion events: payload = request index
        self._left = len(self._arr_order)
        self.time = 0.0
        self._k = 0  # discrete step index
        if engine == "discrete":
            self._arr_step = [math.ceil(a / self.dt - _EPS) for a in r.arrival]
        self._process()

    # -- time advance --------------------------------------------------------------------
    def _process(self) -> None:
        """Complete finished requests, then admit arrivals, at the current time."""
        # event times within _EPS count as simultaneous (float noise of a + p sums)
        now = self._k if self.engine == "discrete" else self.time + _EPS
        while self._running and self._running.peek_time() <= now:
            _, _, i = self._running.pop()
            self.free[list(self.gpus[i])] = True
            self._left -= 1
        r = self.workload.requests
        a = r.arrival
        pa, pw, pp, pt = self._pub
        while self._next_arr < len(self._arr_order):
            i = self._arr_order[self._next_arr]
            due = self._arr_step[i] if self.engine == "discrete" else a[i]
            if due > now:
                break
            self.queue.append(i)
            pa[i], pw[i], pp[i], pt[i] = a[i], r.weight[i], self.p_est[i], r.tp[i]
            self._next_arr += 1

    def candidates(self) -> np.ndarray:
        """Queued requests whose tau GPUs (with enough memory) are free now."""
        if not self.queue:
            return np.empty(0, int)
        q = np.array(self.queue)
        fits = (self.ok_gpu[q] & self.free[None, :]).sum(axis=1) >= self.workload.requests.tp[q]
        return q[fits]

    def advance(self) -> bool:
        """Run until a decision is needed (True) or every request is done (False)."""
        while True:
            if self.queue and len(self.candidates()):
                return True
            if self._left == 0:
                return False
            if self.engine == "discrete":
                self._k += 1
                self.time = self._k * self.dt
            else:
                nxt = self._running.peek_time()
                if self._next_arr < len(self._arr_order):
                    nxt = min(nxt, self.workload.requests.arrival[self._arr_order[self._next_arr]])
                self.time = float(nxt)
            self._process()

    def setup(self) -> LLMSetup:
        """The run's fixed world as a policy sees it at ``reset`` (read-only)."""
        return LLMSetup(self.workload.cluster, self.n, self.dt, self.engine)

    def decision(self) -> LLMDecision:
        """The decision state for the policy (read-only; arrived requests only)."""
        return LLMDecision(
            self.time,
            _read_only(self.candidates()),
            _read_only(np.array(self.queue, int)),
            *self._pub_ro,
            int(self.free.sum()),
        )

    def start(self, i: int) -> None:
        """Start request ``i`` now on its tau fastest free GPUs (ties: lowest index)."""
        r = self.workload.requests
        if i not in self.queue:
            raise ValueError(f"request {i} is not queued")
        ok = np.flatnonzero(self.ok_gpu[i] & self.free)
        if len(ok) < r.tp[i]:
            raise ValueError(f"request {i} needs {r.tp[i]} free GPUs with enough memory; {len(ok)} available")
        tps = self.tps[r.phase[i]]
        chosen = ok[np.lexsort((ok, -tps[ok]))][: r.tp[i]]
        p = r.tokens[i] / tps[chosen].min()  # [s]
        self.queue.remove(i)
        self.free[chosen] = False
        self.gpus[i] = tuple(int(j) for j in chosen)
        self.start_t[i] = self.time
        if self.engine == "discrete":
            # the request ends at start + p; its GPUs are freed at the first step at or after that
            end_k = self._k + max(1, math.ceil(p / self.dt - _EPS))
            self.end_t[i] = self.time + p
            self._running.push(end_k, 0, i)
        else:
            self.end_t[i] = self.time + p
            self._running.push(self.end_t[i], 0, i)

    @property
    def done(self) -> bool:
        """True when every feasible request has completed."""
        return self._left == 0

    def weighted_in_system(self, t: float) -> float:
        """Phi(t) = sum over arrived requests of w * (min(c, t) - a) [s] (c = inf if not done)."""
        r = self.workload.requests
        c = np.where(np.isnan(self.end_t), np.inf, self.end_t)
        on = (r.arrival <= t) & ~self.skipped
        return float(np.sum(r.weight[on] * (np.minimum(c[on], t) - r.arrival[on])))

    def summary(self, horizon: float = math.inf) -> dict[str, float]:
        """weighted_wait, avg_wait, makespan, completed (by ``horizon``) and more."""
        r = self.workload.requests
        ok = ~np.isnan(self.end_t)
        c, a = self.end_t[ok], r.arrival[ok]
        flow = c - a
        busy = float(np.sum((self.end_t[ok] - self.start_t[ok]) * r.tp[ok]))
        mk = float(c.max()) if ok.any() else float("nan")
        span = mk - float(r.arrival[~self.skipped].min()) if ok.any() else float("nan")
        return {
            "weighted_wait": float(np.sum(r.weight[ok] * flow)),
            "avg_wait": float(flow.mean()) if ok.any() else float("nan"),
            "avg_queue_wait": float(np.mean(self.start_t[ok] - a)) if ok.any() else float("nan"),
            "makespan": mk,
            "completed": int(np.sum(c <= horizon + _EPS)),
            "completion_rate_pct": 100.0 * float(np.sum(c <= horizon + _EPS)) / self.n,
            "skipped": int(self.skipped.sum()),
            "gpu_util_pct": 100.0 * busy / (self.m * span) if span and span > 0 else float("nan"),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per request with its GPUs, start and end."""
        df = self.workload.requests.to_frame()
        df["gpus"] = [",".join(map(str, g)) for g in self.gpus]
        df["start"], df["end"] = self.start_t, self.end_t
        df["skipped"] = self.skipped
        return df
