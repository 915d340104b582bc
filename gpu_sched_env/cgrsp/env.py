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

from gpu_sched_env.cgrsp.obs import ORDERS, ObsEncoder
from gpu_sched_env.cgrsp.params import DAY_TYPES, make_params
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.trace import Trace
from gpu_sched_env.core.errors import (
    ConfigError,
    InvalidActionError,
    check_choice,
    check_keys,
    check_number,
)
from gpu_sched_env.core.rng import stream
from gpu_sched_env.core.spaces import MaskedDiscrete

REWARD_PARTS = ("wait", "miss", "cost")
DEFAULT_REWARD_SCALE = 1.0 / 3600.0  # reward unit: one job-hour of waiting
DEFAULT_COST_WEIGHT = 1.0  # per $: one dollar weighs like one second of waiting (tie-breaker)
RENDER_MODES = ("ansi", "rgb_array")
HEURISTIC_FALLBACKS = ("substitute", "wait")


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
    ``Discrete(K * C_max + 1)`` (:class:`MaskedDiscrete`: ``sample()`` draws legal actions).
    ``a = i * C_max + s`` (``i < K``) dispatches the job at window position ``i`` to slot
    ``s``; ``a = K * C_max`` is *wait*. Legal: ``i`` below the window's fill and slot ``s``
    idle; *wait* only while a future event exists, so an episode never stalls. The mask is
    :meth:`action_masks` (for sb3-contrib ``MaskablePPO``), ``info["action_mask"]`` and
    ``obs["action_mask"]``. An illegal action raises
    :class:`~gpu_sched_env.core.errors.InvalidActionError`; it is never replaced.

    ## Observation space
    ``Dict`` (float32 ``Box`` entries; T = number of GPU types in the table, 4 by default;
    hours [h] are 3600 s; the window holds the first K waiting jobs in the canonical
    ``order``; empty rows are all zero):

    | key | shape | columns (bounds) |
    |---|---|---|
    | ``jobs`` | (K, 7 + 2T) | present {0,1}; tight {0,1}; complexity one-hot (3); critical ratio (d − t)/e_j clipped to [0, 10] and divided by 10 (e_j = fastest W̄ in the fleet); wait so far [h] in [0, 24]; laxity per type d − t − W̄(κ, g) [h] in ±L (L = longest deadline window, 8 h); W̄(κ, g)/max W̄ in (0, 1] |
    | ``beyond`` | (12,) | jobs waiting beyond the window: count log1p(n)/log1p(N); tight fraction; complexity fractions (3); fractions in laxity bins (d − t − e_j) < 0, 0–¼, ¼–1, 1–2, 2–4, ≥ 4 h (6); mean wait [h] in [0, 24] |
    | ``slots`` | (C_max, T + 7) | GPU type one-hot (T); busy; provisioning (dispatched, not yet started); time until the expected free time [h] in [0, (max mean delay + max W̄)/3600] (idle 0; running: start + W̄; provisioning: dispatch + mean delay of its stock level + W̄); price/max price; stock one-hot of its type (3) |
    | ``stock`` | (T, 3) | stock status one-hot (High, Medium, Low) per GPU type |
    | ``globals`` | (8,) | sin, cos of the UTC hour; queue length log1p(q)/log1p(N); arrived fraction; completed fraction; idle-slot fraction; offered load ρ/(1 + ρ), ρ = λ·W̄_mean/C_max; backlog Σ_waiting e_j /(C_max·3600) [h per slot] in [0, 24] |
    | ``action_mask`` | (K·C_max + 1,) | MultiBinary: the legal actions |

    Clipping happens only at the documented bounds (waits and backlog beyond 24 h, laxity
    below −L, critical ratios outside [0, 10]). Realised run times and provisioning delays
    are never observed before they happen.

    ## Rewards
    ``reward = −reward_scale · Σ_k reward_weights[k] · raw_k`` over the parts

    * ``wait`` [s]: the queue-length integral over the time advanced in this step (every
      waiting job accrues its waiting seconds as time passes), plus, at a dispatch, the
      realised provisioning delay of that job. The episode sum is exactly Σ_j w_j.
    * ``miss`` [jobs]: credited when a job's deadline passes without it having completed
      (at the first step whose advance reaches the deadline; jobs still pending at the end
      of the day are settled at the last step). The episode sum is the number of misses.
    * ``cost`` [$]: the realised run cost (run time × price of the slot's type), credited
      at dispatch. The episode sum is the day's rental cost.

    Default weights are the model's objective: ``wait`` = α1 (``alpha1``, 1 per second),
    ``miss`` = α2 (``alpha2``, 10 per miss), ``cost`` = 1 per dollar (a tie-breaker: a
    hectic day costs about $6 against ~10^7 waiting seconds). ``reward_scale`` defaults to
    1/3600, so one unit of reward is one job-hour of waiting (a hectic-day step is O(1)).
    ``info["reward_parts"]`` holds each part's signed, weighted, scaled contribution (they
    sum to the reward), ``info["reward_raw"]`` the unweighted quantities.

    ## Starting state
    ``reset(seed=s)`` simulates the same day as ``simulate(policy, day, seed=s)`` (jobs,
    run times, stock and provisioning draws) and pauses at its first decision point (the first
    arrival). ``reset()`` without a seed draws the day's seed from ``np_random``.

    ## Episode end
    Terminated when every job has completed (``info["summary"]`` then holds the run's metrics
    and ``info["episode_raw"]`` the summed raw parts). Never truncated: each step dispatches a
    job (N in all) or processes at least one event (2N in all), so an episode takes at most 3N
    steps.

    ## Arguments
    * ``day``: ``quiet``, ``normal``, ``hectic`` (default) or ``surge``.
    * ``window`` (K, default 16): waiting jobs shown and addressable per step.
    * ``order``: canonical window order, ``deadline`` (default; ties by submit time),
      ``submit``, ``spt`` (nominal W̄ on the RTX 3090, then deadline, submit) or ``laxity``
      (d − e_j, then submit).
    * ``reward_weights``: mapping with keys ``wait``, ``miss``, ``cost`` (non-negative).
    * ``reward_scale`` (> 0, default 1/3600).
    * ``render_mode``: ``None``, ``"ansi"`` (text snapshot) or ``"rgb_array"`` (Gantt chart
      of the day so far).
    * ``trace``: a job log (path or DataFrame, :mod:`gpu_sched_env.cgrsp.trace`); an episode
      replays the whole trace (``n_jobs`` becomes its length) with the reset seed's run times.
    * any :class:`~gpu_sched_env.cgrsp.params.CGRSPParams` field as a keyword (``c_max``,
      ``n_jobs``, ``tight_fraction`` …); unknown keys raise ``ConfigError`` naming them.

    ## Version history
    * v0: initial version.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(
        self,
        day: str = "hectic",
        window: int = 16,
        order: str = "deadline",
        reward_weights: Mapping[str, float] | None = None,
        reward_scale: float = DEFAULT_REWARD_SCALE,
        render_mode: str | None = None,
        trace: Any = None,
        **params: Any,
    ) -> None:
        check_choice("day", day, DAY_TYPES)
        check_number("window", window, lo=1, integer=True)
        check_choice("order", order, ORDERS)
        check_number("reward_scale", reward_scale, lo=0.0, lo_open=True)
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        self.params = make_params(day, **params)
        self._trace = None if trace is None else Trace.load(trace, self.params)  # a job log: one episode = the whole trace
        if self._trace is not None:
            self.params = self._trace.params(self.params)
        weights = {"wait": float(self.params.alpha1), "miss": float(self.params.alpha2), "cost": DEFAULT_COST_WEIGHT}
        if reward_weights is not None:
            if not isinstance(reward_weights, Mapping):
                raise ConfigError(f"reward_weights = {reward_weights!r} must be a mapping with keys {', '.join(REWARD_PARTS)}")
            check_keys(reward_weights, REWARD_PARTS, section="reward_weights")
            for k, v in reward_weights.items():
                weights[k] = float(check_number(f"reward_weights.{k}", v, lo=0.0))
        self.day = day
        self.window = int(window)
        self.order = order
        self.reward_weights = weights
        self.reward_scale = float(reward_scale)
        self.render_mode = render_mode
        self._enc = ObsEncoder(self.params, self.window, order)
        self.observation_space = self._enc.space()
        self.action_space = MaskedDiscrete(self._enc.n_actions, self.action_masks)
        self.sim: Simulator | None = None
        self.run_seed: int | None = None  # the simulated day's seed, set by reset()
        self._done = True
        self._mask = np.zeros(self._enc.n_actions, bool)
        self._win = np.zeros(0, np.int64)
        self._heur: dict[str, Any] = {}
        self._plans: dict[str, tuple[int, list]] = {}

    @property
    def config(self) -> dict[str, Any]:
        """The env's own settings (the simulator's are in :attr:`params`)."""
        return {
            "day": self.day,
            "window": self.window,
            "order": self.order,
            "reward_weights": dict(self.reward_weights),
            "reward_scale": self.reward_scale,
        }

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a day; ``seed`` is the simulator's run seed (see *Starting state*)."""
        super().reset(seed=seed)
        if options:
            check_keys(options, (), section="reset options")
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
        self._raw = dict.fromkeys(REWARD_PARTS, 0.0)  # booked, not yet returned
        self._episode_raw = dict.fromkeys(REWARD_PARTS, 0.0)
        self._heur, self._plans = {}, {}
        self._done = False
        self._advance()  # to the first decision point (first arrival: no wait accrues)
        obs = self._observe()
        return obs, {"action_mask": self._mask.copy(), "t": sim.t, "seed": self.run_seed}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """Apply one assignment or *wait*; see the class docstring."""
        if self.sim is None or self._done:
            raise RuntimeError("the episode has ended (or never started): call reset() first")
        a = self._check_action(action)
        sim = self.sim
        if a == self._enc.wait_action:
            self._advance()
        else:
            i, s = divmod(a, self._enc.C)
            job = int(self._win[i])
            sim.assign(job, s)
            self._enc.remove(job)
            g = sim.fleet.slot_type[s]
            self._raw["wait"] += sim._start[job] - sim.t  # realised provisioning delay
            self._raw["cost"] += sim._rt[job][g] * self._price[g]  # realised run cost
            if not (sim.n_idle and sim.waiting):
                self._advance()
        obs = self._observe()
        raw, self._raw = self._raw, dict.fromkeys(REWARD_PARTS, 0.0)
        for k, v in raw.items():
            self._episode_raw[k] += v
        scale, w = self.reward_scale, self.reward_weights
        parts = {k: -scale * w[k] * v for k, v in raw.items()}
        reward = float(sum(parts.values()))
        info = {"action_mask": self._mask.copy(), "reward_parts": parts, "reward_raw": raw, "t": sim.t}
        if self._done:
            info["summary"] = self.result().summary()
            info["episode_raw"] = dict(self._episode_raw)
        return obs, reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal actions now (all False once the day is over)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of the day so far (``rgb_array``)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'")
            return None
        if self.sim is None:
            raise RuntimeError("call reset() before render()")
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
        """``(job id, slot)`` for an assignment action, ``None`` for *wait*."""
        a = self._check_action(action)
        if a == self._enc.wait_action:
            return None
        i, s = divmod(a, self._enc.C)
        return int(self._win[i]), s

    def encode(self, job: int, slot: int) -> int:
        """The action dispatching ``job`` to ``slot`` (InvalidActionError if not in the window)."""
        pos = np.flatnonzero(self._win == job)
        if pos.size == 0:
            raise InvalidActionError(f"job {job!r} is not in the window (first {self.window} waiting jobs in {self.order} order)")
        if not 0 <= slot < self._enc.C:
            raise InvalidActionError(f"slot {slot!r} is out of range 0..{self._enc.C - 1}")
        return int(pos[0]) * self._enc.C + int(slot)

    def heuristic_plan(self, name: str) -> list[tuple[int, int]]:
        """The named heuristic's remaining ``(job, slot)`` plan for the current decision point.

        The plan is ``policy.decide(sim)`` (``agents.heuristics.cgrsp``), computed once per
        decision point (``sim.n_decisions``); entries whose job has left the queue or whose
        slot is taken are dropped. The policy instance lives for the episode (reset with the
        run's ``cgrsp/policy`` stream, as in ``simulate``).
        """
        if self._done or self.sim is None:
            return []
        sim = self.sim
        pol = self._heur.get(name)
        if pol is None:
            from agents.heuristics.cgrsp import make_policy  # heuristics live outside the package

            pol = make_policy(name, self.params)
            pol.reset(sim, stream(self.run_seed, "cgrsp/policy"))
            self._heur[name] = pol
        nd, plan = self._plans.get(name, (-1, []))
        if nd != sim.n_decisions:
            plan = list(pol.decide(sim))
        waiting, slot_job = sim.waiting, sim.slot_job
        plan = [(j, s) for j, s in plan if j in waiting and slot_job[s] < 0]
        self._plans[name] = (sim.n_decisions, plan)
        return list(plan)

    def heuristic_action(self, name: str, fallback: str = "substitute") -> int:
        """The action the named heuristic takes now (see :meth:`heuristic_plan`).

        The plan is emitted one assignment per step, then *wait*: with a window at least as
        large as the queue this replays ``simulate(name, day, seed)`` exactly. With a
        smaller window the rule is:

        1. the first planned ``(job, slot)`` whose job is in the window;
        2. else, if planned assignments remain (their jobs are all beyond the window):
           ``fallback="substitute"`` (default) puts the window's first job on the first
           planned slot (the heuristic's slot choice and its decision to fill that slot now
           are kept); ``fallback="wait"`` skips to rule 3;
        3. else *wait* when legal, else the lowest legal action.

        Calling it twice without stepping returns the same action. After the episode
        ends it returns *wait*.
        """
        check_choice("fallback", fallback, HEURISTIC_FALLBACKS)
        C = self._enc.C
        plan = self.heuristic_plan(name)
        for j, s in plan:
            pos = np.flatnonzero(self._win == j)
            if pos.size:
                return int(pos[0]) * C + int(s)
        if plan and fallback == "substitute":
            return int(plan[0][1])  # window position 0 on the first planned slot
        if self._done or self._mask[-1]:
            return self._enc.wait_action
        return int(np.flatnonzero(self._mask)[0])

    def _check_action(self, action: Any) -> int:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            a = int(action)
        else:
            arr = np.asarray(action)
            if arr.size != 1 or arr.dtype.kind not in "iu":
                raise InvalidActionError(f"action {action!r} must be one integer in [0, {self._enc.n_actions - 1}]")
            a = int(arr.reshape(()))
        n = self._enc.n_actions
        if 0 <= a < n and self._mask[a]:
            return a
        legal = np.flatnonzero(self._mask)
        if not 0 <= a < n:
            why = f"out of range 0..{n - 1}"
        elif a == self._enc.wait_action:
            why = "wait is illegal: nothing is left to happen, so waiting would stall the day"
        else:
            i, s = divmod(a, self._enc.C)
            if i >= self._win.size:
                why = f"window position {i} is empty (the window holds {self._win.size} jobs)"
            else:
                why = f"slot {s} is busy with job {self.sim.slot_job[s]}"
        raise InvalidActionError(
            f"action {a} (= window position × {self._enc.C} + slot, wait = {self._enc.wait_action}) is illegal: {why}; "
            f"legal actions: {legal.tolist()}"
        )

    def _advance(self) -> None:
        """Advance the simulator to the next decision point and book the wait and miss parts."""
        sim = self.sim
        t0, q0, n0 = sim.t, len(sim.waiting), sim.n_arrived
        alive = sim.advance()
        t1, n1 = sim.t, sim.n_arrived
        cs = self._cum_submit
        # queue-length integral: old queue for the whole interval, arrivals from their submit
        self._raw["wait"] += q0 * (t1 - t0) + (n1 - n0) * t1 - float(cs[n1] - cs[n0])
        if t1 >= self._next_deadline or not alive:  # some deadlines passed: settle them
            dls = self._dl_sorted
            k = int(np.searchsorted(dls, t1, side="right")) if alive else len(dls)
            comp, dl = sim.completion, sim.deadline
            self._raw["miss"] += sum(1 for j in self._dl_order[self._dl_ptr : k].tolist() if comp[j] > dl[j])
            self._dl_ptr = k
            self._next_deadline = float(dls[k]) if k < len(dls) else float("inf")
        self._done = not alive

    def _observe(self) -> dict[str, np.ndarray]:
        obs, self._win, self._mask = self._enc.encode(self.sim)
        return obs

    def __getstate__(self) -> dict[str, Any]:
        # Heuristic policy instances hold closures (not picklable); they are rebuilt on the
        # next heuristic_action() call, which replays exactly except for "random".
        state = self.__dict__.copy()
        state["_heur"], state["_plans"] = {}, {}
        return state


__all__ = ["HEURISTIC_FALLBACKS", "REWARD_PARTS", "CGRSPEnv", "MaskedDiscrete"]
