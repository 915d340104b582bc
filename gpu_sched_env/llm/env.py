"""Gymnasium adapter for LLM serving: the agent picks the next request to start."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gpu_sched_env.core.envconfig import build_config
from gpu_sched_env.core.errors import (
    ActionGate,
    ConfigError,
    ResetNeededError,
    check_options,
    check_seed,
)
from gpu_sched_env.core.render import RENDER_MODES, check_render_mode, gantt_rgb, render_ready
from gpu_sched_env.core.spaces import MaskedDiscrete
from gpu_sched_env.llm.config import LLMServeEnvConfig
from gpu_sched_env.llm.model import mixed
from gpu_sched_env.llm.sim import LLMDecision, LLMSim

N_FEAT = 7
OBS_BOUND = 1e6  # waits in units of p_ref are clipped here


class LLMServeEnv(gym.Env):
    """Start LLM inference requests on a tensor-parallel GPU cluster.

    ## Description
    Requests (tokens, phase, memory, tensor-parallel degree tau, weight, arrival) queue for a
    GPU cluster. Whenever some queued request fits on the free GPUs, the simulator (discrete
    time, dt = 0.01 s, by default) stops and the agent picks which request to start now; the
    request takes its tau fastest free GPUs. Goal: small total weighted waiting (completion)
    time ``sum w (c - a)``.

    ## Action space
    ``Discrete(N)`` with N the number of requests: the request index. Legal: queued requests
    whose tau GPUs (with memory >= m / tau) are free (``action_masks()``,
    ``info["action_mask"]``). The layout has no no-op (the simulator stops only when some
    request can start), so under ``illegal_action="substitute"`` (the default) a request the
    mask forbids is played as the lowest-index startable request; every step's
    ``info["invalid_action"]`` flags a replaced action and ``info["n_invalid"]`` counts the
    episode's so far. ``illegal_action="raise"``: a forbidden request raises
    :class:`~gpu_sched_env.core.errors.InvalidActionError` and leaves the state unchanged. In
    both modes an action that is not one integer in ``[0, N-1]`` (out of range, a float,
    string, bool or multi-element array) raises ``InvalidActionError``.

    ## Observation space
    ``Box(2 + 7N,)`` float32; times in units of ``p_ref`` = mean estimated run time.

    | index | meaning |
    |---|---|
    | 0 | free GPUs / all GPUs |
    | 1 | current time / p_ref |
    | 2 + 7i | 1 if request i is queued |
    | 3 + 7i | 1 if request i is running |
    | 4 + 7i | 1 if request i is done |
    | 5 + 7i | estimated run time / p_ref |
    | 6 + 7i | tau / number of GPUs |
    | 7 + 7i | weight / largest weight |
    | 8 + 7i | time since arrival / p_ref (0 before arrival), clipped to 1e6 |

    ## Rewards
    ``-(Phi(t') - Phi(t)) / p_ref`` between decisions, with ``Phi(t)`` the weighted time
    arrived requests have spent in the system by ``t``; the return is
    ``-weighted_wait / p_ref``. ``info["reward_parts"]["weighted_wait"]`` holds the part's
    signed contribution (it equals the reward), ``info["reward_raw"]["weighted_wait"]`` the
    unsigned ``(Phi(t') - Phi(t)) / p_ref``.

    ## Starting state
    Time 0 advanced to the first decision. The default ``workload="mixed"`` draws a new
    request set from ``np_random`` at each reset, so different seeds give different episodes.
    ``"discriminating"`` (the spec's 20-request reference), a Workload or a request table
    is the same every episode whatever the seed (the seed then changes nothing).

    ## Episode end
    Terminated when every feasible request has completed (``info["summary"]`` holds
    ``weighted_wait``, ``avg_wait``, ``makespan``, ``completed``...; ``info["n_invalid"]`` the
    replaced actions). The final mask (``action_masks()``, ``info["action_mask"]``) marks
    request 0 alone as legal, so maskable samplers always find an action
    (``illegal_action="raise"``: all False). No truncation.
    ``step()`` before ``reset()`` or after the end raises
    :class:`~gpu_sched_env.core.errors.ResetNeededError`.

    ## Arguments
    ``workload`` ("mixed" (default), "discriminating", a Workload or a request DataFrame),
    ``engine`` ("discrete" or "event"), ``dt`` [s], ``n_requests`` (size of "mixed", default
    50), ``cluster`` ({type: count}, request tables only), ``illegal_action``
    (``"substitute"``, the default, or ``"raise"``; see *Action space*), ``render_mode`` (``None``,
    ``"ansi"`` text or ``"rgb_array"`` Gantt chart of the requests). Unknown arguments raise
    ``ConfigError``; ``reset()`` takes no options. The same settings as one frozen object:
    ``LLMServeEnv(LLMServeEnvConfig(...))`` (:class:`~gpu_sched_env.llm.config.LLMServeEnvConfig`,
    checked once; ``env.config``).

    ## Version history
    * v0: initial version (the default workload was "discriminating", the same every
      episode, until the env contract; now "mixed"). Since ``illegal_action``: a
      request the mask forbids is substituted by default (the lowest-index startable one;
      ``info["invalid_action"]``, ``info["n_invalid"]``) and the final mask marks request 0;
      ``illegal_action="raise"`` gives the earlier strict behaviour. Legal actions play exactly
      as before.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(
        self, config: LLMServeEnvConfig | None = None, *, render_mode: str | None = None, **kwargs: Any
    ) -> None:
        self.config = build_config(LLMServeEnvConfig, "LLMServe-v0", config, kwargs)
        self.render_mode = check_render_mode(render_mode)
        cfg = self.config
        self._random, self._n, self._fixed = cfg.is_random, cfg.n_requests, cfg.fixed
        self.engine, self.dt = cfg.engine, cfg.dt
        n = self._n if self._random else self._fixed.requests.n
        lo = np.zeros(2 + N_FEAT * n, np.float32)
        hi = np.full(2 + N_FEAT * n, OBS_BOUND, np.float32)
        hi[0] = 1.0
        for k in (2, 3, 4, 6, 7):
            hi[k::N_FEAT] = 1.0
        self.observation_space = spaces.Box(lo, hi, dtype=np.float32)
        self.action_space = MaskedDiscrete(n, self.action_masks)  # sample() draws legal actions
        self._gate = ActionGate(cfg.illegal_action, n)  # no no-op: the lowest startable request substitutes
        self.sim: LLMSim | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start a new episode."""
        check_options(options)
        super().reset(seed=check_seed(seed))
        wl = mixed(int(self.np_random.integers(2**31 - 1)), self._n) if self._random else self._fixed
        self.sim = LLMSim(wl, self.dt, self.engine)
        r = wl.requests
        ok = ~self.sim.skipped
        if not ok.any():
            raise ConfigError(f"workload {wl.name!r}: no request fits the cluster")
        self._pref = float(self.sim.p_est[ok].mean())
        self._wmax = max(float(r.weight.max()), 1e-12)
        self._pending = self.sim.advance()
        self._phi = self.sim.weighted_in_system(self.sim.time)
        self._gate.reset()
        return self._obs(), {"action_mask": self.action_masks()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Start request ``action`` now, then run to the next decision."""
        if self.sim is None or not self._pending:
            raise ResetNeededError(
                "LLMServe-v0: no pending decision (before reset() or after the episode ended); call reset()"
            )
        i, invalid = self._gate.take(
            action,
            self.action_masks(),
            lambda a: f"at t = {self.sim.time:.2f} s request {a} is not queued with its GPUs free",
        )
        self.sim.start(i)
        self._pending = self.sim.advance()
        phi = self.sim.weighted_in_system(self.sim.time)
        part = (phi - self._phi) / self._pref
        self._phi = phi
        info = {
            "action_mask": self.action_masks(),
            "reward_parts": {"weighted_wait": -part},
            "reward_raw": {"weighted_wait": part},
            **self._gate.info(invalid),
        }
        if not self._pending:
            info["summary"] = self.sim.summary()
        return self._obs(), -part, not self._pending, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of startable requests (before reset all False; once done: the end's mask)."""
        if self.sim is not None and not self._pending:
            return self._gate.end_mask()
        mask = np.zeros(self.action_space.n, bool)
        if self.sim is not None:
            mask[self.sim.candidates()] = True
        return mask

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of the started requests (``rgb_array``)."""
        if not render_ready(self.render_mode, self.sim is not None):
            return None
        s = self.sim
        started = np.flatnonzero(~np.isnan(s.start_t))
        if self.render_mode == "rgb_array":
            bars = [(int(i), float(s.start_t[i]), float(s.end_t[i]), int(i)) for i in started]
            t_end = max([b[2] for b in bars] + [s.time, 1e-9])
            return gantt_rgb(s.n, bars, t_end, now=s.time)
        done = int(np.sum(s.end_t[started] <= s.time + 1e-9))
        return (
            f"LLMServe-v0 t = {s.time:.2f} s: {int(s.free.sum())}/{s.m} GPUs free; "
            f"queued {list(map(int, s.queue))}; running {len(started) - done}; done {done}/{s.n}"
        )

    def decision(self) -> LLMDecision:
        """The exact decision the env waits on (for heuristic agents)."""
        if self.sim is None or not self._pending:
            raise ResetNeededError("no pending decision (reset first, or the episode has ended)")
        return self.sim.decision()

    def _obs(self) -> np.ndarray:
        s, r = self.sim, self.sim.workload.requests
        t = s.time
        obs = np.zeros(self.observation_space.shape, np.float32)
        obs[0] = s.free.mean()
        obs[1] = t / self._pref
        queued = np.zeros(s.n, bool)
        queued[s.queue] = True
        started = ~np.isnan(s.start_t)
        done = started & (s.end_t <= t + 1e-9)
        arrived = (r.arrival <= t) & ~s.skipped
        obs[2::N_FEAT] = queued
        obs[3::N_FEAT] = started & ~done
        obs[4::N_FEAT] = done
        obs[5::N_FEAT] = np.where(np.isfinite(s.p_est), s.p_est, 0.0) / self._pref
        obs[6::N_FEAT] = r.tp / s.m
        obs[7::N_FEAT] = r.weight / self._wmax
        obs[8::N_FEAT] = np.where(arrived, t - r.arrival, 0.0) / self._pref
        return np.clip(obs, self.observation_space.low, self.observation_space.high)
