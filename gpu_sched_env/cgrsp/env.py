"""Gymnasium adapter over the CGRSP simulator (:mod:`gpu_sched_env.cgrsp.sim`).

The env owns no scheduling logic: it pauses :class:`~gpu_sched_env.cgrsp.sim.Simulator`
at decision points, lets the agent make one assignment (or wait) per step, and books the
reward parts. Observation encoding lives in :mod:`gpu_sched_env.cgrsp.obs`, renderings in
:mod:`gpu_sched_env.cgrsp.render`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from gpu_sched_env.cgrsp.obs import ACTION_MODES, ORDERS, WINDOW_BY, ObsEncoder
from gpu_sched_env.cgrsp.params import DAY_TYPES, make_params
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.rewards import OBJECTIVE_OF, REWARD_PARTS, SHAPINGS, make_potential
from gpu_sched_env.cgrsp.rewards import reward_weights as reward_weights_for
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.trace import Trace
from gpu_sched_env.core.errors import (
    ConfigError,
    InvalidActionError,
    ResetNeededError,
    check_action,
    check_choice,
    check_number,
    check_options,
)
from gpu_sched_env.core.render import RENDER_MODES, check_render_mode, render_ready
from gpu_sched_env.core.spaces import MaskedDiscrete

DEFAULT_REWARD_SCALE = 1.0 / 3600.0  # reward unit: one job-hour of waiting
# How long a slot left idle in ``slot`` mode stays out of the offers: until the next decision
# point, or until its type's stock status differs from the one it was left under.
HOLDS = ("event", "stock")


class CGRSPEnv(gym.Env):
    """Schedule a day of cloud GPU rendering jobs on ``C_max`` rented slots (spec ``cgrsp.md``).

    ## Description
    Rendering jobs (low/medium/high complexity, 20 % with a tight 1 h deadline, the rest 8 h)
    arrive as a Poisson stream. Each of ``C_max`` slots has a fixed GPU type and holds one job
    at a time; dispatching a job costs a provisioning delay drawn from its type's current stock
    status (High/Medium/Low, redrawn at every decision point), then the job runs for a
    log-normal time with mean W̄(complexity, type). The env pauses the simulator at every
    *decision point* (at least one idle slot and at least one waiting job). The agent assigns
    one waiting job to one idle slot per step; while another assignment is possible the env
    stays at the same instant (same stock draw). *Wait* advances to the next event (an
    arrival or a completion). When an assignment leaves no idle slot or no waiting job, the
    env advances on its own to the next decision point.

    ## Action space
    ``action_mode="joint"`` (default): ``Discrete(K * C_max + 1)``; ``a = i * C_max + s``
    (``i < K``) dispatches the job at window position ``i`` to slot ``s``; ``a = K * C_max``
    is *wait*. Legal: ``i`` below the window's fill and slot ``s`` idle; *wait* only while a
    future event exists, so an episode never stalls.

    ``action_mode="slot"``: ``Discrete(K + 1)``; the env offers the idle slots of a decision
    point one at a time (lowest index first, ``offered_slot``, ``obs["offer"]``);
    ``a = i`` dispatches window position ``i`` to the offered slot, ``a = K`` leaves it idle
    until the next decision point. When no idle slot is left to offer (or no job waits) the
    env advances to the next decision point. Leaving the last offered slot idle is legal only
    while a future event exists.

    In both modes the last action is the no-op. The space is a :class:`MaskedDiscrete`
    (``sample()`` draws legal actions); the mask is :meth:`action_masks` (sb3-contrib
    ``MaskablePPO``), ``info["action_mask"]`` and ``obs["action_mask"]``. An illegal action
    raises :class:`~gpu_sched_env.core.errors.InvalidActionError`; it is never replaced.

    ## Observation space
    ``Dict`` (float32 ``Box`` entries; T = number of GPU types in the table, 4 by default;
    hours [h] are 3600 s; the window holds the first K waiting jobs in the canonical
    ``order``; empty rows are all zero):

    | key | shape | columns (bounds) |
    |---|---|---|
    | ``jobs`` | (K, 7 + 2T) | present {0,1}; tight {0,1}; complexity one-hot (3); critical ratio (d − t)/e_j clipped to [0, 10] and divided by 10 (e_j = fastest W̄ in the fleet); wait so far [h] in [0, 24]; laxity per type d − t − W̄(κ, g) [h] in ±L (L = longest deadline window, 8 h); W̄(κ, g)/max W̄ in (0, 1] |
    | ``beyond`` | (12,) | jobs waiting beyond the window: count log1p(n)/log1p(N); tight fraction; complexity fractions (3); fractions in laxity bins (d − t − e_j) < 0, 0–¼, ¼–1, 1–2, 2–4, ≥ 4 h (6); mean wait [h] in [0, 24] |
    | ``slots`` | (slot_rows, T + 8) | GPU type one-hot (T); busy; provisioning (dispatched, not yet started); time until the expected free time [h] in [0, (max mean delay + max W̄)/3600] (idle 0; running: start + W̄; provisioning: dispatch + mean delay of its stock level + W̄); price/max price; stock one-hot of its type (3); offered {0,1} (``slot`` mode) |
    | ``offer`` | (T + 8,) | ``slot`` mode: the offered slot's row of ``slots`` (zeros in ``joint`` mode) |
    | ``stock`` | (T, 3) | stock status one-hot (High, Medium, Low) per GPU type |
    | ``globals`` | (8,) | sin, cos of the UTC hour; queue length log1p(q)/log1p(N); arrived fraction; completed fraction; idle-slot fraction; offered load ρ/(1 + ρ), ρ = λ·W̄_mean/C_max; backlog Σ_waiting e_j /(C_max·3600) [h per slot] in [0, 24] |
    | ``action_mask`` | (n actions,) | MultiBinary: the legal actions |

    Clipping happens only at the documented bounds (waits and backlog beyond 24 h, laxity
    below −L, critical ratios outside [0, 10]). Realised run times and provisioning delays
    are never observed before they happen.

    ## Rewards
    ``reward = −reward_scale · Σ_k w_k · raw_k`` (+ the shaping term) over the parts

    * ``wait`` [s]: the queue-length integral over the time advanced in this step (every
      waiting job accrues its waiting seconds as time passes), plus, at a dispatch, the
      realised provisioning delay of that job. The episode sum is exactly Σ_j w_j.
    * ``miss`` [jobs]: credited when a job's deadline passes without it having completed
      (at the first step whose advance reaches the deadline; jobs still pending at the end
      of the day are settled at the last step). The episode sum is the number of misses.
    * ``cost`` [$]: the realised run cost (run time × price of the slot's type), credited
      at dispatch. The episode sum is the day's rental cost.
    * ``waste`` [job-s]: slot capacity lost, at the queue's exchange rate q/C job-seconds per
      slot-second: a dispatch's realised provisioning delay (q = the queue before it), and
      idle slots while jobs wait, as the time passes.
    * ``run`` [job-s]: a dispatch's realised run time at the same rate (with ``waste``, every
      slot-second is charged to the decision that filled it or left it idle).
    * ``delay`` [s]: a dispatch's realised provisioning delay (the part of ``wait`` booked at
      dispatch, on its own).

    The weights w come from the ``reward`` preset applied to the simulator's parameters
    (:mod:`gpu_sched_env.cgrsp.rewards`, one source of truth): ``study`` (default) is the
    model's objective, ``wait`` = α1 (``alpha1``), ``miss`` = α2 (``alpha2``); ``deadline``
    weighs a miss like one job-hour of waiting (``miss`` = 3600·α1); the learning proxies
    ``capacity`` (``waste`` + misses) and ``occupancy`` (``waste`` + ``run`` + misses, the
    queue integral charged to decisions) are judged on ``deadline``. ``cost`` = 1 per dollar
    in all (a tie-breaker). ``reward_weights`` overrides single parts (an override of
    ``miss`` also prices a miss in ``objective_weights``, what an episode is judged on: it
    is the operator's price of a miss). ``shaping="queue"`` adds the potential-based term ``reward_scale · w_wait · (Φ(s') − Φ(s))``, Φ the negative
    fluid estimate of the queue's remaining wait; it sums to zero over an episode, so the
    return still equals the objective, but a dispatch that commits a slot for an hour (Low
    stock) is charged in its own step. ``reward_scale`` defaults to 1/3600 (one unit = one
    job-hour of waiting). ``info["reward_parts"]`` holds each part's signed, weighted,
    scaled contribution (they sum to the reward; ``shaping`` included when on),
    ``info["reward_raw"]`` the unweighted quantities and ``info["dt"]`` the simulated
    seconds the step advanced (for semi-MDP discounting).

    ## Starting state
    ``reset(seed=s)`` simulates the same day as ``simulate(policy, day, seed=s)`` (jobs,
    run times, stock and provisioning draws) and pauses at its first decision point (the first
    arrival). ``reset()`` without a seed draws the day's seed from ``np_random``.

    ## Episode end
    Terminated when every job has completed (``info["summary"]`` then holds the run's metrics
    and ``info["episode_raw"]`` the summed raw parts). Never truncated: each step dispatches a
    job (N in all), processes at least one event (2N in all) or, in ``slot`` mode, leaves one
    of at most C_max idle slots idle before an event, so an episode is finite.

    ## Arguments
    * ``day``: ``quiet``, ``normal``, ``hectic`` (default) or ``surge``.
    * ``window`` (K, default 16): waiting jobs shown and addressable per step.
    * ``order``: canonical window order, ``deadline`` (default; ties by submit time),
      ``submit``, ``spt`` (nominal W̄ on the RTX 3090, then deadline, submit) or ``laxity``
      (d − e_j, then submit).
    * ``window_by``: ``order`` (default: the first K waiting jobs in that order) or ``class``
      (the first waiting job of each complexity class, at most K, in that order: jobs of one
      class differ only in deadline and tightness, so with ``order=deadline`` the window is
      the earliest-deadline job per class and the action picks a class, or the no-op).
    * ``action_mode``: ``joint`` (default) or ``slot`` (see *Action space*).
    * ``hold`` (``slot`` mode): ``event`` (default: a slot left idle is offered again at the
      next decision point) or ``stock`` (only once its type's stock status differs from the
      one it was left under; let go when nothing else can happen, so a day never stalls).
    * ``reward``: ``study`` (default), ``deadline``, ``capacity`` or ``occupancy`` (see *Rewards*).
    * ``reward_weights``: mapping overriding some of the parts (``wait``, ``miss``, ``cost``,
      ``waste``, ``run``, ``delay``; non-negative).
    * ``shaping``: ``none`` (default), ``queue``, ``backlog`` (the day's undispatched jobs'
      run time) or ``backlog_risk`` (plus the waiting jobs' deadline risk, weighted like a
      miss); see :mod:`gpu_sched_env.cgrsp.rewards`.
    * ``reward_scale`` (> 0, default 1/3600).
    * ``slot_rows`` (≥ ``c_max``, default ``c_max``): rows of the ``slots`` table; the rows
      beyond ``c_max`` stay zero, so in ``slot`` mode (whose action space does not depend on
      ``c_max``) one policy can be played on fleets of any size up to ``slot_rows``.
    * ``render_mode``: ``None``, ``"ansi"`` (text snapshot) or ``"rgb_array"`` (Gantt chart
      of the day so far).
    * ``trace``: a job log (path or DataFrame, :mod:`gpu_sched_env.cgrsp.trace`); an episode
      replays the whole trace (``n_jobs`` becomes its length) with the reset seed's run times.
    * any :class:`~gpu_sched_env.cgrsp.params.CGRSPParams` field as a keyword (``c_max``,
      ``n_jobs``, ``tight_fraction`` …); unknown keys raise ``ConfigError`` naming them.

    ## Version history
    * v0: initial version. Since 2026-11: ``action_mode``, ``reward`` presets (weights derived
      from ``alpha1``/``alpha2`` only), ``shaping``, ``info["dt"]``, the ``offer`` key and the
      ``offered`` slot column; heuristics are driven by ``HeuristicAgent``, not the env; one
      provisioning quantile per job (delays independent of assignment order). 2026-11-24:
      ``window_by``, ``hold``, the ``occupancy`` preset with the ``run`` and ``delay`` parts,
      ``backlog`` and ``backlog_risk`` shaping (defaults unchanged: every earlier setting
      gives the same episodes).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(
        self,
        day: str = "hectic",
        window: int = 16,
        order: str = "deadline",
        window_by: str = "order",
        action_mode: str = "joint",
        hold: str = "event",
        reward: str = "study",
        reward_weights: Mapping[str, float] | None = None,
        shaping: str = "none",
        reward_scale: float = DEFAULT_REWARD_SCALE,
        slot_rows: int | None = None,
        render_mode: str | None = None,
        trace: Any = None,
        **params: Any,
    ) -> None:
        check_choice("day", day, DAY_TYPES)
        check_number("window", window, lo=1, integer=True)
        check_choice("order", order, ORDERS)
        check_choice("window_by", window_by, WINDOW_BY)
        check_choice("action_mode", action_mode, ACTION_MODES)
        check_choice("hold", hold, HOLDS)
        if hold != "event" and action_mode != "slot":
            raise ConfigError(f"hold = {hold!r} needs action_mode = 'slot' (got {action_mode!r}): a slot is held when the agent leaves it idle; allowed with joint: 'event'")
        check_choice("shaping", shaping, SHAPINGS)
        check_number("reward_scale", reward_scale, lo=0.0, lo_open=True)
        check_render_mode(render_mode)
        self.params = make_params(day, **params)
        self._trace = None if trace is None else Trace.load(trace, self.params)  # a job log: one episode = the whole trace
        if self._trace is not None:
            self.params = self._trace.params(self.params)
        self.day = day
        self.window = int(window)
        self.order = order
        self.window_by = window_by
        self.action_mode = action_mode
        self.hold = hold
        self.reward = reward
        self.reward_weights = reward_weights_for(self.params, reward, reward_weights)
        # what an episode is judged on; an explicit price of a miss holds for both
        miss = {"miss": self.reward_weights["miss"]} if reward_weights and "miss" in reward_weights else None
        self.objective_weights = reward_weights_for(self.params, OBJECTIVE_OF[reward], miss)
        self.shaping = shaping
        self.reward_scale = float(reward_scale)
        self.render_mode = render_mode
        self._enc = ObsEncoder(self.params, self.window, order, action_mode, slot_rows, window_by)
        self.slot_rows = self._enc.R
        self.observation_space = self._enc.space()
        self.action_space = MaskedDiscrete(self._enc.n_actions, self.action_masks)
        self.sim: Simulator | None = None
        self.run_seed: int | None = None  # the simulated day's seed, set by reset()
        self._done = True
        self._mask = np.zeros(self._enc.n_actions, bool)
        self._win = np.zeros(0, np.int64)
        self._offered: int | None = None
        self._declined: set[int] = set()
        self._held: dict[int, int] = {}  # hold="stock": slot -> the stock level it was left idle under

    @property
    def config(self) -> dict[str, Any]:
        """The env's own settings (the simulator's are in :attr:`params`)."""
        return {
            "day": self.day,
            "window": self.window,
            "order": self.order,
            "window_by": self.window_by,
            "action_mode": self.action_mode,
            "hold": self.hold,
            "reward": self.reward,
            "reward_weights": dict(self.reward_weights),
            "shaping": self.shaping,
            "reward_scale": self.reward_scale,
            "slot_rows": self.slot_rows,
        }

    @property
    def wait_action(self) -> int:
        """The no-op: *wait* (``joint``) or *leave the offered slot idle* (``slot``)."""
        return self._enc.wait_action

    @property
    def window_jobs(self) -> np.ndarray:
        """Job ids at the window positions now (canonical order)."""
        return self._win.copy()

    @property
    def offered_slot(self) -> int | None:
        """The slot offered now in ``slot`` mode (None in ``joint`` mode or after the end)."""
        return self._offered

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a day; ``seed`` is the simulator's run seed (see *Starting state*)."""
        check_options(options)  # before anything changes: a bad option leaves the env as it was
        super().reset(seed=seed)
        self.run_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31 - 1))
        self.action_space.seed(int(self.np_random.integers(2**31 - 1)))
        sim = self.sim = Simulator(self.params, self.run_seed, None if self._trace is None else self._trace.workload(self.params, self.run_seed))
        self._enc.reset(sim)
        wl = sim.workload
        self._cum_submit = np.concatenate([[0.0], np.cumsum(wl.submit)])
        self._dl_order = np.argsort(wl.deadline, kind="stable")
        self._dl_sorted = wl.deadline[self._dl_order]
        self._dl_ptr = 0
        self._next_deadline = float(self._dl_sorted[0])  # [s] earliest deadline not yet settled
        self._price = sim.fleet.price_per_s
        self._potential = make_potential(self.shaping, sim, self.reward, self.reward_weights)
        self._raw = dict.fromkeys(REWARD_PARTS, 0.0)  # booked, not yet returned
        self._episode_raw = dict.fromkeys(REWARD_PARTS, 0.0)
        self._done = False
        self._held = {}
        self._advance()  # to the first decision point (first arrival: no wait accrues)
        if self.action_mode == "slot":
            self._offer_next()  # the first idle slot (nothing is declined or held yet)
        self._phi = self._phi_now()
        obs = self._observe()
        return obs, {"action_mask": self._mask.copy(), "t": sim.t, "seed": self.run_seed}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """Apply one assignment or the no-op; see the class docstring."""
        if self.sim is None or self._done:
            raise ResetNeededError("the episode has ended (or never started): call reset() first")
        a = self._check_action(action)
        t0 = self.sim.t
        if self.action_mode == "joint":
            self._step_joint(a)
        else:
            self._step_slot(a)
        obs = self._observe()
        reward, info = self._reward()
        info.update(action_mask=self._mask.copy(), t=self.sim.t, dt=self.sim.t - t0)
        if self._done:
            info["summary"] = self.result().summary()
            info["episode_raw"] = dict(self._episode_raw)
        return obs, reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal actions now (all False once the day is over)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of the day so far (``rgb_array``)."""
        if not render_ready(self.render_mode, self.sim is not None):
            return None
        from gpu_sched_env.cgrsp import render as _render  # matplotlib only when rendering

        if self.render_mode == "ansi":
            return _render.ansi(self.sim, self._win, self.order)
        title = f"CGRSP {self.day} day, seed {self.run_seed}: t = {self.sim.t / 3600:.2f} h, {self.sim.n_completed}/{self.sim.n_jobs} jobs done"
        return _render.rgb_array(self.sim, title)

    # ------------------------------------------------------------------ helpers
    def result(self, policy: str = "env") -> SimResult:
        """The simulator's per-job records and metrics (complete once terminated)."""
        if self.sim is None:
            raise RuntimeError("call reset() first")
        return self.sim.result(policy=policy, day=self.day)

    def decode(self, action: int) -> tuple[int, int] | None:
        """``(job id, slot)`` for an assignment action, ``None`` for the no-op."""
        a = self._check_action(action)
        if a == self.wait_action:
            return None
        return self._pair(a)

    def encode(self, job: int, slot: int) -> int:
        """The action dispatching ``job`` to ``slot`` (InvalidActionError if not expressible now)."""
        pos = np.flatnonzero(self._win == job)
        if pos.size == 0:
            raise InvalidActionError(f"job {job!r} is not in the window (first {self.window} waiting jobs in {self.order} order)")
        if not 0 <= slot < self._enc.C:
            raise InvalidActionError(f"slot {slot!r} is out of range 0..{self._enc.C - 1}")
        if self.action_mode == "slot":
            if slot != self._offered:
                raise InvalidActionError(f"slot {slot} is not the offered slot ({self._offered}); in slot mode an action only fills the offered slot")
            return int(pos[0])
        return int(pos[0]) * self._enc.C + int(slot)

    def _pair(self, a: int) -> tuple[int, int]:
        if self.action_mode == "slot":
            return int(self._win[a]), int(self._offered)  # type: ignore[arg-type]
        i, s = divmod(a, self._enc.C)
        return int(self._win[i]), s

    # ------------------------------------------------------------------ transitions
    def _step_joint(self, a: int) -> None:
        if a == self.wait_action:
            self._advance()
            return
        self._dispatch(*self._pair(a))
        if not (self.sim.n_idle and self.sim.waiting):
            self._advance()

    def _step_slot(self, a: int) -> None:
        if a == self.wait_action:
            self._declined.add(self._offered)  # type: ignore[arg-type]
            if self.hold == "stock":
                self._held[self._offered] = self._level(self._offered)  # type: ignore[arg-type]
        else:
            self._dispatch(*self._pair(a))
        self._offer_next()

    def _offer_next(self) -> None:
        """Offer the next idle slot neither declined nor held; advance when none is left.

        Held slots are let go when nothing else can happen (no arrival or completion is
        left), so that the day never stalls.
        """
        sim = self.sim
        while not self._done:
            nxt = next(self._offerable(), None) if sim.waiting else None
            if nxt is not None:
                self._offered = nxt
                return
            if self._held and sim.waiting and not sim.has_future_event():
                self._held.clear()
                self._declined = set()
                continue
            self._advance()
        self._offered = None

    def _offerable(self) -> Any:
        """Idle slots that may be offered now (not declined at this instant, not held)."""
        sj, declined, held = self.sim.slot_job, self._declined, self._held
        return (s for s in range(self._enc.C) if sj[s] < 0 and s not in declined and s not in held)

    def _level(self, slot: int) -> int:
        return self.sim.stock[self.sim.fleet.slot_type[slot]]

    def _dispatch(self, job: int, slot: int) -> None:
        sim = self.sim
        sim.assign(job, slot)
        self._enc.remove(job)
        start, run = sim.realised(job)
        self._raw["wait"] += start - sim.t  # realised provisioning delay
        self._raw["delay"] += start - sim.t  # the same, on its own (the job's wait while provisioning)
        # capacity lost to provisioning, at the queue's exchange rate q/C [job-s per slot-s]
        rate = (len(sim.waiting) + 1) / self._enc.C  # the queue before this dispatch, per slot
        self._raw["waste"] += (start - sim.t) * rate
        self._raw["run"] += run * rate  # the slot time it spends running, at the same rate
        self._raw["cost"] += run * self._price[sim.fleet.slot_type[slot]]  # realised run cost

    def _advance(self) -> None:
        """Advance the simulator to the next decision point and book the wait and miss parts."""
        sim = self.sim
        t0, q0, n0, idle0 = sim.t, len(sim.waiting), sim.n_arrived, sim.n_idle
        alive = sim.advance()
        t1, n1 = sim.t, sim.n_arrived
        cs = self._cum_submit
        # queue-length integral: old queue for the whole interval, arrivals from their submit
        self._raw["wait"] += q0 * (t1 - t0) + (n1 - n0) * t1 - float(cs[n1] - cs[n0])
        if q0:  # idle slots while jobs waited: lost capacity, at the exchange rate q/C
            self._raw["waste"] += idle0 * (t1 - t0) * q0 / self._enc.C
        if t1 >= self._next_deadline or not alive:  # some deadlines passed: settle them
            dls = self._dl_sorted
            k = int(np.searchsorted(dls, t1, side="right")) if alive else len(dls)
            comp, dl = sim.completion, sim.deadline
            self._raw["miss"] += sum(1 for j in self._dl_order[self._dl_ptr : k].tolist() if comp[j] > dl[j])
            self._dl_ptr = k
            self._next_deadline = float(dls[k]) if k < len(dls) else float("inf")
        self._done = not alive
        self._declined = set()
        if self._held:  # a new decision point: let go of the slots whose stock status changed
            self._held = {s: lv for s, lv in self._held.items() if alive and self._level(s) == lv}

    # ------------------------------------------------------------------ reward (one place)
    def _phi_now(self) -> float:
        return 0.0 if self._potential is None or self._done else self._potential(self.sim)

    def _reward(self) -> tuple[float, dict[str, Any]]:
        """The step's reward from the parts booked since the last step, and its info entries."""
        raw, self._raw = self._raw, dict.fromkeys(REWARD_PARTS, 0.0)
        for k, v in raw.items():
            self._episode_raw[k] += v
        scale, w = self.reward_scale, self.reward_weights
        parts = {k: -scale * w[k] * v for k, v in raw.items()}
        if self._potential is not None:
            phi = self._phi_now()
            parts["shaping"] = scale * (phi - self._phi)
            self._phi = phi
        return float(sum(parts.values())), {"reward_parts": parts, "reward_raw": raw}

    # ------------------------------------------------------------------ actions and observations
    def _check_action(self, action: Any) -> int:
        return check_action(action, self._enc.n_actions, self._mask, self._why_illegal)

    def _why_illegal(self, a: int) -> str:
        """Why the in-range action ``a`` is illegal now (for the error message)."""
        layout = f"window position × {self._enc.C} + slot" if self.action_mode == "joint" else f"window position on offered slot {self._offered}"
        if a == self.wait_action:
            noop = "wait" if self.action_mode == "joint" else "leaving the offered slot idle"
            why = f"{noop} is illegal: nothing is left to happen, so it would stall the day"
        elif self.action_mode == "slot":
            why = f"window position {a} is empty (the window holds {self._win.size} jobs)"
        else:
            i, s = divmod(a, self._enc.C)
            if i >= self._win.size:
                why = f"window position {i} is empty (the window holds {self._win.size} jobs)"
            else:
                why = f"slot {s} is busy with job {self.sim.slot_job[s]}"
        return f"{why} (action = {layout}, no-op = {self.wait_action})"

    def _observe(self) -> dict[str, np.ndarray]:
        if self.action_mode == "slot" and not self._done:
            sim = self.sim
            others = sum(1 for _ in self._offerable()) > 1
            obs, self._win, self._mask = self._enc.encode(sim, self._offered, others or sim.has_future_event())
        else:
            obs, self._win, self._mask = self._enc.encode(self.sim)
        return obs


__all__ = ["ACTION_MODES", "REWARD_PARTS", "CGRSPEnv", "MaskedDiscrete"]
