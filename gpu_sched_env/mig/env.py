"""Gymnasium adapter over :class:`gpu_sched_env.mig.sim.PlacementSim` (no logic of its own)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gpu_sched_env.core.envconfig import build_config, short
from gpu_sched_env.core.errors import (
    ActionGate,
    ConfigError,
    ResetNeededError,
    check_options,
    check_seed,
)
from gpu_sched_env.core.render import RENDER_MODES, check_render_mode, gantt_rgb, render_ready
from gpu_sched_env.core.spaces import MaskedDiscrete
from gpu_sched_env.mig.config import MIGEnvConfig
from gpu_sched_env.mig.generator import generate
from gpu_sched_env.mig.sim import PlacementSim, PlacementState
from gpu_sched_env.mig.workload import to_mig_jobs

OBS_HIGH = 1e6  # bound of every observation entry (times [min], memory [MB], counts)


class MIGEnv(gym.Env):
    """Place arriving jobs on the MIG instances of one GPU.

    ## Description
    One GPU is split into MIG instances (default 2000/1000/1000 MB). Jobs with a per-minute
    peak-memory series arrive over time; the scheduler polls every ``poll_interval`` minutes
    and takes all new jobs. At each step the agent decides for one taken job: put it on an
    instance (it is appended to that instance's plan and runs its whole series there,
    contiguously, from ``max(poll time, instance free time)``) or defer it to the next poll.
    Each data set is a fresh draw of the spec's Part B generator config (50 jobs, Poisson
    20/min, run length U{1..10} min, memory U(1, 1990) then N(prev, 0.1·prev) capped at 1990).

    ## Action Space
    ``Discrete(m + 1)`` (its ``sample()`` draws legal actions only): ``i < m`` = instance ``i``; ``m`` = defer. Legal
    actions are in ``info["action_mask"]`` and :meth:`action_masks`: instances whose memory holds the job's
    peak, and defer while more jobs are still to come. Defer is the layout's no-op, so under
    ``illegal_action="substitute"`` (the default) an action the mask forbids is played as
    defer where it is legal, else as the lowest instance that holds the job; every step's
    ``info["invalid_action"]`` flags a replaced action and ``info["n_invalid"]`` counts the
    episode's so far. ``illegal_action="raise"``: a forbidden action raises
    :class:`~gpu_sched_env.core.errors.InvalidActionError` and leaves the state unchanged. In
    both modes an action that is not one integer in ``[0, m]`` (out of range, a float,
    string, bool or multi-element array) raises ``InvalidActionError``.

    ## Observation Space
    ``Box(-1, 1e6, (8 + 2m,), float32)``:

    | index | observation | unit |
    |---|---|---|
    | 0 | poll time t | min |
    | 1 | job run length | min |
    | 2 | job peak memory | MB |
    | 3 | job mean memory | MB |
    | 4 | job deadline (−1 = none) | min |
    | 5 … 4+m | instance memory | MB |
    | 5+m … 4+2m | instance backlog max(0, free − t) | min |
    | 5+2m | jobs still waiting at this poll (besides this one) | jobs |
    | 6+2m | jobs placed so far | jobs |
    | 7+2m | defer allowed (0/1) | — |

    ## Rewards
    ``reward = −Σ_k reward_weights[k] · raw_k`` over the parts ``makespan`` = increase of the
    planned makespan max(free) by this action [min] (the episode's sum is the makespan) and
    ``deadline`` = 1 when the placed job will finish after its deadline.
    ``info["reward_parts"]`` holds each part's signed, weighted contribution (they sum to
    the reward), ``info["reward_raw"]`` the unweighted quantities. Defaults
    ``{"makespan": 1.0, "deadline": 0.0}``.

    ## Starting State
    A new data set (seeded from ``np_random``) or the fixed ``jobs``; the first decision is
    the first job taken at the first poll.

    ## Episode End
    Terminates when the last job is placed (defer is forbidden once no job is still to
    come, so every episode ends, substituted actions included; ``info["n_invalid"]`` holds the
    replaced actions). The final mask (``action_masks()``, ``info["action_mask"]``) marks
    defer alone as legal, so maskable samplers always find an action
    (``illegal_action="raise"``: all False). No truncation. ``step()`` before ``reset()`` or after the
    end raises :class:`~gpu_sched_env.core.errors.ResetNeededError`.

    ## Arguments
    ``jobs`` (fixed, non-empty list of :class:`Job`, optional), ``generator`` (generator
    config mapping, default Part B; the keyword was ``config`` before the config object),
    ``n_jobs`` (override its numberOfJobs), ``capacities``, ``poll_interval`` [min],
    ``reward_weights`` (non-negative), ``illegal_action`` (``"substitute"``, the default, or
    ``"raise"``; see *Action Space*), ``render_mode`` (``None``, ``"ansi"`` text or
    ``"rgb_array"`` Gantt chart of the instances' plans). Unknown arguments raise
    ``ConfigError``; ``reset()`` takes no options. The same settings as one frozen object:
    ``MIGEnv(MIGEnvConfig(...))`` (:class:`~gpu_sched_env.mig.config.MIGEnvConfig`, checked
    once; ``env.config``).

    ## Version History
    * v0: initial version. Since ``illegal_action``: an action the mask forbids is substituted
      by default (defer, else the lowest fitting instance; ``info["invalid_action"]``,
      ``info["n_invalid"]``) and the final mask marks defer; ``illegal_action="raise"`` gives the
      earlier strict behaviour. Legal actions play exactly as before.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, config: MIGEnvConfig | None = None, *, render_mode: str | None = None, **kwargs: Any) -> None:
        if config is not None and not isinstance(config, MIGEnvConfig) and isinstance(config, Mapping):
            raise ConfigError(
                f"config = {short(config)} is not allowed for MIG-v0; allowed: a MIGEnvConfig or None "
                "(a generator config mapping is the keyword generator=...)"
            )
        self.config = build_config(MIGEnvConfig, "MIG-v0", config, kwargs)
        self.render_mode = check_render_mode(render_mode)
        cfg = self.config
        self.capacities = cfg.capacities
        self.poll_interval = cfg.poll_interval
        self.fixed_jobs = None if cfg.jobs is None else list(cfg.jobs)
        self.gen_config = cfg.generator
        self.n_jobs = cfg.n_jobs
        self.reward_weights = dict(cfg.reward_weights)
        m = len(self.capacities)
        self.action_space = MaskedDiscrete(m + 1, self.action_masks)
        self._gate = ActionGate(cfg.illegal_action, m + 1, noop=m)  # defer (action m) is the no-op
        self.observation_space = spaces.Box(-1.0, OBS_HIGH, shape=(8 + 2 * m,), dtype=np.float32)
        self.sim: PlacementSim | None = None
        self._state: PlacementState | None = None

    def _obs(self) -> np.ndarray:
        m = len(self.capacities)
        o = np.zeros(8 + 2 * m, np.float32)
        st = self._state
        if st is None:
            return o
        j = st.job
        o[:5] = (st.time, j.length, j.peak, float(np.mean(j.mem)), j.deadline)
        o[5 : 5 + m] = st.capacities
        o[5 + m : 5 + 2 * m] = [max(0, f - st.time) for f in st.free_at]
        o[5 + 2 * m :] = (len(st.waiting), st.n_placed, float(st.can_defer))
        return np.minimum(o, OBS_HIGH)

    def action_masks(self) -> np.ndarray:
        """Legal actions (before reset all False; once the episode is over: the end's mask)."""
        if self._state is None:
            return self._gate.end_mask() if self.sim is not None else np.zeros(self.action_space.n, dtype=bool)
        return self._state.mask()

    def decision_state(self) -> PlacementState:
        """The simulator's current decision (what baseline agents read)."""
        if self._state is None:
            raise ResetNeededError("no decision pending: call reset()")
        return self._state

    def _info(self, parts: Mapping[str, float] | None = None, raw: Mapping[str, float] | None = None) -> dict[str, Any]:
        assert self.sim is not None
        return {
            "action_mask": self.action_masks(),
            "reward_parts": dict(parts or {}),
            "reward_raw": dict(raw or {}),
            "time": self.sim.t,
            "planned_makespan": max(self.sim.free),
            "skipped": list(self.sim.skipped),
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Draw a data set (or take the fixed jobs) and return the first decision."""
        check_options(options)
        super().reset(seed=check_seed(seed))
        if seed is not None:
            self.action_space.seed(int(self.np_random.integers(0, 2**31 - 1)))
        if self.fixed_jobs is not None:
            jobs = self.fixed_jobs
        else:
            ds_seed = int(self.np_random.integers(0, 2**31 - 1))
            jobs = to_mig_jobs(generate(self.gen_config, ds_seed, self.n_jobs))
        self.sim = PlacementSim(jobs, self.capacities, self.poll_interval)
        self._state = self.sim.reset()
        if self._state is None:
            raise ConfigError("no job fits any instance: nothing to schedule")
        self._gate.reset()
        return self._obs(), self._info()

    def step(self, action: Any):
        """Apply one placement or deferral."""
        if self.sim is None or self._state is None:
            raise ResetNeededError("MIG-v0: no job to place (before reset() or after the episode ended); call reset()")
        st = self._state
        a, invalid = self._gate.take(action, st.mask(), self._why_illegal)
        job = st.job
        before = max(self.sim.free)
        self._state = self.sim.step(a)
        raw = {"makespan": float(max(self.sim.free) - before), "deadline": 0.0}
        if job.id in self.sim.placed and job.deadline >= 0:
            _, start = self.sim.placed[job.id]
            raw["deadline"] = 1.0 if start + job.length > job.deadline else 0.0
        parts = {k: -self.reward_weights[k] * v for k, v in raw.items()}
        reward = sum(parts.values())
        terminated = self._state is None
        return self._obs(), float(reward), terminated, False, {**self._info(parts, raw), **self._gate.info(invalid)}

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of each instance's plan (``rgb_array``)."""
        if not render_ready(self.render_mode, self.sim is not None):
            return None
        sim, m = self.sim, len(self.capacities)
        if self.render_mode == "rgb_array":
            length = {j.id: j.length for j in sim.jobs}
            bars = [(inst, start, start + length[jid], jid) for jid, (inst, start) in sim.placed.items()]
            t_end = max([b[2] for b in bars] + [sim.t, 1])
            return gantt_rgb(m, bars, t_end, now=sim.t)
        lines = [f"MIG-v0 t = {sim.t} min: {len(sim.placed)} jobs placed, {len(sim.skipped)} skipped"]
        st = self._state
        if st is not None:
            lines.append(
                f"job {st.job.id}: length {st.job.length} min, peak {st.job.peak} MB, deadline {st.job.deadline}; "
                f"{len(st.waiting)} more waiting; defer {'allowed' if st.can_defer else 'not allowed'}"
            )
        lines += [f"  instance {i}: {c} MB, free at {sim.free[i]} min" for i, c in enumerate(self.capacities)]
        return "\n".join(lines)

    def _why_illegal(self, a: int) -> str:
        st = self._state
        if a == st.defer_action:
            return "defer is only allowed while more jobs are to come"
        return f"instance {a} has {self.capacities[a]} MB < job {st.job.id}'s peak {st.job.peak} MB"
