"""The one config object of ``EdgeBatch-v0``: every env setting, its default and its checks.

``EdgeBatchEnv(config)`` or ``gym.make("EdgeBatch-v0", n_tasks=..., ...)`` (the keywords build
an :class:`EdgeBatchEnvConfig`). Checked once, in ``__post_init__``; stored normalised (the
profile table loaded, the splitting threshold resolved, every reward weight filled in), so
``dataclasses.replace`` on a config checks again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
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
from gpu_sched_env.edge.model import Cluster, jetson_cluster
from gpu_sched_env.edge.profiles import ProfileTable, default_profiles, load_profiles
from gpu_sched_env.edge.workload import random_workloads

REWARD_PARTS = ("makespan",)
DEFAULT_WEIGHTS = {"makespan": 1.0}
# [GB] the splitting threshold's range. A shard is a task of its own (one step, one device slot)
# and a task splits into about mem / threshold shards, so 0.1 GB bounds the 1-16 GB tasks of the
# default profiles at 160 shards; 1e6 GB (a petabyte, beyond any device) means "never split".
MIN_SPLIT_GB, MAX_SPLIT_GB = 0.1, 1e6
# [s] seconds per reward unit: a reward is a makespan increase over it, so with a makespan of at
# most a few years of seconds it stays finite (and a normal float32) anywhere in this range.
MIN_REWARD_SCALE_S, MAX_REWARD_SCALE_S = 1e-3, 1e9
# the workload mix's weights are relative; at most 1e9 each, their sum stays finite
MAX_MIX_WEIGHT = 1e9


@dataclass(frozen=True, eq=False)
class EdgeBatchEnvConfig:
    """Settings of ``EdgeBatch-v0`` (the env's docstring, *Arguments*, explains each one).

    Attributes:
        n_tasks: training tasks per episode, in [1, 1e6] (``core.envconfig.MAX_EPISODE_ITEMS``).
        include_head: whether the head Orin NX runs tasks too (False: it only schedules).
        split: whether tasks above the splitting threshold are split into shards.
        split_threshold_gb: the splitting threshold [GB], in [0.1, 1e6] (:data:`MIN_SPLIT_GB`,
            :data:`MAX_SPLIT_GB`; ``None``: the smallest device memory; stored resolved).
        profiles: the profile table: ``None`` (the default table), a CSV/YAML path or a
            ``ProfileTable`` (stored loaded).
        mix: workload weights ``{name: weight}`` of the random workloads (``None``: uniform),
            each in [0, 1e9] (:data:`MAX_MIX_WEIGHT`); every name must have rows in the profile table.
        reward_scale_s: seconds per reward unit, in [1e-3, 1e9] (:data:`MIN_REWARD_SCALE_S`,
            :data:`MAX_REWARD_SCALE_S`).
        reward_weights: per-part weights over ``makespan`` (in [0, 1e9],
            ``core.envconfig.MAX_REWARD_WEIGHT``; default 1).
        illegal_action: what a device the mask forbids does: ``substitute`` (the lowest device
            with room for the task) or ``raise`` (``InvalidActionError``).
    """

    n_tasks: int = 20
    include_head: bool = False
    split: bool = True
    split_threshold_gb: float | None = None
    profiles: str | os.PathLike | ProfileTable | None = None
    mix: Mapping[str, float] | None = None
    reward_scale_s: float = 3600.0
    reward_weights: Mapping[str, float] = field(default_factory=dict)
    illegal_action: IllegalAction = DEFAULT_ILLEGAL_ACTION

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        check_illegal_action(self.illegal_action)
        set_(self, "n_tasks", int(check_number("n_tasks", self.n_tasks, lo=1, hi=MAX_EPISODE_ITEMS, integer=True)))
        for name in ("include_head", "split"):
            flag = getattr(self, name)
            if not isinstance(flag, (bool, np.bool_)):
                raise ConfigError(f"{name} = {flag!r} is not allowed; allowed: True or False")
            set_(self, name, bool(flag))
        cluster = self.cluster
        set_(
            self,
            "split_threshold_gb",
            cluster.min_mem_gb
            if self.split_threshold_gb is None
            else float(check_number("split_threshold_gb", self.split_threshold_gb, lo=MIN_SPLIT_GB, hi=MAX_SPLIT_GB)),
        )
        set_(self, "profiles", _profile_table(self.profiles))
        if self.mix is not None:
            if not isinstance(self.mix, Mapping):
                raise ConfigError(
                    f"mix = {short(self.mix)} is not allowed; allowed: None or a mapping {{workload name: weight}}"
                )
            set_(self, "mix", dict(self.mix))
            check_workload_names("mix", self.mix, self.profiles)
            for name, w in self.mix.items():
                check_number(name, w, lo=0.0, hi=MAX_MIX_WEIGHT, section="mix")
            random_workloads(1, np.random.default_rng(0), self.mix)  # its weight checks now, not at the first reset
        scale_s = check_number("reward_scale_s", self.reward_scale_s, lo=MIN_REWARD_SCALE_S, hi=MAX_REWARD_SCALE_S)
        set_(self, "reward_scale_s", float(scale_s))
        set_(
            self, "reward_weights", check_weights("reward_weights", self.reward_weights, REWARD_PARTS, DEFAULT_WEIGHTS)
        )

    @property
    def cluster(self) -> Cluster:
        """The Jetson cluster of ``include_head``."""
        return jetson_cluster(include_head=bool(self.include_head))

    def replace(self, **kwargs: Any) -> EdgeBatchEnvConfig:
        """A copy with some settings changed (checked again)."""
        return dataclasses.replace(self, **kwargs)


def _profile_table(profiles: Any) -> ProfileTable:
    """The profile table, or a ConfigError naming the keyword, the value and what is allowed."""
    allowed = "allowed: None (the default table), a path to an existing .csv/.yaml/.yml table, or a ProfileTable"
    if profiles is None:
        return default_profiles()
    if isinstance(profiles, ProfileTable):
        return profiles
    if not isinstance(profiles, (str, os.PathLike)):
        raise ConfigError(f"profiles = {short(profiles)} ({type(profiles).__name__}) is not allowed; {allowed}")
    try:
        return load_profiles(profiles)
    except ConfigError as e:
        raise ConfigError(f"profiles = {short(profiles)}: {e}; {allowed}") from None


def check_workload_names(field_name: str, names: Iterable[str], table: ProfileTable) -> None:
    """Raise unless every name has rows in the profile table (a typo would run on the table average)."""
    unknown = [n for n in names if n not in table.workloads]
    if unknown:
        raise ConfigError(
            f"{field_name} = {names!r}: workload(s) {', '.join(map(repr, unknown))} not in the profile "
            f"table {table.source}; allowed: {', '.join(table.workloads)}"
        )


__all__ = [
    "DEFAULT_WEIGHTS",
    "MAX_MIX_WEIGHT",
    "MAX_REWARD_SCALE_S",
    "MAX_SPLIT_GB",
    "MIN_REWARD_SCALE_S",
    "MIN_SPLIT_GB",
    "REWARD_PARTS",
    "EdgeBatchEnvConfig",
    "check_workload_names",
]
