"""Gymnasium adapter for HGSP: the agent places each task on a GPU."""

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
from gpu_sched_env.hgsp.config import HGSPEnvConfig
from gpu_sched_env.hgsp.metrics import summarize
from gpu_sched_env.hgsp.sim import Decision, ListScheduler, Problem, decision
from gpu_sched_env.hgsp.workload import generate_tasks

OBS_BOUND = 1e6  # [T_ref] time features are clipped here (a wait of 10^6 mean run times)


class HGSPEnv(gym.Env):
    """Place HGSP tasks one by one on a heterogeneous GPU cluster (list scheduling).

    ## Description
    Tasks (workload, memory, deadline, weight, arrival) are taken in arrival order (or in a
    given priority list, see ``order``). For each, the agent picks a GPU with enough memory;
    the task starts at ``max(arrival, GPU free)`` and runs ``workload / speed``. The aim is
    a small total weighted tardiness. Tasks no GPU can hold are skipped (no decision) and
    counted in ``info["summary"]["skipped"]``.

    ## Action space
    ``Discrete(m)``: the GPU index (cluster order, e.g. small = A100, A30, L40). Only GPUs
    with ``memory >= task memory`` are legal (``action_masks()``, ``info["action_mask"]``).
    The layout has no no-op (every step places the task), so under
    ``illegal_action="substitute"`` (the default) a GPU the mask forbids is played as the
    lowest legal one, the first GPU in cluster order that holds the task; every step's
    ``info["invalid_action"]`` flags a replaced action and ``info["n_invalid"]`` counts the
    episode's so far. ``illegal_action="raise"``: a forbidden GPU raises
    :class:`~gpu_sched_env.core.errors.InvalidActionError` and leaves the state unchanged. In
    both modes an action that is not one integer in ``[0, m-1]`` (out of range, a float,
    string, bool or multi-element array) raises ``InvalidActionError``.

    ## Observation space
    ``Box(5 + 4m,)`` float32; times in units of ``T_ref`` = mean workload / fastest speed,
    clipped to +-1e6.

    | index | meaning |
    |---|---|
    | 0 | task run time on its fastest fitting GPU / T_ref |
    | 1 | (deadline - arrival) / T_ref |
    | 2 | weight / largest weight in the set |
    | 3 | memory / largest GPU memory |
    | 4 | fraction of tasks already placed |
    | 5 + 4j | 1 if the task fits GPU j else 0 |
    | 6 + 4j | (start on GPU j - arrival) / T_ref (wait if placed there) |
    | 7 + 4j | (finish on GPU j - deadline) / T_ref (lateness if placed there) |
    | 8 + 4j | speed of GPU j / fastest speed |

    ## Rewards
    ``-(tardiness_w * w (c - d)^+ + flow_w * w (c - a)) / T_ref`` for the placed task, with
    the weights of ``reward_weights`` (default tardiness 1, flow 0): the undiscounted return
    is ``-WT / T_ref``. ``info["reward_parts"]`` holds each part's signed, weighted contribution
    (they sum to the reward), ``info["reward_raw"]`` the unweighted ``w (c - d)^+ / T_ref`` and
    ``w (c - a) / T_ref``.

    ## Starting state
    All GPUs idle; the first task in arrival order waits for its GPU. For a preset name
    ``tasks`` a new task set is drawn from ``np_random`` at each reset; a CSV, DataFrame or
    TaskSet gives the same set every episode.

    ## Episode end
    Terminated when every schedulable task is placed (``info["summary"]`` holds the metrics
    of :func:`gpu_sched_env.hgsp.summarize`, ``info["n_invalid"]`` the replaced actions). The
    final mask (``action_masks()``, ``info["action_mask"]``) marks GPU 0 alone as legal, so
    maskable samplers always find an action (``illegal_action="raise"``: all False). No
    truncation. ``step()`` before ``reset()`` or after the end raises
    :class:`~gpu_sched_env.core.errors.ResetNeededError`.

    ## Arguments
    ``tasks`` (preset name, CSV path, DataFrame or TaskSet; default ``"tasks1"``),
    ``cluster`` (``"small"``, ``"medium"``, ``"large"`` or ``{model: count}``), ``n_tasks``
    (preset size override, e.g. 100 for short episodes), ``order`` (priority list for a fixed
    task set; default arrival order), ``decoder`` (how ``order`` is decoded: ``"list"``, strictly
    in list order, the default as in SAGreedy, or ``"release"``, release-aware; the two agree
    on the arrival order), ``reward_weights`` (mapping with keys tardiness, flow,
    non-negative), ``illegal_action`` (``"substitute"``, the default, or ``"raise"``; see
    *Action space*), ``render_mode`` (``None``, ``"ansi"`` text or ``"rgb_array"`` Gantt chart
    of the placed tasks per GPU). Unknown arguments raise ``ConfigError``; ``reset()`` takes
    no options. The same settings as one frozen object: ``HGSPEnv(HGSPEnvConfig(...))``
    (:class:`~gpu_sched_env.hgsp.config.HGSPEnvConfig`, checked once; ``env.config``).

    ## Version history
    * v0: initial version. Since ``illegal_action``: a GPU the mask forbids is substituted by
      default (the lowest fitting GPU; ``info["invalid_action"]``, ``info["n_invalid"]``) and
      the final mask marks GPU 0; ``illegal_action="raise"`` gives the earlier strict
      behaviour. Legal actions play exactly as before.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, config: HGSPEnvConfig | None = None, *, render_mode: str | None = None, **kwargs: Any) -> None:
        self.config = build_config(HGSPEnvConfig, "HGSP-v0", config, kwargs)
        self.render_mode = check_render_mode(render_mode)
        cfg = self.config
        self._serial = cfg.serial
        self._preset = cfg.tasks if cfg.is_preset else None
        self._n_tasks = cfg.n_tasks
        self._fixed = None if cfg.is_preset else cfg.tasks
        self._order = None if cfg.order is None else np.asarray(cfg.order, dtype=int)
        self.cluster = cfg.cluster
        self.reward_weights = dict(cfg.reward_weights)
        m = self.cluster.m
        self._vmax = float(self.cluster.speed.max())
        self._mmax = float(self.cluster.memory.max())
        lo = np.full(5 + 4 * m, -OBS_BOUND, np.float32)
        hi = np.full(5 + 4 * m, OBS_BOUND, np.float32)
        lo[0], lo[2:5], hi[2:5] = 0.0, 0.0, [1.0, OBS_BOUND, 1.0]
        lo[5::4], hi[5::4] = 0.0, 1.0
        lo[8::4], hi[8::4] = 0.0, 1.0
        self.observation_space = spaces.Box(lo, hi, dtype=np.float32)
        self.action_space = MaskedDiscrete(m, self.action_masks)  # sample() draws legal actions
        self._gate = ActionGate(cfg.illegal_action, m)  # no no-op: the lowest fitting GPU substitutes
        self.problem: Problem | None = None
        self._ls: ListScheduler | None = None
        self._task: int | None = None

    # -- gym API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Start a new episode (a new task set for a preset)."""
        check_options(options)
        super().reset(seed=check_seed(seed))
        if self._fixed is not None:
            ts = self._fixed
        else:
            ts = generate_tasks(self._preset, int(self.np_random.integers(2**31 - 1)), self._n_tasks)
        if self.problem is None or self.problem.tasks is not ts:
            self.problem = Problem(ts, self.cluster)
            if len(self.problem.arrival_order) == 0:
                raise ConfigError(f"tasks {ts.name!r}: no task fits any GPU of the cluster")
        pr = self.problem
        self._tref = float(ts.workload.mean()) / self._vmax
        self._wmax = max(float(ts.weight.max()), 1e-12)
        self._ls = ListScheduler(pr, self._order, self._serial)
        self._task = self._ls.next_task()
        self._gate.reset()
        return self._obs(), self._info({})

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Place the current task on GPU ``action``."""
        if self._ls is None or self._task is None:
            raise ResetNeededError(
                "HGSP-v0: no task to place (before reset() or after the episode ended); call reset()"
            )
        i = self._task
        pr = self.problem
        j, invalid = self._gate.take(action, pr.fit[i], self._why_illegal)
        c = self._ls.place(i, j)
        t = pr.tasks
        raw = {
            "tardiness": float(t.weight[i] * max(0.0, c - t.deadline[i])) / self._tref,
            "flow": float(t.weight[i] * (c - t.arrival[i])) / self._tref,
        }
        parts = {k: -self.reward_weights[k] * v for k, v in raw.items()}
        reward = sum(parts.values())
        self._task = self._ls.next_task()
        terminated = self._task is None
        info = self._info(
            {"reward_parts": parts, "reward_raw": raw, "placed_task": i, "gpu": j, "end": c, **self._gate.info(invalid)}
        )
        if terminated:
            info["summary"] = summarize(self._ls.result())
        return self._obs(), float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of legal GPUs for the current task (before reset all False; once done: the end's mask)."""
        if self._task is None:
            return self._gate.end_mask() if self._ls is not None else np.zeros(self.cluster.m, bool)
        return self.problem.fit[self._task].copy()

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of the placed tasks per GPU (``rgb_array``)."""
        if not render_ready(self.render_mode, self._ls is not None):
            return None
        sch, cl = self._ls, self.cluster
        if self.render_mode == "rgb_array":
            placed = [int(i) for i in sch.sequence]
            bars = [(int(sch.gpu[i]), float(sch.start[i]), float(sch.end[i]), i) for i in placed]
            t_end = max([b[2] for b in bars], default=1.0)
            return gantt_rgb(cl.m, bars, t_end)
        t = self.problem.tasks
        lines = [f"HGSP-v0: {len(sch.sequence)}/{len(self.problem.arrival_order)} tasks placed"]
        if self._task is not None:
            i = self._task
            lines.append(
                f"task {t.task_id[i]}: arrival {t.arrival[i]:g}, deadline {t.deadline[i]:g}, "
                f"memory {t.memory[i]:g} GB, weight {t.weight[i]:g}"
            )
        for j, name in enumerate(cl.names):
            free = sch.avail[j]
            lines.append(
                f"  GPU {j} {name:>10}: {cl.memory[j]:g} GB, free at {'-' if free == -np.inf else f'{free:g}'}"
            )
        return "\n".join(lines)

    # -- helpers ---------------------------------------------------------------------------
    def decision(self) -> Decision:
        """The exact decision the env waits on (for heuristic agents)."""
        if self._task is None:
            raise ResetNeededError("no pending decision (reset first, or the episode has ended)")
        return decision(self._ls, self._task)

    def schedule(self):
        """The schedule built so far (:class:`gpu_sched_env.hgsp.Schedule`)."""
        return self._ls.result()

    def _why_illegal(self, j: int) -> str:
        pr, i = self.problem, self._task
        return (
            f"GPU {j} ({self.cluster.names[j]}, {self.cluster.memory[j]:g} GB) cannot hold task "
            f"{pr.tasks.task_id[i]} ({pr.tasks.memory[i]:g} GB)"
        )

    def _obs(self) -> np.ndarray:
        m = self.cluster.m
        obs = np.zeros(5 + 4 * m, np.float32)
        if self._task is None:
            obs[4] = 1.0
            obs[8::4] = self.cluster.speed / self._vmax
            return obs
        pr, i, tr = self.problem, self._task, self._tref
        t = pr.tasks
        a, d = t.arrival[i], t.deadline[i]
        fit = pr.fit[i]
        start = np.maximum(a, np.array(self._ls.avail))
        obs[0] = pr.p[i][fit].min() / tr
        obs[1] = (d - a) / tr
        obs[2] = t.weight[i] / self._wmax
        obs[3] = t.memory[i] / self._mmax
        obs[4] = len(self._ls.sequence) / max(1, len(pr.arrival_order))
        obs[5::4] = fit
        obs[6::4] = (start - a) / tr
        obs[7::4] = (start + pr.p[i] - d) / tr
        obs[8::4] = self.cluster.speed / self._vmax
        return np.clip(obs, self.observation_space.low, self.observation_space.high)

    def _info(self, extra: dict) -> dict:
        info = {"action_mask": self.action_masks(), "task": self._task}
        info.update(extra)
        return info
