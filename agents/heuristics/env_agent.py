"""The one env-agent construction pattern: ``HeuristicAgent(name, env, **knobs)``.

Every scenario's ``gpu_sched_agents.heuristics.<scenario>.HeuristicAgent`` is built the same way (a
registered policy name, the env it drives, the policy's knobs) and has Stable-Baselines3's
``predict(observation, state, episode_start, deterministic)``, so one evaluation path serves
heuristics and trained models. :class:`DecisionAgent` is the common case: the env exposes the
exact decision it waits on (a method named :attr:`DecisionAgent.view_method`), and the agent
answers it with the registered policy's ``decide``, so the env replays the simulator's run.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gpu_sched_env.core.registry import PolicyRegistry


class EnvAgent:
    """Base: a named heuristic bound to an env (single, Gymnasium ``VectorEnv`` or SB3 ``VecEnv``)."""

    def __init__(self, name: str, env: Any = None) -> None:
        self.name = name
        self.env = env

    def bind(self, env: Any) -> EnvAgent:
        """Drive ``env`` from now on; returns ``self``."""
        self.env = env
        return self

    def _bound_env(self) -> Any:
        if self.env is None:
            raise RuntimeError(f"{type(self).__name__}({self.name!r}) has no env: pass env= or call bind(env)")
        return self.env

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class DecisionAgent(EnvAgent):
    """A registered policy answering the env's current decision view.

    Subclasses set :attr:`registry` (the scenario's policy registry) and, if the env's method
    is not ``decision``, :attr:`view_method`.
    """

    registry: ClassVar[PolicyRegistry]
    view_method: ClassVar[str] = "decision"

    def __init__(self, name: str, env: Any = None, **knobs: Any) -> None:
        super().__init__(name, env)
        self.policy = self.registry.make(name, **knobs)

    def predict(
        self,
        observation: Any = None,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
    ) -> tuple[Any, Any]:
        """The policy's action for the env's current decision (the observation is not needed).

        Returns ``(action, state)``: an ``np.int64`` for a single env, an ``int64`` array of
        shape ``(n_envs,)`` for a vectorised one; ``state`` is passed through.
        """
        env = self._bound_env()
        if hasattr(env, "env_method"):  # SB3 VecEnv
            views = env.env_method(self.view_method)
        elif hasattr(env, "num_envs") and hasattr(env, "call"):  # Gymnasium VectorEnv
            views = env.call(self.view_method)
        else:
            view = getattr(getattr(env, "unwrapped", env), self.view_method)()
            return np.int64(self.policy.decide(view)), state
        return np.array([self.policy.decide(v) for v in views], dtype=np.int64), state


__all__ = ["DecisionAgent", "EnvAgent"]
