"""Edge cluster schedulers (whole-workload planners) and fixed agents for ``EdgeBatch-v0``.

Schedulers follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(problem, rng)`` once per
run with the run's policy stream, ``decide(problem) -> Plan`` for an
:class:`~gpu_sched_env.edge.model.EdgeProblem` (see :mod:`gpu_sched_env.edge.policies`). They
see the tasks' profiles (known from profiling), never realised run times. Importing this
module registers them.

Env agents: ``HeuristicAgent(name, env, seed=0, **knobs)`` with SB3's ``predict(obs,
state=None, episode_start=None, deterministic=True)``, choosing from the observation. The
``fcfs_llf`` agent uses the same choice function and random stream as ``FcfsLLF``; driven
through the env with the same seed it reproduces the scheduler's assignment (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_agents.heuristics.env_agent import EnvAgent
from gpu_sched_env.core.errors import check_choice, check_keys
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.env import obs_slices
from gpu_sched_env.edge.ilp import SolverConfig, baseline_ilp_schedule, membatch_schedule
from gpu_sched_env.edge.llf import LLFConfig, fcfs_llf_schedule, llf_pick, top_k
from gpu_sched_env.edge.model import EdgeProblem
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.policies import POLICIES as REGISTRY

LLF_STREAM = "fcfs_llf"  # name of the policy RNG stream: stream(seed, LLF_STREAM)


class EdgeScheduler:
    """Base class: a scheduler plans the whole workload at once."""

    name = "base"

    def reset(self, problem: EdgeProblem, rng: np.random.Generator) -> None:
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
    """FCFS – Least Loaded First (Ray's default placement): locality, then utilisation, random in top k."""

    name = "fcfs_llf"

    def __init__(
        self, cfg: LLFConfig | None = None, split_threshold_gb: float | None = None, split: bool = True,
    ) -> None:
        self.cfg = cfg or LLFConfig()
        self.split_threshold_gb = split_threshold_gb
        self.split = bool(split)
        self.rng = None

    def decide(self, problem: EdgeProblem) -> Plan:
        """Plan with :func:`~gpu_sched_env.edge.llf.fcfs_llf_schedule` (needs ``reset(problem, rng)`` first)."""
        if self.rng is None:
            raise RuntimeError("FcfsLLF.decide: call reset(problem, rng) first (rng e.g. stream(seed, 'fcfs_llf'))")
        return fcfs_llf_schedule(problem.tasks, problem.cluster, self.rng, self.cfg, self.split_threshold_gb,
                                 self.split)


SCHEDULERS: dict[str, type[EdgeScheduler]] = {c.name: c for c in (MemBatchILP, BaselineILP, FcfsLLF)}
for _name, _cls in SCHEDULERS.items():
    REGISTRY.register(_name, _cls)


def make_scheduler(name: str, **kwargs: Any) -> EdgeScheduler:
    """Instantiate a registered scheduler by name."""
    return REGISTRY.make(name, **kwargs)


# ---- env agents ----------------------------------------------------------------------------
def _llf_choice(obs: np.ndarray, s: dict[str, slice], k: int, rng: np.random.Generator, cfg: LLFConfig) -> int:
    util = obs[s["util"]] if cfg.utilisation == "share" else obs[s["load_h"]]
    return llf_pick(util, obs[s["local"]] > 0.5, obs[s["fits"]] > 0.5, k, rng, cfg.spread_threshold, cfg.ties)


def _random_choice(obs: np.ndarray, s: dict[str, slice], k: int, rng: np.random.Generator, cfg: LLFConfig) -> int:
    legal = np.flatnonzero(obs[s["fits"]] > 0.5)  # the mask, read from the observation
    return int(legal[rng.integers(len(legal))])


# name -> (choice function, the knobs it takes)
AGENTS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "fcfs_llf": (_llf_choice, ("fraction", "minimum", "utilisation", "spread_threshold", "ties")),  # as FcfsLLF
    "random": (_random_choice, ()),  # uniform over the devices with room
}


class HeuristicAgent(EnvAgent):
    """A fixed ``EdgeBatch-v0`` agent: ``HeuristicAgent(name, env, seed=0, **knobs)``.

    Args:
        name: ``fcfs_llf`` or ``random`` (:data:`AGENTS`).
        env: the env it drives (single, or vectorised with identical clusters); gives the
            number of devices, hence the observation layout.
        seed: seeds the agent's random stream ``stream(seed, LLF_STREAM)``; give the seed
            of the env's ``reset`` to replay ``FcfsLLF`` with that seed. Re-seed between
            episodes with :meth:`set_random_seed` (as on an SB3 model).
        **knobs: the :class:`~gpu_sched_env.edge.llf.LLFConfig` fields for ``fcfs_llf``
            (``fraction``, ``minimum``, ``utilisation``, ``spread_threshold``, ``ties``).
    """

    def __init__(self, name: str, env: Any = None, seed: int = 0, **knobs: Any) -> None:
        super().__init__(check_choice("agent", name, AGENTS), env)
        self._choose, allowed = AGENTS[name]
        check_keys(knobs, allowed, section=f"{name} agent parameters")
        self.cfg = LLFConfig(**knobs)  # validates
        self.set_random_seed(seed)
        self._layout: tuple[int, dict[str, slice], int] | None = None  # (n_devices, slices, k)

    def set_random_seed(self, seed: int) -> None:
        """Restart the agent's random stream from ``seed``."""
        self.rng = stream(seed, LLF_STREAM)

    def _slices(self) -> tuple[dict[str, slice], int]:
        if self._layout is None:
            env = self._bound_env()
            if hasattr(env, "get_attr"):  # SB3 VecEnv or Gymnasium VectorEnv
                n = env.get_attr("cluster")[0].n
            else:
                n = env.unwrapped.cluster.n
            self._layout = (n, obs_slices(n), top_k(n, self.cfg.fraction, self.cfg.minimum))
        return self._layout[1], self._layout[2]

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[Any, Any]:
        """SB3-style: one action per observation (a single obs or a batch of them)."""
        s, k = self._slices()
        obs = np.asarray(observation, dtype=np.float32)
        if obs.ndim == 1:
            return np.int64(self._choose(obs, s, k, self.rng, self.cfg)), state
        return np.array([self._choose(o, s, k, self.rng, self.cfg) for o in obs], dtype=np.int64), state
