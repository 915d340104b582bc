"""Edge cluster schedulers (whole-workload planners) and fixed agents for ``EdgeBatch-v0``.

Schedulers share one protocol: ``reset(rng)`` once per run with the run's policy stream,
``decide(problem) -> Plan`` for an :class:`~gpu_sched_env.edge.model.EdgeProblem`. They see
the tasks' profiles (known from profiling), never realised run times.

Env agents share SB3's ``predict(obs, state=None, episode_start=None, deterministic=True)``.
``FcfsLlfAgent`` uses the same choice function as ``FcfsLLF``; driven through the env with
the same seed it reproduces the scheduler's assignment (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.env import obs_slices
from gpu_sched_env.edge.ilp import SolverConfig, baseline_ilp_schedule, membatch_schedule
from gpu_sched_env.edge.llf import TOP_K_FRACTION, TOP_K_MIN, fcfs_llf_schedule, llf_pick, top_k
from gpu_sched_env.edge.model import EdgeProblem
from gpu_sched_env.edge.plan import Plan

LLF_STREAM = "fcfs_llf"  # name of the policy RNG stream: stream(seed, LLF_STREAM)


class EdgeScheduler:
    """Base class: a scheduler plans the whole workload at once."""

    name = "base"

    def reset(self, rng: np.random.Generator | None) -> None:
        """Start a new run with the policy's random stream."""
        self.rng = rng

    def decide(self, problem: EdgeProblem) -> Plan:
        """Return a plan for every task of ``problem``."""
        raise NotImplementedError


class _ILPScheduler(EdgeScheduler):
    """Schedulers that plan in CP-SAT rounds with ``plan_fn(tasks, cluster, solver, threshold, split)``.

    All schedulers split tasks above the threshold (default: smallest device memory), as in
    the study; ``split=False`` is an ablation.
    """

    plan_fn = staticmethod(membatch_schedule)

    def __init__(self, solver: SolverConfig | None = None, split_threshold_gb: float | None = None,
                 split: bool = True) -> None:
        self.solver = solver or SolverConfig()
        self.split_threshold_gb = split_threshold_gb
        self.split = bool(split)

    def decide(self, problem: EdgeProblem) -> Plan:
        """Plan every task of ``problem`` with this scheduler's ILP rounds."""
        return self.plan_fn(problem.tasks, problem.cluster, self.solver, self.split_threshold_gb, self.split)


class MemBatchILP(_ILPScheduler):
    """MemBatch: memory-aware batching, task splitting, per-batch makespan ILP rounds."""

    name = "membatch"
    plan_fn = staticmethod(membatch_schedule)


class BaselineILP(_ILPScheduler):
    """Baseline ILP: splitting, rounds minimising total computation time (no batching, no GPU-share sum)."""

    name = "baseline_ilp"
    plan_fn = staticmethod(baseline_ilp_schedule)


class FcfsLLF(EdgeScheduler):
    """FCFS – Least Loaded First (Ray's default placement): locality, then load, random in top k."""

    name = "fcfs_llf"

    def __init__(
        self, fraction: float = TOP_K_FRACTION, minimum: int = TOP_K_MIN, split_threshold_gb: float | None = None,
        split: bool = True,
    ) -> None:
        top_k(1, fraction, minimum)  # validates
        self.fraction, self.minimum = fraction, minimum
        self.split_threshold_gb = split_threshold_gb
        self.split = bool(split)
        self.rng = None

    def decide(self, problem: EdgeProblem) -> Plan:
        """Plan with :func:`~gpu_sched_env.edge.llf.fcfs_llf_schedule` (needs ``reset(rng)`` first)."""
        if self.rng is None:
            raise RuntimeError("FcfsLLF.decide: call reset(rng) first (e.g. stream(seed, 'fcfs_llf'))")
        return fcfs_llf_schedule(problem.tasks, problem.cluster, self.rng, self.fraction, self.minimum,
                                 self.split_threshold_gb, self.split)


SCHEDULERS: dict[str, type[EdgeScheduler]] = {c.name: c for c in (MemBatchILP, BaselineILP, FcfsLLF)}


def make_scheduler(name: str, **kwargs: Any) -> EdgeScheduler:
    """Instantiate a registered scheduler by name."""
    check_choice("scheduler", name, SCHEDULERS)
    return SCHEDULERS[name](**kwargs)


# ---- env agents ----------------------------------------------------------------------------
class _EnvAgent:
    def __init__(self, n_devices: int, seed: int = 0) -> None:
        self.n_devices = int(n_devices)
        self.slices = obs_slices(self.n_devices)
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Re-seed the agent's random stream."""
        self.rng = stream(seed, LLF_STREAM)

    def _act(self, obs: np.ndarray) -> int:
        raise NotImplementedError

    def predict(self, obs, state=None, episode_start=None, deterministic: bool = True):
        """SB3-style: one action per observation (a single obs or a batch of them)."""
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim == 1:
            return np.int64(self._act(obs)), state
        return np.array([self._act(o) for o in obs], dtype=np.int64), state


class FcfsLlfAgent(_EnvAgent):
    """FCFS-LLF as an ``EdgeBatch-v0`` agent (same choice function and RNG stream as ``FcfsLLF``)."""

    name = "fcfs_llf"

    def __init__(self, n_devices: int, seed: int = 0, fraction: float = TOP_K_FRACTION, minimum: int = TOP_K_MIN) -> None:
        self.k = top_k(n_devices, fraction, minimum)
        super().__init__(n_devices, seed)

    def _act(self, obs: np.ndarray) -> int:
        s = self.slices
        return llf_pick(obs[s["load_h"]], obs[s["local"]] > 0.5, obs[s["fits"]] > 0.5, self.k, self.rng)


class RandomAgent(_EnvAgent):
    """Uniform over the devices with room (reads the mask from the observation)."""

    name = "random"

    def _act(self, obs: np.ndarray) -> int:
        legal = np.flatnonzero(obs[self.slices["fits"]] > 0.5)
        return int(legal[self.rng.integers(len(legal))])


AGENTS: dict[str, type[_EnvAgent]] = {"fcfs_llf": FcfsLlfAgent, "random": RandomAgent}
