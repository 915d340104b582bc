"""The one config object of ``HGSP-v0``: every env setting, its default and its checks.

``HGSPEnv(config)`` or ``gym.make("HGSP-v0", tasks=..., cluster=...)`` (the keywords build an
:class:`HGSPEnvConfig`). Checked once, in ``__post_init__``; the stored values are the
normalised ones (a task set resolved from a CSV or table, the cluster built, the order a tuple,
every reward weight filled in), so ``dataclasses.replace`` on a config checks again.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from gpu_sched_env.core.envconfig import MAX_EPISODE_ITEMS, check_weights, short
from gpu_sched_env.core.errors import (
    DEFAULT_ILLEGAL_ACTION,
    ConfigError,
    IllegalAction,
    check_choice,
    check_illegal_action,
    check_number,
)
from gpu_sched_env.hgsp.model import TASK_COLUMNS, Cluster, TaskSet, make_cluster
from gpu_sched_env.hgsp.sim import DECODERS
from gpu_sched_env.hgsp.workload import PRESETS, resolve_tasks

REWARD_PARTS = ("tardiness", "flow")
DEFAULT_WEIGHTS = {"tardiness": 1.0, "flow": 0.0}
Decoder = Literal["list", "release"]


@dataclass(frozen=True, eq=False)
class HGSPEnvConfig:
    """Settings of ``HGSP-v0`` (the env's docstring, *Arguments*, explains each one).

    Attributes:
        tasks: a preset name (a new task set drawn at each reset), or a fixed task set: a CSV
            path, a DataFrame with the columns of ``TASK_COLUMNS`` or a ``TaskSet`` (stored
            resolved, as a ``TaskSet``).
        cluster: ``"small"``, ``"medium"``, ``"large"``, ``{model: count}`` or a ``Cluster``
            (stored built).
        n_tasks: preset size override (only with a preset name), in [1, 1e6]
            (``core.envconfig.MAX_EPISODE_ITEMS``: the simulator's arrays are O(n_tasks)).
        order: priority list for a fixed task set, a permutation of its task indices (stored
            as a tuple); ``None`` = arrival order.
        decoder: how ``order`` is decoded, ``list`` (strictly in list order) or ``release``.
        reward_weights: per-part weights over ``tardiness`` and ``flow`` (each in [0, 1e9],
            ``core.envconfig.MAX_REWARD_WEIGHT``, so rewards stay finite; stored with the
            defaults tardiness 1, flow 0 filled in).
        illegal_action: what a GPU the mask forbids does: ``substitute`` (the lowest fitting GPU)
            or ``raise`` (``InvalidActionError``).
    """

    tasks: str | os.PathLike | pd.DataFrame | TaskSet = "tasks1"
    cluster: str | Mapping[str, int] | Cluster = "small"
    n_tasks: int | None = None
    order: Sequence[int] | None = None
    decoder: Decoder = "list"
    reward_weights: Mapping[str, float] = field(default_factory=dict)
    illegal_action: IllegalAction = DEFAULT_ILLEGAL_ACTION

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        check_illegal_action(self.illegal_action)
        check_choice("decoder", self.decoder, DECODERS, "HGSP-v0")
        if self.n_tasks is not None:
            if not self.is_preset:
                raise ConfigError(f"n_tasks = {self.n_tasks!r}: only allowed with a preset name for tasks")
            set_(self, "n_tasks", int(check_number("n_tasks", self.n_tasks, lo=1, hi=MAX_EPISODE_ITEMS, integer=True)))
        if not self.is_preset:
            set_(self, "tasks", _fixed_tasks(self.tasks))
        if self.order is not None:
            if self.is_preset:
                raise ConfigError("order: only allowed with a fixed task set (CSV, DataFrame or TaskSet)")
            set_(self, "order", _check_order(self.order, len(self.tasks.workload)))
        set_(self, "cluster", make_cluster(self.cluster))
        set_(
            self, "reward_weights", check_weights("reward_weights", self.reward_weights, REWARD_PARTS, DEFAULT_WEIGHTS)
        )

    @property
    def is_preset(self) -> bool:
        """Whether ``tasks`` names a preset (a fresh task set per episode)."""
        return isinstance(self.tasks, str) and self.tasks in PRESETS

    @property
    def serial(self) -> bool:
        """The simulator's flag for ``decoder`` (True: strictly in list order)."""
        return DECODERS[self.decoder]

    def replace(self, **kwargs: Any) -> HGSPEnvConfig:
        """A copy with some settings changed (checked again)."""
        return dataclasses.replace(self, **kwargs)


def _fixed_tasks(tasks: Any) -> TaskSet:
    """A fixed task set, or a ConfigError naming the keyword, the value and what is allowed."""
    allowed = (
        f"allowed: a preset name ({', '.join(PRESETS)}), a CSV path, or a DataFrame or TaskSet with the "
        f"columns {', '.join(TASK_COLUMNS)} and at least one task"
    )
    if not isinstance(tasks, (str, os.PathLike, pd.DataFrame, TaskSet)):
        raise ConfigError(f"tasks = {short(tasks)} ({type(tasks).__name__}) is not allowed; {allowed}")
    if isinstance(tasks, pd.DataFrame) and tasks.empty:
        raise ConfigError(f"tasks = {short(tasks)} is empty; {allowed}")
    try:
        return resolve_tasks(tasks)
    except ConfigError as e:
        msg = str(e)
        raise ConfigError(
            msg if msg.startswith(f"tasks = {tasks!r}") else f"tasks = {short(tasks)}: {msg}; {allowed}"
        ) from None


def _check_order(order: Any, n: int) -> tuple[int, ...]:
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or sorted(arr.tolist()) != list(range(n)):
        raise ConfigError(
            f"order = {order!r} is not allowed; allowed: a permutation of the task indices 0..{n - 1} (each index once)"
        )
    return tuple(int(i) for i in arr)


__all__ = ["DEFAULT_WEIGHTS", "REWARD_PARTS", "Decoder", "HGSPEnvConfig"]
