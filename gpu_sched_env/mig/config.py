"""The one config object of ``MIG-v0``: every env setting, its default and its checks.

``MIGEnv(config)`` or ``gym.make("MIG-v0", n_jobs=20, ...)`` (the keywords build a
:class:`MIGEnvConfig`). Checked once, in ``__post_init__``; stored normalised (capacities and
jobs as tuples, the generator config parsed, every reward weight filled in), so
``dataclasses.replace`` on a config checks again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpu_sched_env.core.envconfig import MAX_EPISODE_ITEMS, check_weights, short
from gpu_sched_env.core.errors import (
    DEFAULT_ILLEGAL_ACTION,
    ConfigError,
    IllegalAction,
    check_illegal_action,
    check_number,
)
from gpu_sched_env.mig.generator import GeneratorConfig, load_config
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES, Job, check_capacities, check_poll
from gpu_sched_env.mig.workload import MIG_EXPERIMENT_CONFIG

REWARD_PARTS = ("makespan", "deadline")
DEFAULT_WEIGHTS = {"makespan": 1.0, "deadline": 0.0}


@dataclass(frozen=True, eq=False)
class MIGEnvConfig:
    """Settings of ``MIG-v0`` (the env's docstring, *Arguments*, explains each one).

    Attributes:
        jobs: a fixed, non-empty sequence of :class:`~gpu_sched_env.mig.model.Job` (the same
            every episode; stored as a tuple), or ``None``: a generated data set per episode.
        generator: the generator config of the data sets (a mapping in the Java tool's
            format or a parsed ``GeneratorConfig``; default: the spec's Part B preset).
        n_jobs: override of the generator's ``numberOfJobs``, in [1, 1e6]; the generator's own
            count must lie there too (``core.envconfig.MAX_EPISODE_ITEMS``).
        capacities: memory of each MIG instance [MB], each in [1, 1e7] (``model.MAX_CAPACITY_MB``;
            stored as a tuple).
        poll_interval: minutes between polls, in [1, 1e6] (``model.MAX_POLL_MIN``).
        reward_weights: per-part weights over ``makespan`` and ``deadline`` (each in [0, 1e9],
            ``core.envconfig.MAX_REWARD_WEIGHT``; stored with the defaults makespan 1, deadline 0
            filled in).
        illegal_action: what an action the mask forbids does: ``substitute`` (defer where
            legal, else the lowest instance that holds the job) or ``raise`` (``InvalidActionError``).
    """

    jobs: Sequence[Job] | None = None
    generator: Mapping[str, Any] | GeneratorConfig | None = None
    n_jobs: int | None = None
    capacities: Sequence[int] = DEFAULT_CAPACITIES
    poll_interval: int = 1
    reward_weights: Mapping[str, float] = field(default_factory=dict)
    illegal_action: IllegalAction = DEFAULT_ILLEGAL_ACTION

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        check_illegal_action(self.illegal_action)
        caps = self.capacities
        if isinstance(caps, np.ndarray) and caps.ndim == 1:
            caps = caps.tolist()  # a 1-D array is a sequence too (entries still checked below)
        if isinstance(caps, (str, bytes)) or not isinstance(caps, Sequence):
            raise ConfigError(
                f"capacities = {short(caps)} is not allowed; allowed: a sequence of instance memories [MB]"
            )
        set_(self, "capacities", tuple(check_capacities(caps)))
        set_(self, "poll_interval", check_poll(self.poll_interval))
        if self.jobs is not None:
            set_(self, "jobs", _fixed_jobs(self.jobs))
        gen = self.generator
        if gen is None:
            gen = MIG_EXPERIMENT_CONFIG
        if not isinstance(gen, (Mapping, GeneratorConfig)):
            raise ConfigError(
                f"generator = {short(gen)} is not allowed; allowed: a generator config mapping, a "
                "GeneratorConfig, or None (the Part B preset)"
            )
        set_(self, "generator", gen if isinstance(gen, GeneratorConfig) else load_config(dict(gen)))
        if self.n_jobs is not None:
            set_(self, "n_jobs", int(check_number("n_jobs", self.n_jobs, lo=1, hi=MAX_EPISODE_ITEMS, integer=True)))
        elif self.jobs is None:  # the generator's own count is what an episode draws
            check_number("generator.numberOfJobs", self.generator.n_jobs, lo=1, hi=MAX_EPISODE_ITEMS, integer=True)
        set_(
            self, "reward_weights", check_weights("reward_weights", self.reward_weights, REWARD_PARTS, DEFAULT_WEIGHTS)
        )

    def replace(self, **kwargs: Any) -> MIGEnvConfig:
        """A copy with some settings changed (checked again)."""
        return dataclasses.replace(self, **kwargs)


def _fixed_jobs(jobs: Any) -> tuple[Job, ...]:
    """The fixed jobs, or a ConfigError naming the keyword, the value and what is allowed."""
    allowed = "allowed: a non-empty sequence of gpu_sched_env.mig.model.Job, or None (a generated data set per episode)"
    if not isinstance(jobs, Sequence) or isinstance(jobs, (str, bytes)):
        raise ConfigError(f"jobs = {short(jobs)} ({type(jobs).__name__}) is not allowed; {allowed}")
    if len(jobs) == 0:
        raise ConfigError(f"jobs = {short(jobs)} is empty; {allowed}")
    bad = [i for i, j in enumerate(jobs) if not isinstance(j, Job)]
    if bad:
        raise ConfigError(f"jobs = {short(jobs)}: entry {bad[0]} is a {type(jobs[bad[0]]).__name__}; {allowed}")
    return tuple(jobs)


__all__ = ["DEFAULT_WEIGHTS", "REWARD_PARTS", "MIGEnvConfig"]
