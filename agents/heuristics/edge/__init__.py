"""Edge cluster planners (whole-workload, offline) and the env policies behind ``EdgeBatch-v0``'s agents.

**Planners** follow :class:`gpu_sched_env.core.policy.Planner`: ``plan(problem, rng) -> Plan``
for an :class:`~gpu_sched_env.edge.model.EdgeProblem`, the whole workload planned at once
(MemBatch ILP, baseline ILP, FCFS-LLF; and the strong rules of :mod:`.strong`: ``heft``,
``min_min``, ``max_min``, ``sufferage``, ``mct``, ``lp_round``, ``best_rule``, ``local_search``).
They see the tasks' profiles (known from profiling), never realised run times. Registered in
:data:`gpu_sched_env.edge.policies.PLANNERS`. The bound on an instance's makespan is
:func:`.bounds.bound`.

**Env policies** follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(cluster, rng)``,
``decide(decision) -> device`` for one read-only
:class:`~gpu_sched_env.edge.env.EdgeDecision` (the current task's per-device blocks of the
observation; a policy with a ``view_type`` reads that richer view, as ``mct`` does). Registered
in :data:`gpu_sched_env.edge.policies.POLICIES` (``fcfs_llf``, ``random``, ``mct``), the one
table the env agents come from: ``HeuristicAgent(name, env, seed=0, **knobs)`` with SB3's
``predict(obs, state=None, episode_start=None, deterministic=True)``. The ``fcfs_llf`` policy
uses the same choice function and random stream as the ``FcfsLLF`` planner; driven through
the env with the same seed it reproduces the planner's assignment (tested).

Importing this module registers both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_agents.heuristics.edge.ilp import (
    SolverConfig,
    baseline_ilp_schedule,
    membatch_schedule,
)
from gpu_sched_agents.heuristics.edge.llf import LLFConfig, fcfs_llf_schedule, llf_pick, top_k
from gpu_sched_agents.heuristics.env_agent import EnvAgent
from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.core.rng import stream
from gpu_sched_env.edge.env import EdgeDecision, obs_slices
from gpu_sched_env.edge.model import Cluster, EdgeProblem
from gpu_sched_env.edge.plan import Plan
from gpu_sched_env.edge.policies import PLANNERS as PLANNER_REGISTRY
from gpu_sched_env.edge.policies import POLICIES as REGISTRY

LLF_STREAM = "fcfs_llf"  # name of the policy RNG stream: stream(seed, LLF_STREAM)


class EdgePlanner:
    """Base class: a planner plans the whole workload at once (:class:`~gpu_sched_env.core.policy.Planner`)."""

    name = "base"

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """Return a plan for every task of ``problem``; ``rng`` is the run's planner stream."""
        raise NotImplementedError


class _ILPPlanner(EdgePlanner):
    """Planners that plan in CP-SAT rounds with ``plan_fn(tasks, cluster, solver, threshold, split)``.

    All planners split tasks above the threshold (default: smallest device memory), as in
    the study; ``split=False`` is an ablation. Deterministic: ``rng`` is not used.
    """

    plan_fn = staticmethod(membatch_schedule)

    def __init__(
        self, solver: SolverConfig | None = None, split_threshold_gb: float | None = None, split: bool = True
    ) -> None:
        self.solver = solver or SolverConfig()
        self.split_threshold_gb = split_threshold_gb
        self.split = bool(split)

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """Plan every task of ``problem`` with this planner's ILP rounds."""
        return self.plan_fn(problem.tasks, problem.cluster, self.solver, self.split_threshold_gb, self.split)


class MemBatchILP(_ILPPlanner):
    """MemBatch: memory-aware batching, task splitting, per-batch makespan ILP rounds."""

    name = "membatch"
    plan_fn = staticmethod(membatch_schedule)


class BaselineILP(_ILPPlanner):
    """Baseline ILP: splitting, rounds minimising total computation time (no batching, no GPU-share sum)."""

    name = "baseline_ilp"
    plan_fn = staticmethod(baseline_ilp_schedule)


class FcfsLLF(EdgePlanner):
    """FCFS – Least Loaded First (Ray's default placement): locality, then utilisation, random in top k."""

    name = "fcfs_llf"

    def __init__(
        self,
        cfg: LLFConfig | None = None,
        split_threshold_gb: float | None = None,
        split: bool = True,
    ) -> None:
        self.cfg = cfg or LLFConfig()
        self.split_threshold_gb = split_threshold_gb
        self.split = bool(split)

    def plan(self, problem: EdgeProblem, rng: np.random.Generator | None = None) -> Plan:
        """Plan with :func:`~gpu_sched_agents.heuristics.edge.llf.fcfs_llf_schedule`.

        ``rng`` (e.g. ``stream(seed, LLF_STREAM)``) is required.
        """
        if rng is None:
            raise ValueError("FcfsLLF.plan needs the run's random stream: plan(problem, stream(seed, 'fcfs_llf'))")
        return fcfs_llf_schedule(problem.tasks, problem.cluster, rng, self.cfg, self.split_threshold_gb, self.split)


PLANNERS: dict[str, type[EdgePlanner]] = {c.name: c for c in (MemBatchILP, BaselineILP, FcfsLLF)}
for _name, _cls in PLANNERS.items():
    PLANNER_REGISTRY.register(_name, _cls)


def make_planner(name: str, **knobs: Any) -> EdgePlanner:
    """A registered planner by name (``PLANNERS.make(name, **knobs)``)."""
    return PLANNER_REGISTRY.make(name, **knobs)


# ---- env policies and agents --------------------------------------------------------------
class _EnvPolicy:
    """Base of the env policies: ``reset(cluster, rng)`` keeps the run's stream; ``decide(decision)``."""

    name = "base"

    def __init__(self) -> None:
        self.rng: np.random.Generator | None = None

    def reset(self, cluster: Cluster | None, rng: np.random.Generator) -> None:
        """Start a run on ``cluster`` with the run's policy stream (``stream(seed, LLF_STREAM)``)."""
        self.rng = rng

    def _rng(self) -> np.random.Generator:
        if self.rng is None:
            raise RuntimeError(f"{type(self).__name__}.decide: call reset(cluster, rng) first")
        return self.rng

    def decide(self, d: EdgeDecision) -> int:
        """The device for the current task."""
        raise NotImplementedError


class LLFPolicy(_EnvPolicy):
    """FCFS-LLF, one task at a time: locality, then low utilisation, random among the top k (as :class:`FcfsLLF`).

    Knobs: the :class:`~gpu_sched_agents.heuristics.edge.llf.LLFConfig` fields.
    """

    name = "fcfs_llf"

    def __init__(
        self,
        fraction: float = LLFConfig.fraction,
        minimum: int = LLFConfig.minimum,
        utilisation: str = LLFConfig.utilisation,
        spread_threshold: float = LLFConfig.spread_threshold,
        ties: str = LLFConfig.ties,
    ) -> None:
        super().__init__()
        self.cfg = LLFConfig(fraction, minimum, utilisation, spread_threshold, ties)  # validates

    def decide(self, d: EdgeDecision) -> int:
        cfg = self.cfg
        util = d.util if cfg.utilisation == "share" else d.load_h
        k = top_k(len(d.fits), cfg.fraction, cfg.minimum)
        return llf_pick(util, d.local, d.fits, k, self._rng(), cfg.spread_threshold, cfg.ties)


class RandomPolicy(_EnvPolicy):
    """Uniform over the devices with room (the legal actions)."""

    name = "random"

    def decide(self, d: EdgeDecision) -> int:
        legal = np.flatnonzero(d.fits)
        return int(legal[self._rng().integers(len(legal))])


POLICIES: dict[str, type[_EnvPolicy]] = {c.name: c for c in (LLFPolicy, RandomPolicy)}
for _name, _cls in POLICIES.items():
    REGISTRY.register(_name, _cls)


class HeuristicAgent(EnvAgent):
    """A fixed ``EdgeBatch-v0`` agent: ``HeuristicAgent(name, env, seed=0, **knobs)``.

    Args:
        name: a registered env policy (:data:`gpu_sched_env.edge.policies.POLICIES`:
            ``fcfs_llf``, ``random`` or ``mct``).
        env: the env it drives (single, or vectorised with identical clusters); gives the
            number of devices, hence the observation layout.
        seed: seeds the policy's random stream ``stream(seed, LLF_STREAM)``; give the seed
            of the env's ``reset`` to replay ``FcfsLLF`` with that seed. Re-seed between
            episodes with :meth:`set_random_seed` (as on an SB3 model).
        **knobs: the policy's knobs (for ``fcfs_llf`` the
            :class:`~gpu_sched_agents.heuristics.edge.llf.LLFConfig` fields).
    """

    def __init__(self, name: str, env: Any = None, seed: int = 0, **knobs: Any) -> None:
        super().__init__(check_choice("agent", name, REGISTRY.names()), env)
        self.policy = REGISTRY.make(name, **knobs)
        self._slice_map: dict[str, slice] | None = None
        self._cluster: Cluster | None = None
        self.set_random_seed(seed)

    def set_random_seed(self, seed: int) -> None:
        """Restart the policy's run: ``reset(cluster, stream(seed, LLF_STREAM))``."""
        self.policy.reset(self._cluster, stream(seed, LLF_STREAM))

    def _slices(self) -> dict[str, slice]:
        if self._slice_map is None:
            env = self._bound_env()
            if hasattr(env, "get_attr"):  # SB3 VecEnv or Gymnasium VectorEnv
                self._cluster = env.get_attr("cluster")[0]
            else:
                self._cluster = env.unwrapped.cluster
            self._slice_map = obs_slices(self._cluster.n)
        return self._slice_map

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[Any, Any]:
        """SB3-style: one action per observation (a single obs or a batch of them)."""
        s = self._slices()
        obs = np.asarray(observation, dtype=np.float32)
        view = getattr(self.policy, "view_type", EdgeDecision)  # a policy may read more blocks (MCTPolicy)
        if obs.ndim == 1:
            return np.int64(self.policy.decide(view.from_obs(obs, s))), state
        return np.array([self.policy.decide(view.from_obs(o, s)) for o in obs], dtype=np.int64), state


# the strong rules (HEFT, min-min, max-min, sufferage, MCT, LP rounding, best_rule, local_search) and the MCT
# env policy register themselves; imported last because they build on the classes above
from gpu_sched_agents.heuristics.edge import strong  # noqa: E402

__all__ = [
    "LLF_STREAM",
    "PLANNERS",
    "POLICIES",
    "BaselineILP",
    "EdgePlanner",
    "FcfsLLF",
    "HeuristicAgent",
    "LLFPolicy",
    "MemBatchILP",
    "RandomPolicy",
    "make_planner",
    "strong",
]
