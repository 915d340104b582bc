"""The eleven CGRSP heuristics as fixed agents on :class:`~gpu_sched_env.cgrsp.env.CGRSPEnv`.

:class:`HeuristicAgent` has the Stable-Baselines3 ``predict`` signature, so one evaluation
path (:func:`gpu_sched_env.cgrsp.evaluation.evaluate`) serves heuristics and trained models.
The agent asks the env for the named policy's action (``CGRSPEnv.heuristic_action``): the
policy's plan for the current decision point, one assignment per step, then *wait*. With a
window at least as large as the queue this reproduces ``simulate(name, day, seed)`` job for
job; with a smaller window see ``CGRSPEnv.heuristic_action`` for the rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from agents.heuristics.cgrsp import ALL_POLICY_NAMES, POLICY_NAMES
from gpu_sched_env.core.errors import check_choice


class HeuristicAgent:
    """A named CGRSP heuristic behind ``predict(obs, state, episode_start, deterministic)``.

    Args:
        name: one of :data:`agents.heuristics.cgrsp.POLICY_NAMES`.
        env: a CGRSP env (possibly wrapped), a Gymnasium ``VectorEnv`` or an SB3 ``VecEnv``
            of them; may be given later with :meth:`bind`.
        fallback: what to do when the window is smaller than the queue and no planned job
            is in it: ``"substitute"`` (the window's first job on the planned slot) or
            ``"wait"`` (see ``CGRSPEnv.heuristic_action``).
    """

    def __init__(self, name: str, env: Any = None, fallback: str = "substitute") -> None:
        from gpu_sched_env.cgrsp.env import HEURISTIC_FALLBACKS

        self.name = check_choice("policy", name, ALL_POLICY_NAMES)
        self.fallback = check_choice("fallback", fallback, HEURISTIC_FALLBACKS)
        self.env = env

    def bind(self, env: Any) -> HeuristicAgent:
        """Drive ``env`` from now on; returns ``self``."""
        self.env = env
        return self

    def predict(
        self,
        observation: Any = None,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[Any, Any]:
        """The heuristic's action for the env's current state (the observation is not needed).

        Returns ``(action, state)``: an ``np.int64`` for a single env, an ``int64`` array of
        shape ``(n_envs,)`` for a vectorised one; ``state`` is passed through.
        """
        env = self.env
        if env is None:
            raise RuntimeError(f"HeuristicAgent({self.name!r}) has no env: pass env= or call bind(env)")
        if hasattr(env, "env_method"):  # SB3 VecEnv
            return np.asarray(env.env_method("heuristic_action", self.name, self.fallback), np.int64), state
        if hasattr(env, "num_envs") and hasattr(env, "call"):  # Gymnasium VectorEnv
            return np.asarray(env.call("heuristic_action", self.name, self.fallback), np.int64), state
        return np.int64(env.unwrapped.heuristic_action(self.name, self.fallback)), state

    def __repr__(self) -> str:
        return f"HeuristicAgent({self.name!r}, fallback={self.fallback!r})"


def evaluate_heuristics(
    names: Iterable[str] = POLICY_NAMES,
    env_kwargs: dict[str, Any] | None = None,
    seeds: Iterable[int] = (0,),
    fallback: str = "substitute",
) -> pd.DataFrame:
    """Summaries (one row per heuristic × seed) of heuristics driven through the env.

    Without an explicit ``window`` the window holds every job of the day, so each heuristic
    reproduces ``simulate(name, day, seed)`` exactly.
    """
    from gpu_sched_env.cgrsp.evaluation import evaluate
    from gpu_sched_env.cgrsp.params import PARAM_NAMES, make_params

    kw = dict(env_kwargs or {})
    if "window" not in kw:
        sim_params = {k: v for k, v in kw.items() if k in PARAM_NAMES}
        kw["window"] = make_params(kw.get("day", "hectic"), **sim_params).n_jobs
    seeds = list(seeds)
    return pd.concat([evaluate(HeuristicAgent(n, fallback=fallback), kw, seeds) for n in names], ignore_index=True)


__all__ = ["HeuristicAgent", "evaluate_heuristics"]
