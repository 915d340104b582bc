"""Gymnasium adapter: an agent places each task of each memory-aware batch on a Jetson device."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
from gpu_sched_env.edge.config import EdgeBatchEnvConfig, check_workload_names
from gpu_sched_env.edge.model import (
    Task,
    check_placeable,
    load_increment_h,
    task_arrays,
)
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.sim import DeviceTimeline
from gpu_sched_env.edge.workload import (
    memory_batches,
    random_workloads,
    split_tasks,
    tasks_from_workloads,
)

HOURS_HIGH = 1e6  # upper bound of the hour-valued blocks [h]
OBS_BLOCKS = ("fits", "time_h", "gpu_frac", "mem_frac", "load_h", "util", "local", "finish_h")


def obs_slices(n_devices: int) -> dict[str, slice]:
    """Where each per-device block sits in the flat observation; then ``remaining``, ``makespan_h``.

    Hour-valued blocks are bounded by ``HOURS_HIGH``; the others by 1.
    """
    out = {name: slice(k * n_devices, (k + 1) * n_devices) for k, name in enumerate(OBS_BLOCKS)}
    base = len(OBS_BLOCKS) * n_devices
    out["remaining"] = slice(base, base + 1)
    out["makespan_h"] = slice(base + 1, base + 2)
    return out


@dataclass(frozen=True)
class EdgeDecision:
    """What an edge env policy sees for the task to place: per-device blocks of the observation.

    Read-only arrays of length ``n_devices``: ``fits`` (room for the task: the legal
    actions), ``util`` (GPU-share utilisation), ``load_h`` (load [GPU-share-hours]),
    ``local`` (the task's data is on the device). Built from an observation with
    :meth:`from_obs`, so a policy decides from exactly what a learner sees.
    """

    fits: np.ndarray
    util: np.ndarray
    load_h: np.ndarray
    local: np.ndarray

    @classmethod
    def from_obs(cls, obs: np.ndarray, slices: Mapping[str, slice]) -> EdgeDecision:
        """The decision in one flat observation (``slices`` from :func:`obs_slices`)."""

        def block(name: str, as_bool: bool = False) -> np.ndarray:
            v = obs[slices[name]] > 0.5 if as_bool else np.array(obs[slices[name]])
            v.flags.writeable = False
            return v

        return cls(block("fits", True), block("util"), block("load_h"), block("local", True))


class EdgeBatchEnv(gym.Env):
    """Place training tasks on a heterogeneous Jetson cluster to minimise the makespan.

    ## Description
    An episode is one workload of ``n_tasks`` training tasks (drawn from the five reference
    workloads). Tasks are grouped into memory-aware batches in arrival order (a batch's
    memory stays within the cluster's total memory), tasks above the splitting threshold are
    split into shards (when ``split``), and the agent then places every task of every batch,
    one per step, on a device. Each device runs its tasks first-come first-served, co-running
    them while memory and GPU share allow (``gpu_sched_env.edge.sim``).

    ## Action Space
    ``Discrete(n_devices)``: the device for the current task. Legal: devices with room for
    the task (its memory and GPU share on that device type fit the device's capacity).
    ``action_masks()`` and ``info["action_mask"]`` give the mask. The layout has no no-op
    (every step places the task), so under ``illegal_action="substitute"`` (the default) a
    device the mask forbids is played as the lowest device with room for the task; every
    step's ``info["invalid_action"]`` flags a replaced action and ``info["n_invalid"]`` counts
    the episode's so far. ``illegal_action="raise"``: a forbidden device raises
    ``InvalidActionError`` and leaves the state unchanged. In both modes an action that is not
    one integer in ``[0, n_devices-1]`` (out of range, a float, string, bool or multi-element
    array) raises ``InvalidActionError``.

    ## Observation Space
    ``Box(0, high, (8 * D + 2,), float32)`` with ``D`` devices (blocks in ``obs_slices``):

    | block | size | meaning |
    |---|---|---|
    | fits | D | 1 where the current task has room on the device |
    | time_h | D | current task's run time on the device [h] (0 where it does not fit) |
    | gpu_frac | D | its GPU share on the device / 100 % (0 where it does not fit) |
    | mem_frac | D | its memory / device memory (0 where it does not fit) |
    | load_h | D | GPU-share-hours already committed to the device |
    | util | D | GPU share already committed to the device / 100 % (may exceed 1: queued tasks) |
    | local | D | 1 where a task with the same data (`Task.data_key`) is already placed |
    | finish_h | D | when the device's last placed task ends [h] |
    | remaining | 1 | fraction of the episode's tasks not yet placed |
    | makespan_h | 1 | makespan of the tasks placed so far [h] |

    ## Rewards
    ``reward = -Σ_k reward_weights[k] · raw_k`` over the part ``makespan`` = increase of the
    makespan of the tasks placed so far / ``reward_scale_s``. Undiscounted (default weight
    1), the episode's rewards sum to ``-makespan / reward_scale_s``. ``info["reward_parts"]``
    holds each part's signed, weighted contribution (they sum to the reward),
    ``info["reward_raw"]`` the unweighted quantities.

    ## Starting State
    A new workload from ``self.np_random`` (or ``options["workloads"]``, a list of workload
    names), all devices empty.

    ## Episode End
    Terminates when every task is placed (``info["n_invalid"]`` holds the replaced actions);
    never truncated (episodes have a fixed length). The final mask (``action_masks()``,
    ``info["action_mask"]``) marks device 0 alone as legal, so maskable samplers always find
    an action (``illegal_action="raise"``: all False).
    ``step()`` before ``reset()`` or after the end raises
    :class:`~gpu_sched_env.core.errors.ResetNeededError`.

    ## Arguments
    ``n_tasks`` (20), ``include_head`` (False: the head Orin NX only schedules),
    ``split`` (True), ``split_threshold_gb`` (None: smallest device memory), ``profiles``
    (None: default table; or a CSV/YAML path or a ``ProfileTable``), ``mix`` (workload
    weights; None: uniform), ``reward_scale_s`` (3600), ``reward_weights`` ({"makespan": 1},
    non-negative), ``illegal_action`` (``"substitute"``, the default, or ``"raise"``; see
    *Action Space*), ``render_mode`` (``None``, ``"ansi"`` text or ``"rgb_array"`` Gantt chart
    of the devices). Unknown arguments raise ``ConfigError``. The same settings as one frozen
    object: ``EdgeBatchEnv(EdgeBatchEnvConfig(...))``
    (:class:`~gpu_sched_env.edge.config.EdgeBatchEnvConfig`, checked once; ``env.config``).

    ## Version History
    * v0: initial version; the ``util`` block (FCFS-LLF's default utilisation) added later.
      Since ``illegal_action``: a device the mask forbids is substituted by default (the lowest
      device with room; ``info["invalid_action"]``, ``info["n_invalid"]``) and the final mask
      marks device 0; ``illegal_action="raise"`` gives the earlier strict behaviour. Legal
      actions play exactly as before.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(
        self, config: EdgeBatchEnvConfig | None = None, *, render_mode: str | None = None, **kwargs: Any
    ) -> None:
        self.config = build_config(EdgeBatchEnvConfig, "EdgeBatch-v0", config, kwargs)
        self.render_mode = check_render_mode(render_mode)
        cfg = self.config
        self.n_tasks = cfg.n_tasks
        self.cluster = cfg.cluster
        self.split = cfg.split
        self.threshold = cfg.split_threshold_gb
        self.table = cfg.profiles
        self.mix = None if cfg.mix is None else dict(cfg.mix)
        self.reward_scale_s = cfg.reward_scale_s
        self.reward_weights = dict(cfg.reward_weights)
        d = self.cluster.n
        self.action_space = MaskedDiscrete(d, self.action_masks)  # sample() draws legal actions
        self._gate = ActionGate(cfg.illegal_action, d)  # no no-op: the lowest device with room substitutes
        high = np.full(len(OBS_BLOCKS) * d + 2, HOURS_HIGH, dtype=np.float32)
        for name in ("fits", "gpu_frac", "mem_frac", "local", "remaining"):
            high[obs_slices(d)[name]] = 1.0
        self.observation_space = spaces.Box(np.zeros_like(high), high, dtype=np.float32)
        self._slices = obs_slices(d)
        self.source_tasks: list[Task] = []
        self.tasks: list[Task] = []
        self._i = 0

    # ---- episode -----------------------------------------------------------------------
    def check_reset_args(self, seed: Any, options: Any) -> tuple[int | None, list[Task] | None]:
        """``(seed, the option's tasks or None)`` of a reset's arguments; ConfigError before anything changes.

        ``gym.make``'s outermost wrapper calls it before any wrapper runs
        (:class:`~gpu_sched_env.core.spaces.CheckedReset`), and :meth:`reset` before it touches the env.
        """
        options = check_options(options, ("workloads",))
        source = None
        if "workloads" in options:
            names = options["workloads"]
            if (
                not isinstance(names, Sequence)
                or isinstance(names, (str, bytes))
                or not all(isinstance(n, str) for n in names)
            ):
                raise ConfigError(f"reset options.workloads = {names!r} must be a list of workload names")
            names = list(names)
            if not names:
                raise ConfigError("reset options.workloads is empty; give at least one workload name")
            self._check_workloads("reset options.workloads", names)
            source = tasks_from_workloads(names, self.table, self.cluster)
        return check_seed(seed), source

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Draw a workload, batch and split it, and empty the devices."""
        seed, source = self.check_reset_args(seed, options)  # raises before any change
        super().reset(seed=seed)
        if source is None:
            source = tasks_from_workloads(
                random_workloads(self.n_tasks, self.np_random, self.mix), self.table, self.cluster
            )
        self.source_tasks = source
        self.tasks, self.batch_of = [], []
        for b, batch in enumerate(memory_batches(self.source_tasks, self.cluster.total_mem_gb)):
            work = split_tasks(batch, self.threshold) if self.split else list(batch)
            self.tasks += work
            self.batch_of += [b] * len(work)
        check_placeable(self.tasks, self.cluster)
        self._t, self._g, self._m, self._fits = task_arrays(self.tasks, self.cluster)
        self._lines = [DeviceTimeline(dv.mem_gb, dv.gpu_cap) for dv in self.cluster.devices]
        self._load = np.zeros(self.cluster.n)
        self._util = np.zeros(self.cluster.n)
        self._seen: list[set[str]] = [set() for _ in range(self.cluster.n)]
        self._device: list[int] = []
        self._i = 0
        self._gate.reset()
        return self._obs(), self._info({})

    def _check_workloads(self, field: str, names: Any) -> None:
        """Raise unless every name (key) has rows in the profile table."""
        check_workload_names(field, names, self.table)

    def step(self, action):
        """Place the current task on device ``action``."""
        if self._i >= len(self.tasks):
            raise ResetNeededError(
                "EdgeBatch-v0: no task to place (before reset() or after the episode ended); call reset()"
            )
        j, invalid = self._gate.take(action, self._fits[self._i], self._why_illegal)
        i = self._i
        before = self._makespan()
        self._lines[j].add(self._t[i, j], self._m[i, j], self._g[i, j])
        self._load[j] += load_increment_h(self._t[i, j], self._g[i, j])
        self._util[j] += self._g[i, j] / 100.0
        self._seen[j].add(self.tasks[i].data_key)
        self._device.append(j)
        self._i += 1
        raw = {"makespan": (self._makespan() - before) / self.reward_scale_s}
        parts = {k: -self.reward_weights[k] * v for k, v in raw.items()}
        reward = float(sum(parts.values()))
        terminated = self._i == len(self.tasks)
        info = self._info(parts)
        info["reward_raw"] = raw
        info.update(self._gate.info(invalid))
        return self._obs(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of legal devices for the current task (before reset all False; once done: the end's mask)."""
        if self._i >= len(self.tasks):
            return self._gate.end_mask() if self.tasks else np.zeros(self.cluster.n, dtype=bool)
        return self._fits[self._i].copy()

    def plan(self) -> Plan:
        """The placements made so far, as a plan for ``gpu_sched_env.edge.sim.simulate``."""
        n = len(self._device)
        return Plan(
            "env", tuple(self.tasks[:n]), tuple(self._device), tuple(range(n)), tuple(self.batch_of[:n]), (0,) * n
        )

    def render(self) -> str | np.ndarray | None:
        """Text snapshot (``ansi``) or Gantt chart of the devices' tasks (``rgb_array``)."""
        if not render_ready(self.render_mode, bool(self.tasks)):
            return None
        if self.render_mode == "rgb_array":
            bars = [
                (d, s, e, k) for d, ln in enumerate(self._lines) for k, (s, e) in enumerate(zip(ln.starts, ln.ends))
            ]
            return gantt_rgb(self.cluster.n, bars, max(self._makespan(), 1.0))
        lines = [f"EdgeBatch-v0: {self._i}/{len(self.tasks)} tasks placed, makespan {self._makespan() / 3600:.2f} h"]
        if self._i < len(self.tasks):
            t = self.tasks[self._i]
            lines.append(f"task {t.id} ({t.workload}), batch {self.batch_of[self._i]}")
        lines += [
            f"  device {d} {dv.name}: {len(ln.ends)} tasks, busy until {ln.finish / 3600:.2f} h"
            for d, (dv, ln) in enumerate(zip(self.cluster.devices, self._lines))
        ]
        return "\n".join(lines)

    # ---- hooks -------------------------------------------------------------------------
    def _why_illegal(self, j: int) -> str:
        i = self._i
        return (
            f"device {j} ({self.cluster.devices[j].name}) has no room for task {self.tasks[i].id!r} "
            f"({self._m[i, j]:.2f} GB, {self._g[i, j]:.0f} % GPU)"
        )

    def _makespan(self) -> float:
        return max(ln.finish for ln in self._lines)

    def _obs(self) -> np.ndarray:
        s = self._slices
        obs = np.zeros(self.observation_space.shape, dtype=np.float32)
        if self._i < len(self.tasks):
            i = self._i
            fits = self._fits[i]
            caps = np.array([dv.mem_gb for dv in self.cluster.devices])
            obs[s["fits"]] = fits
            obs[s["time_h"]] = np.where(fits, self._t[i] / 3600.0, 0.0)
            obs[s["gpu_frac"]] = np.where(fits, self._g[i] / 100.0, 0.0)
            obs[s["mem_frac"]] = np.where(fits, self._m[i] / caps, 0.0)
            obs[s["local"]] = [self.tasks[i].data_key in seen for seen in self._seen]
        obs[s["load_h"]] = self._load.astype(np.float32)
        obs[s["util"]] = self._util.astype(np.float32)
        obs[s["finish_h"]] = [ln.finish / 3600.0 for ln in self._lines]
        obs[s["remaining"]] = (len(self.tasks) - self._i) / max(1, len(self.tasks))
        obs[s["makespan_h"]] = self._makespan() / 3600.0
        return obs

    def _info(self, parts: dict[str, float]) -> dict[str, Any]:
        done = self._i >= len(self.tasks)
        info: dict[str, Any] = {
            "action_mask": self.action_masks(),
            "reward_parts": dict(parts),
            "makespan_s": self._makespan(),
            "n_placed": self._i,
            "n_tasks": len(self.tasks),
        }
        if not done:
            info["task"] = self.tasks[self._i].id
            info["batch"] = self.batch_of[self._i]
        else:
            info["total_comp_s"] = float(
                sum(ln.ends[k] - ln.starts[k] for ln in self._lines for k in range(len(ln.ends)))
            )
        return info


def workloads_of(tasks: Sequence[Task]) -> list[str]:
    """Workload names of tasks (to replay an episode with ``options={"workloads": ...}``)."""
    return [t.workload for t in tasks]
