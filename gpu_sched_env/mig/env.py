"""Gymnasium adapter over :class:`gpu_sched_env.mig.sim.PlacementSim` (no logic of its own)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gpu_sched_env.core.errors import ConfigError, InvalidActionError, check_keys
from gpu_sched_env.core.spaces import MaskedDiscrete
from gpu_sched_env.mig.generator import generate, load_config
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES, Job, check_capacities, check_poll
from gpu_sched_env.mig.sim import PlacementSim, PlacementState
from gpu_sched_env.mig.workload import MIG_EXPERIMENT_CONFIG, to_mig_jobs

REWARD_PARTS = ("makespan", "deadline")
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
    ``Discrete(m + 1)`` (its ``sample()`` draws legal actions only): ``i < m`` = instance ``i``; ``m`` = defer. Legal actions are in
    ``info["action_mask"]`` and :meth:`action_masks`: instances whose memory holds the job's
    peak, and defer while more jobs are still to come. A forbidden action raises
    :class:`~gpu_sched_env.core.errors.InvalidActionError`.

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
    Named parts, weighted by ``reward_weights`` and returned in ``info["reward_parts"]``:
    ``makespan`` = −(increase of the planned makespan max(free) by this action) [min]
    (the episode's sum is −makespan); ``deadline`` = −1 when the placed job will finish
    after its deadline. Defaults ``{"makespan": 1.0, "deadline": 0.0}``.

    ## Starting State
    A new data set (seeded from ``np_random``) or the fixed ``jobs``; the first decision is
    the first job taken at the first poll.

    ## Episode End
    Terminates when the last job is placed (defer is forbidden once no job is still to
    come, so every episode ends). No truncation.

    ## Arguments
    ``jobs`` (fixed list of :class:`Job`, optional), ``config`` (generator config mapping,
    default Part B), ``n_jobs`` (override its numberOfJobs), ``capacities``,
    ``poll_interval`` [min], ``reward_weights``.

    ## Version History
    * v0: initial version.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        jobs: Sequence[Job] | None = None,
        config: Mapping[str, Any] | None = None,
        n_jobs: int | None = None,
        capacities: Sequence[int] = DEFAULT_CAPACITIES,
        poll_interval: int = 1,
        reward_weights: Mapping[str, float] | None = None,
    ) -> None:
        self.capacities = check_capacities(capacities)
        self.poll_interval = check_poll(poll_interval)
        self.fixed_jobs = list(jobs) if jobs is not None else None
        self.gen_config = load_config(dict(config or MIG_EXPERIMENT_CONFIG))
        self.n_jobs = n_jobs
        weights = {"makespan": 1.0, "deadline": 0.0, **dict(reward_weights or {})}
        check_keys(weights, REWARD_PARTS, section="reward_weights keys")
        self.reward_weights = {k: float(v) for k, v in weights.items()}
        m = len(self.capacities)
        self.action_space = MaskedDiscrete(m + 1, self.action_masks)
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
        """Legal actions (all False once the episode is over)."""
        if self._state is None:
            return np.zeros(self.action_space.n, dtype=bool)
        return self._state.mask()

    def decision_state(self) -> PlacementState:
        """The simulator's current decision (what baseline agents read)."""
        if self._state is None:
            raise InvalidActionError("no decision pending: call reset()")
        return self._state

    def _info(self, parts: Mapping[str, float] | None = None) -> dict[str, Any]:
        assert self.sim is not None
        return {
            "action_mask": self.action_masks(),
            "reward_parts": dict(parts or {}),
            "time": self.sim.t,
            "planned_makespan": max(self.sim.free),
            "skipped": list(self.sim.skipped),
        }

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Draw a data set (or take the fixed jobs) and return the first decision."""
        super().reset(seed=seed)
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
        return self._obs(), self._info()

    def step(self, action: Any):
        """Apply one placement or deferral."""
        if self.sim is None or self._state is None:
            raise InvalidActionError("episode is over or not started: call reset()")
        job = self._state.job
        before = max(self.sim.free)
        self._state = self.sim.step(int(action))
        parts = {"makespan": -float(max(self.sim.free) - before), "deadline": 0.0}
        if job.id in self.sim.placed and job.deadline >= 0:
            _, start = self.sim.placed[job.id]
            parts["deadline"] = -1.0 if start + job.length > job.deadline else 0.0
        reward = sum(self.reward_weights[k] * v for k, v in parts.items())
        terminated = self._state is None
        return self._obs(), float(reward), terminated, False, self._info(parts)
