"""The one config object of ``LLMServe-v0``: every env setting, its default and its checks.

``LLMServeEnv(config)`` or ``gym.make("LLMServe-v0", workload=..., engine=...)`` (the keywords
build an :class:`LLMServeEnvConfig`). Checked once, in ``__post_init__``; a fixed workload is
stored resolved (a :class:`~gpu_sched_env.llm.model.Workload`), so ``dataclasses.replace`` on a
config checks again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from gpu_sched_env.core.envconfig import MAX_EPISODE_ITEMS, short
from gpu_sched_env.core.errors import (
    DEFAULT_ILLEGAL_ACTION,
    ConfigError,
    IllegalAction,
    check_illegal_action,
    check_number,
)
from gpu_sched_env.llm.model import WORKLOADS, Workload, make_cluster, mixed, resolve_workload
from gpu_sched_env.llm.sim import LLMSim

Engine = Literal["discrete", "event"]
DEFAULT_N_REQUESTS = 50
# [s] the discrete engine's step, in [MIN_DT, MAX_DT]. The engine visits every step until the last
# request ends (a Python loop), so its cost is the horizon over dt: 1 ms is a tenth of the
# reference's 0.01 s (the grid the generated arrivals lie on), an hour is far beyond any
# request's run time (every request of a step starts at its end).
MIN_DT = 1e-3
MAX_DT = 3600.0


@dataclass(frozen=True, eq=False)
class LLMServeEnvConfig:
    """Settings of ``LLMServe-v0`` (the env's docstring, *Arguments*, explains each one).

    Attributes:
        workload: ``"mixed"`` (a new request set drawn at each reset), or a fixed workload:
            ``"discriminating"``, a ``Workload`` or a request DataFrame (stored resolved, as a
            ``Workload``).
        engine: ``discrete`` (the reference, steps of ``dt``) or ``event``.
        dt: the discrete engine's step [s], in [1e-3, 3600] (:data:`MIN_DT`, :data:`MAX_DT`).
        n_requests: requests of ``"mixed"`` (only with it), in [1, 1e6]
            (``core.envconfig.MAX_EPISODE_ITEMS``).
        cluster: ``{GPU type: count}`` of a request table (only with one).
        illegal_action: what a request the mask forbids does: ``substitute`` (the lowest-index
            startable request starts) or ``raise`` (``InvalidActionError``).
    """

    workload: str | Workload | pd.DataFrame = "mixed"
    engine: Engine = "discrete"
    dt: float = 0.01
    n_requests: int = DEFAULT_N_REQUESTS
    cluster: Mapping[str, int] | None = None
    illegal_action: IllegalAction = DEFAULT_ILLEGAL_ACTION

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        check_illegal_action(self.illegal_action)
        set_(
            self,
            "n_requests",
            int(check_number("n_requests", self.n_requests, lo=1, hi=MAX_EPISODE_ITEMS, integer=True)),
        )
        check_number("dt", self.dt, lo=MIN_DT, hi=MAX_DT)
        if not self.is_random and self.n_requests != DEFAULT_N_REQUESTS:
            raise ConfigError(f"n_requests = {self.n_requests!r}: only allowed with workload='mixed'")
        if self.cluster is not None:
            make_cluster(self.cluster)  # its own errors first: a bad count or GPU type names itself
            if not isinstance(self.workload, pd.DataFrame):
                raise ConfigError(
                    f"cluster = {self.cluster!r}: only allowed with a request table (DataFrame) as the "
                    f"workload; workload {short(self.workload)} fixes its own cluster"
                )
        if not self.is_random:
            set_(self, "workload", _fixed_workload(self.workload, self.cluster))
            set_(self, "cluster", None)  # it is in the resolved workload now
        LLMSim(self.fixed or mixed(0, self.n_requests), self.dt, self.engine)  # checks engine and dt

    @property
    def is_random(self) -> bool:
        """Whether each reset draws a new ``mixed`` request set."""
        return isinstance(self.workload, str) and self.workload == "mixed"

    @property
    def fixed(self) -> Workload | None:
        """The fixed workload, or None for ``mixed``."""
        return None if self.is_random else self.workload

    def replace(self, **kwargs: Any) -> LLMServeEnvConfig:
        """A copy with some settings changed (checked again)."""
        return dataclasses.replace(self, **kwargs)


def _fixed_workload(workload: Any, cluster: Mapping[str, int] | None) -> Workload:
    """A fixed workload, or a ConfigError naming the keyword, the value and what is allowed."""
    allowed = (
        f"allowed: {', '.join(repr(w) for w in WORKLOADS)}, a Workload, or a request DataFrame with at "
        "least one request"
    )
    if not isinstance(workload, (str, Workload, pd.DataFrame)):
        raise ConfigError(f"workload = {short(workload)} ({type(workload).__name__}) is not allowed; {allowed}")
    if isinstance(workload, pd.DataFrame) and workload.empty:
        raise ConfigError(f"workload = {short(workload)} is empty; {allowed}")
    try:
        return resolve_workload(workload, 0, cluster)
    except ConfigError as e:
        msg = str(e)
        raise ConfigError(
            msg if msg.startswith("workload = ") else f"workload = {short(workload)}: {msg}; {allowed}"
        ) from None


__all__ = ["DEFAULT_N_REQUESTS", "MAX_DT", "MIN_DT", "Engine", "LLMServeEnvConfig"]
