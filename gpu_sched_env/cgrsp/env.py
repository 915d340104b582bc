"""Gymnasium adapter over the CGRSP simulator (:mod:`gpu_sched_env.cgrsp.sim`).

The env owns no scheduling logic and little else: it pauses
:class:`~gpu_sched_env.cgrsp.sim.Simulator` at decision points and coordinates four
strategies, each with one home: the settings (:class:`~gpu_sched_env.cgrsp.config.CGRSPEnvConfig`),
the action scheme (:mod:`gpu_sched_env.cgrsp.actions`: space layout, mask, decoding, its
state), the observation (:mod:`gpu_sched_env.cgrsp.obs`) and the reward ledger
(:class:`~gpu_sched_env.cgrsp.rewards.RewardLedger`). Renderings live in
:mod:`gpu_sched_env.cgrsp.render`.
"""

from __future__ import annotations

from typing import Any, get_args

import gymnasium as gym
import numpy as np

from gpu_sched_env.cgrsp.config import DEFAULT_REWARD_SCALE, REWARD_PARTS, CGRSPEnvConfig, Hold
from gpu_sched_env.cgrsp.obs import JobWindow, ObsEncoder
from gpu_sched_env.cgrsp.result import SimResult
from gpu_sched_env.cgrsp.rewards import RewardLedger, weights_of
from gpu_sched_env.cgrsp.schemes import ACTION_SCHEMES
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.cgrsp.trace import Trace
from gpu_sched_env.core.errors import (
    ActionGate,
    ConfigError,
    InvalidActionError,
    ResetNeededError,
    check_action,
    check_options,
    check_seed,
)
from gpu_sched_env.core.render import RENDER_MODES, check_render_mode, render_ready
from gpu_sched_env.core.spaces import MaskedDiscrete

# How long a slot left idle in ``slot`` mode stays out of the offers (the ``hold`` setting).
HOLDS: tuple[str, ...] = get_args(Hold)


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

    ``action_mode="joint_hold"``: ``Discrete(K * C_max + T + 1)``: the joint actions, then
    ``a = K * C_max + g`` *holds GPU type g* (its idle slots are masked until its stock status
    changes or a waiting job's laxity forces a dispatch; :mod:`gpu_sched_env.cgrsp.held`), then
    *wait*. Needs ``window_by="class"`` and ``window`` ≤ 3.

    ``action_mode="when"``: ``Discrete(2)``: ``a = 0`` dispatches the next pair of the
    strongest rule's base order (``spt_rescue_defer_exp`` with its deferral off, on the state
    as it is), ``a = 1`` waits; the agent learns *when*, the rule says *which*
    (:mod:`gpu_sched_env.cgrsp.when`; the pair's slot is marked ``offered``).

    In every mode the last action is the no-op. The space is a :class:`MaskedDiscrete`
    (``sample()`` draws legal actions); the mask is :meth:`action_masks` (sb3-contrib
    ``MaskablePPO``), ``info["action_mask"]`` and ``obs["action_mask"]``.

    Every action of the space is a valid input (``illegal_action="substitute"``, the default):
    an action the mask forbids is played as *wait* (the no-op) where the mask allows it, else
    as the lowest legal action (window position 0 on the lowest idle slot, not held in
    ``joint_hold``; ``slot``: position 0 on the offered slot; ``when``: dispatch). This is the
    rule of the JAX twin (``gpu_sched_env.cgrsp.jax.legal.legalise``), so both engines play an
    illegal action alike. Every step's ``info["invalid_action"]`` says whether the action was
    replaced and ``info["n_invalid"]`` counts the episode's replaced actions so far (the final
    step's is the episode's). ``illegal_action="raise"``: an illegal action raises
    :class:`~gpu_sched_env.core.errors.InvalidActionError` and changes nothing. In both modes
    an action that is not an element of the space (out of range, a float, string, bool or
    batch) raises ``InvalidActionError``.

    ## Observation space
    ``Dict`` (float32 ``Box`` entries; T = number of GPU types in the table, 4 by default;
    hours [h] are 3600 s; the window holds the first K waiting jobs in the canonical
    ``order``; empty rows are all zero):

    * ``jobs`` (K, 7 + 2T): present {0,1}; tight {0,1}; complexity one-hot (3); critical ratio (d − t)/e_j clipped to
      [0, 10] and divided by 10 (e_j = fastest W̄ in the fleet); wait so far [h] in [0, 24]; laxity per type d − t −
      W̄(κ, g) [h] in ±L (L = longest deadline window, 8 h); W̄(κ, g)/max W̄ in (0, 1]
    * ``beyond`` (12,): jobs waiting beyond the window: count log1p(n)/log1p(N); tight fraction; complexity fractions
      (3); fractions in laxity bins (d − t − e_j) < 0, 0–¼, ¼–1, 1–2, 2–4, ≥ 4 h (6); mean wait [h] in [0, 24]
    * ``slots`` (slot_rows, T + 8): GPU type one-hot (T); busy; provisioning (dispatched, not yet started); time until
      the expected free time [h] in [0, (max mean delay + max W̄)/3600] (idle 0; running: start + W̄; provisioning:
      dispatch + mean delay of its stock level + W̄); price/max price; stock one-hot of its type (3); offered {0,1}
      (``slot`` mode: the offered slot; ``joint_hold``: every idle slot not held)
    * ``offer`` (T + 8,): ``slot`` mode: the offered slot's row of ``slots`` (zeros in ``joint`` mode)
    * ``stock`` (T, 3): stock status one-hot (High, Medium, Low) per GPU type
    * ``globals`` (8,): sin, cos of the UTC hour; queue length log1p(q)/log1p(N); arrived fraction; completed fraction;
      idle-slot fraction; offered load ρ/(1 + ρ), ρ = λ·W̄_mean/C_max; backlog Σ_waiting e_j /(C_max·3600) [h per slot]
      in [0, 24]
    * ``model`` (T, 6): ``features="model"`` only: per GPU type, the public stock model's expectations, times as
      log1p(minutes)/log1p(240) in [0, 1]: mean delay of its status now; expected time until a slot of that type left
      idle now starts, waiting for a better status (what the deferring rules compare with the first); mean delay of a
      status not yet drawn; P(High), P(Medium) in this time-of-day band; expected time to the next event (busy slots'
      expected free times, arrivals)
    * ``action_mask`` (n actions,): MultiBinary: the legal actions

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
    is the operator's price of a miss). ``shaping`` adds the potential-based term ``reward_scale · (γ·Φ(s′) − Φ(s))``
    (γ = ``shaping_gamma``, Φ = 0 at the end of the day; :mod:`gpu_sched_env.cgrsp.rewards`): it
    leaves the optimal policy unchanged but charges a dispatch that commits a slot for an
    hour (Low stock) in its own step. ``reward_scale`` defaults to 1/3600 (one unit = one
    job-hour of waiting). ``info["reward_parts"]`` holds each part's signed, weighted,
    scaled contribution (they sum to the reward; ``shaping`` included when on),
    ``info["reward_raw"]`` the unweighted quantities and ``info["dt"]`` the simulated
    seconds the step advanced (for semi-MDP discounting).

    ## Starting state
    ``reset(seed=s)`` simulates the same day as ``simulate(policy, day, seed=s)`` (jobs,
    run times, stock and provisioning draws) and pauses at its first decision point (the first
    arrival). ``reset()`` without a seed draws the day's seed from ``np_random``.

    ## Episode end
    Terminated when every job has completed (``info["summary"]`` then holds the run's metrics,
    ``info["episode_raw"]`` the summed raw parts and ``info["n_invalid"]`` the replaced
    actions). The final observation's mask (``obs["action_mask"]``, ``info["action_mask"]``,
    :meth:`action_masks`) marks *wait* alone as legal, so vector envs and maskable samplers
    always find an action (``step()`` then raises ``ResetNeededError``); with
    ``illegal_action="raise"`` it is all False. Never truncated: each step dispatches a
    job (N in all), processes at least one event (2N in all) or, in ``slot`` mode, leaves one
    of at most C_max idle slots idle before an event, so an episode is finite.

    ## Arguments
    ``CGRSPEnv(config=None, *, render_mode=None, trace=None, **kwargs)``: ``config`` is a
    :class:`~gpu_sched_env.cgrsp.config.CGRSPEnvConfig` (every setting below, its default and
    its checks live there, once); keywords build one (``gym.make("CGRSP-v0", window=1)``), or
    change the given one, and any keyword that is not an env setting is a simulator parameter.

    * ``day``: ``quiet``, ``normal``, ``hectic`` (default) or ``surge``.
    * ``window`` (K, default 16): waiting jobs shown and addressable per step.
    * ``order``: canonical window order, ``deadline`` (default; ties by submit time),
      ``submit``, ``spt`` (nominal W̄ on the RTX 3090, then deadline, submit) or ``laxity``
      (d − e_j, then submit).
    * ``window_by``: ``order`` (default: the first K waiting jobs in that order) or ``class``
      (the first waiting job of each complexity class, at most K, in that order: jobs of one
      class differ only in deadline and tightness, so with ``order=deadline`` the window is
      the earliest-deadline job per class and the action picks a class, or the no-op).
    * ``action_mode``: ``joint`` (default), ``slot`` or ``joint_hold`` (see *Action space*).
    * ``hold`` (``slot`` mode): ``event`` (default: a slot left idle is offered again at the
      next decision point) or ``stock`` (only once its type's stock status differs from the
      one it was left under; let go when nothing else can happen, so a day never stalls).
    * ``reward``: ``study`` (default), ``deadline``, ``capacity`` or ``occupancy`` (see *Rewards*).
    * ``reward_weights``: mapping overriding some of the parts (``wait``, ``miss``, ``cost``,
      ``waste``, ``run``, ``delay``; non-negative).
    * ``shaping``: ``none`` (default), ``queue``, ``backlog`` (the day's undispatched jobs'
      run time) or ``backlog_risk`` (plus the waiting jobs' deadline risk, weighted like a
      miss); see :mod:`gpu_sched_env.cgrsp.rewards`.
    * ``shaping_gamma`` (in [0, 1], default 1): γ of the shaping term γ·Φ(s′) − Φ(s); set it
      to the learner's discount so that shaping leaves the optimal policy unchanged.
    * ``reward_scale`` (> 0, default 1/3600).
    * ``slot_rows`` (≥ ``c_max``, default ``c_max``): rows of the ``slots`` table; the rows
      beyond ``c_max`` stay zero, so in ``slot`` mode (whose action space does not depend on
      ``c_max``) one policy can be played on fleets of any size up to ``slot_rows``.
    * ``features``: ``basic`` (default) or ``model`` (adds the ``model`` key).
    * ``illegal_action``: ``substitute`` (default) or ``raise`` (see *Action space*).
    * ``render_mode``: ``None``, ``"ansi"`` (text snapshot), ``"rgb_array"`` (Gantt chart
      of the day so far) or ``"human"`` (the text snapshot printed to stdout at every reset
      and step; ``render()`` prints it too and returns None).
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
      gives the same episodes). 2026-11-25: one config object (``CGRSPEnvConfig``),
      ``shaping_gamma`` (γ·Φ′ − Φ; the default 1 gives the earlier Φ′ − Φ). 2026-11-26:
      ``features="model"`` (the ``model`` key; the default gives the earlier observations).
      2026-11-28: ``action_mode="joint_hold"`` (held deferrals; opt-in, the defaults unchanged);
      ``action_mode="when"`` (learned timing on the rule's order; opt-in). Since
      ``illegal_action``: an action the mask forbids is substituted by default (*wait*, else the
      lowest legal action; ``info["invalid_action"]``, ``info["n_invalid"]``) and the final
      mask marks *wait*; ``illegal_action="raise"`` gives the earlier strict behaviour. Legal
      actions play exactly as before.
    """

    # "human": the text snapshot printed at every reset and step (no window, so no pygame;
    # gymnasium would otherwise wrap rgb_array in its pygame HumanRendering)
    metadata = {"render_modes": [*RENDER_MODES, "human"], "render_fps": 4}

    def __init__(
        self, config: CGRSPEnvConfig | None = None, *, render_mode: str | None = None, trace: Any = None, **kwargs: Any
    ) -> None:
        if config is not None and not isinstance(config, CGRSPEnvConfig):
            raise ConfigError(f"config = {config!r} must be a CGRSPEnvConfig (or give the settings as keywords)")
        self.cfg = config.replace(**kwargs) if config is not None else CGRSPEnvConfig.from_kwargs(**kwargs)
        check_render_mode(render_mode, tuple(self.metadata["render_modes"]))
        cfg = self.cfg
        self.params = cfg.sim_params()
        self._trace = (
            None if trace is None else Trace.load(trace, self.params)
        )  # a job log: one episode = the whole trace
        if self._trace is not None:
            self.params = self._trace.params(self.params)
        self.render_mode = render_mode
        # the reward's weights and what an episode is judged on (rewards.weights_of, one place)
        self.reward_weights, self.objective_weights = weights_of(cfg, self.params)
        self.actions = ACTION_SCHEMES[cfg.action_mode].build(cfg.window, self.params, cfg.hold)
        self.jobs = JobWindow(cfg.window, cfg.order, cfg.window_by)
        self._enc = ObsEncoder(self.params, cfg.window, cfg.slot_rows, cfg.features)
        self.observation_space = self._enc.space(self.actions.n_actions)
        self.action_space = MaskedDiscrete(self.actions.n_actions, self.action_masks)
        # illegal actions: substitute *wait* (the last action) where legal, else the lowest legal one
        self._gate = ActionGate(cfg.illegal_action, self.actions.n_actions, noop=self.actions.wait_action)
        self.sim: Simulator | None = None
        self.ledger: RewardLedger | None = None
        self.run_seed: int | None = None  # the simulated day's seed, set by reset()
        self.done = True
        self._mask = np.zeros(self.actions.n_actions, bool)
        self._win = np.zeros(0, np.int64)

    # ------------------------------------------------------------------ settings (read-only views of cfg)
    day = property(lambda self: self.cfg.day, doc="Day type.")
    window = property(lambda self: self.cfg.window, doc="K, the window's size.")
    order = property(lambda self: self.cfg.order, doc="Canonical window order.")
    window_by = property(lambda self: self.cfg.window_by, doc="How the window is filled.")
    action_mode = property(lambda self: self.cfg.action_mode, doc="``joint`` or ``slot``.")
    hold = property(lambda self: self.cfg.hold, doc="How long a slot left idle stays out of the offers.")
    reward = property(lambda self: self.cfg.reward, doc="Reward preset.")
    shaping = property(lambda self: self.cfg.shaping, doc="Shaping potential.")
    reward_scale = property(lambda self: self.cfg.reward_scale, doc="Reward units per weighted raw unit.")
    slot_rows = property(lambda self: self._enc.R, doc="Rows of the ``slots`` table.")

    @property
    def config(self) -> CGRSPEnvConfig:
        """The env's settings (:class:`CGRSPEnvConfig`; the simulator's are in :attr:`params`)."""
        return self.cfg

    @property
    def wait_action(self) -> int:
        """The no-op: *wait* (``joint``) or *leave the offered slot idle* (``slot``)."""
        return self.actions.wait_action

    @property
    def window_jobs(self) -> np.ndarray:
        """Job ids at the window positions now (canonical order)."""
        return self._win.copy()

    @property
    def offered_slot(self) -> int | None:
        """The slot the action scheme offers now (``slot``; ``when``: the next pair's; else None, and after the end)."""
        return self.actions.offered

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Start a day; ``seed`` is the simulator's run seed (see *Starting state*)."""
        check_options(options)  # before anything changes: a bad option leaves the env as it was
        seed = check_seed(seed)  # NumPy integers too
        super().reset(seed=seed)
        self.run_seed = int(seed) if seed is not None else int(self.np_random.integers(2**31 - 1))
        self.action_space.seed(int(self.np_random.integers(2**31 - 1)))
        sim = self.sim = Simulator(
            self.params,
            self.run_seed,
            None if self._trace is None else self._trace.workload(self.params, self.run_seed),
        )
        self.jobs.reset(sim)
        self._enc.reset(sim)
        self.ledger = RewardLedger(self.cfg, sim)
        self.done = False
        self._gate.reset()
        self.actions.reset(sim)
        self.advance()  # to the first decision point (first arrival: no wait accrues)
        self._settle()
        self.ledger.start(sim)
        obs = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, {"action_mask": self._mask.copy(), "t": sim.t, "seed": self.run_seed}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """Apply one assignment or the no-op; see the class docstring."""
        if self.sim is None or self.done:
            raise ResetNeededError("the episode has ended (or never started): call reset() first")
        a, invalid = self._gate.take(action, self._mask, self._why_illegal)
        t0 = self.sim.t
        pair = self.actions.choose(self.sim, self._win, a)
        if pair is not None:
            self.dispatch(*pair)
        self._settle()
        obs = self._observe()
        reward, info = self.ledger.settle(self.sim, self.done)
        info.update(action_mask=self._mask.copy(), t=self.sim.t, dt=self.sim.t - t0, **self._gate.info(invalid))
        if self.done:
            info["summary"] = self.result().summary()
            info["episode_raw"] = dict(self.ledger.episode_raw)
        if self.render_mode == "human":
            self.render()
        return obs, reward, self.done, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the legal actions now (once the day is over: *wait* only, or all False with ``raise``)."""
        return self._mask.copy()

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of the day so far (``rgb_array``)."""
        if not render_ready(self.render_mode, self.sim is not None):
            return None
        from gpu_sched_env.cgrsp import render as _render  # matplotlib only when rendering

        if self.render_mode in ("ansi", "human"):
            text = _render.ansi(self.sim, self._win, self.order)
            if self.render_mode == "human":
                print(text, flush=True)
                return None
            return text
        title = (
            f"CGRSP {self.day} day, seed {self.run_seed}: t = {self.sim.t / 3600:.2f} h, "
            f"{self.sim.n_completed}/{self.sim.n_jobs} jobs done"
        )
        return _render.rgb_array(self.sim, title)

    # ------------------------------------------------------------------ helpers
    def result(self, policy: str = "env") -> SimResult:
        """The simulator's per-job records and metrics (complete once terminated)."""
        if self.sim is None:
            raise RuntimeError("call reset() first")
        return self.sim.result(policy=policy, day=self.day)

    def decode(self, action: int) -> tuple[int, int] | None:
        """``(job id, slot)`` for a legal assignment action, ``None`` for the no-op (an illegal action raises)."""
        a = check_action(action, self.actions.n_actions, self._mask, self._why_illegal)
        if a == self.wait_action:
            return None
        return self.actions.pair(self._win, a)

    def encode(self, job: int, slot: int) -> int:
        """The action dispatching ``job`` to ``slot`` (InvalidActionError if not expressible now)."""
        pos = np.flatnonzero(self._win == job)
        if pos.size == 0:
            raise InvalidActionError(
                f"job {job!r} is not in the window (first {self.window} waiting jobs in {self.order} order)"
            )
        if not 0 <= slot < self.actions.C:
            raise InvalidActionError(f"slot {slot!r} is out of range 0..{self.actions.C - 1}")
        return self.actions.encode(int(pos[0]), int(slot))

    # ------------------------------------------------------------------ transitions
    def _settle(self) -> None:
        """Advance until the action scheme is ready for the agent (or the day is over)."""
        while not self.done and not self.actions.ready(self.sim):
            self.advance()

    def dispatch(self, job: int, slot: int) -> None:
        """Assign ``job`` to the idle ``slot`` now and book its reward parts."""
        self.sim.assign(job, slot)
        self.jobs.remove(job)
        self.ledger.on_dispatch(self.sim, job, slot)

    def advance(self) -> None:
        """Advance the simulator to the next decision point (or the end) and book the reward parts."""
        sim = self.sim
        t0, q0, n0, idle0 = sim.t, len(sim.waiting), sim.n_arrived, sim.n_idle
        alive = sim.advance()
        self.ledger.on_advance(sim, t0, q0, n0, idle0, alive)
        self.done = not alive
        self.actions.on_advance(sim, alive)

    # ------------------------------------------------------------------ actions and observations
    def _why_illegal(self, a: int) -> str:
        return self.actions.why_illegal(self.sim, self._win, a)

    def _observe(self) -> dict[str, np.ndarray]:
        self._win, beyond = self.jobs(self.sim)
        live = not self.done
        offered, marked = (self.actions.offered, self.actions.marked(self.sim)) if live else (None, ())
        obs = self._enc.encode(self.sim, self._win, beyond, offered, marked)
        self._mask = self.actions.mask(self.sim, self._win.size) if not self.done else self._gate.end_mask()
        obs["action_mask"] = self._mask.view(np.int8).copy()
        return obs


__all__ = ["DEFAULT_REWARD_SCALE", "HOLDS", "REWARD_PARTS", "CGRSPEnv", "CGRSPEnvConfig", "MaskedDiscrete"]
