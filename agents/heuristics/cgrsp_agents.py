"""The CGRSP heuristics as fixed agents on :class:`~gpu_sched_env.cgrsp.env.CGRSPEnv`.

:class:`HeuristicAgent` has the Stable-Baselines3 ``predict`` signature, so one evaluation
path (:func:`gpu_sched_env.cgrsp.evaluation.evaluate`) serves heuristics and trained models.
The agent drives the named policy itself (the env has no scheduling logic): at each decision
point it asks the policy for its plan (``policy.decide(sim.view)``, once per decision point) and
emits it one assignment per step, then the no-op. With a window at least as large as the
queue this reproduces ``simulate(name, day, seed)`` job for job, in either action mode.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_agents.heuristics.cgrsp import ALL_POLICY_NAMES, POLICY_NAMES, make_policy
from gpu_sched_agents.heuristics.env_agent import EnvAgent
from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.rng import stream

FALLBACKS = ("substitute", "same_class", "wait")


class _Driver:
    """One policy instance bound to one env's current episode."""

    def __init__(self, name: str, env: Any, knobs: dict[str, Any]) -> None:
        self.sim = env.sim
        self.policy = make_policy(name, env.params, **knobs)
        self.policy.reset(env.sim.view, stream(env.run_seed, "cgrsp/policy"))  # as in simulate()
        self.decision = -1
        self.plan: list[tuple[int, int]] = []

    def plan_now(self) -> list[tuple[int, int]]:
        """The policy's remaining plan at this decision point (stale entries dropped)."""
        sim = self.sim
        if self.decision != sim.n_decisions:
            self.decision, self.plan = sim.n_decisions, list(self.policy.decide(sim.view))
        waiting, slot_job = sim.waiting, sim.slot_job
        self.plan = [(j, s) for j, s in self.plan if j in waiting and slot_job[s] < 0]
        return self.plan


class HeuristicAgent(EnvAgent):
    """A named CGRSP heuristic behind ``predict(obs, state, episode_start, deterministic)``.

    An :class:`~gpu_sched_agents.heuristics.env_agent.EnvAgent` like every scenario's agent;
    not a ``DecisionAgent``: a CGRSP decision is a plan of several assignments, emitted one
    per env step (:meth:`action`).

    Args:
        name: a published heuristic (:data:`gpu_sched_agents.heuristics.cgrsp.POLICY_NAMES`) or an
            extension (``edf_defer_low``).
        env: a CGRSP env (possibly wrapped), or a vector of them that lives in this process
            (Gymnasium ``SyncVectorEnv``, SB3 ``DummyVecEnv``); may be given later with
            :meth:`bind`.
        fallback: what to do when the window is smaller than the queue and no planned job
            is in it: ``"substitute"`` (the window's first job on the planned slot),
            ``"same_class"`` (the window's first job of the planned job's complexity class,
            else the first; for windows of class heads) or ``"wait"`` (the no-op). See
            :meth:`action`.
        **knobs: the policy's knobs (``gpu_sched_agents.heuristics.cgrsp.config``, e.g. ``theta=300``
            for ``spt_rescue``), as in ``simulate(name, ..., **knobs)``; checked when the
            policy is built for an episode (ConfigError naming the policy's knobs).
    """

    def __init__(self, name: str, env: Any = None, fallback: str = "substitute", **knobs: Any) -> None:
        super().__init__(check_choice("policy", name, ALL_POLICY_NAMES))
        self.knobs = knobs
        self.fallback = check_choice("fallback", fallback, FALLBACKS)
        self._drivers: dict[int, _Driver] = {}
        if env is not None:
            self.bind(env)

    def bind(self, env: Any) -> HeuristicAgent:
        """Drive ``env`` from now on; returns ``self``."""
        if hasattr(env, "env_method") and not hasattr(env, "envs"):
            raise ConfigError(
                f"HeuristicAgent({self.name!r}) needs in-process envs (DummyVecEnv, SyncVectorEnv); got "
                f"{type(env).__name__}"
            )
        self.env = env
        self._drivers = {}
        return self

    def action(self, env: Any) -> int:
        """The heuristic's action on one CGRSP env now.

        The plan is emitted one assignment per step, then the no-op. ``joint`` mode: the
        first planned ``(job, slot)`` whose job is in the window. ``slot`` mode: the planned
        job for the offered slot, else leave it idle. When the planned job is beyond the
        window, ``fallback="substitute"`` puts the window's first job on that slot (the
        heuristic's decision to fill the slot now is kept), ``"same_class"`` the window's
        first job of the planned job's class (else the first); ``"wait"`` takes the no-op.
        When the no-op is illegal, the lowest legal action. After the end: the no-op.
        """
        base = env.unwrapped
        mask = base.action_masks()
        if base.sim is None or base.done or not mask.any():  # before reset / after the end
            return base.wait_action
        plan, win = self.plan(base), base.window_jobs
        plan = base.actions.doable_now(plan)  # the scheme says what one action can do (slot: the offered slot's)
        a = next((base.encode(j, s) for j, s in plan if j in win), None)
        if a is None and plan and self.fallback != "wait":
            j = int(win[0])
            if self.fallback == "same_class":
                cx = base.sim.complexity
                j = next((int(w) for w in win if cx[w] == cx[plan[0][0]]), j)
            a = base.encode(j, plan[0][1])
        if a is None:
            a = base.wait_action if mask[base.wait_action] else int(np.flatnonzero(mask)[0])
        return a

    def plan(self, env: Any) -> list[tuple[int, int]]:
        """The policy's remaining ``(job, slot)`` plan for ``env``'s current decision point.

        ``policy.decide(sim.view)`` is called once per decision point; entries whose job has left
        the queue or whose slot is taken are dropped. The policy instance lives for the
        episode, reset with the run's ``cgrsp/policy`` stream as in ``simulate``; a new
        episode (or an unpickled env) gets a fresh one.
        """
        base = env.unwrapped
        if base.sim is None:
            return []
        drv = self._drivers.get(id(base))
        if drv is None or drv.sim is not base.sim:
            drv = self._drivers[id(base)] = _Driver(self.name, base, self.knobs)
        return list(drv.plan_now())

    def predict(
        self, observation: Any = None, state: Any = None, episode_start: Any = None, deterministic: bool = True
    ) -> tuple[Any, Any]:
        """The heuristic's action for the env's current state (the observation is not needed).

        Returns ``(action, state)``: an ``np.int64`` for a single env, an ``int64`` array of
        shape ``(n_envs,)`` for a vectorised one; ``state`` is passed through.
        """
        env = self._bound_env()
        if hasattr(env, "envs"):  # SB3 DummyVecEnv or Gymnasium SyncVectorEnv
            return np.asarray([self.action(e) for e in env.envs], np.int64), state
        return np.int64(self.action(env)), state

    def __repr__(self) -> str:
        return f"HeuristicAgent({self.name!r}, fallback={self.fallback!r})"


def evaluate_heuristics(
    names: Iterable[str] = POLICY_NAMES,
    env_config: Any = None,
    seeds: Iterable[int] = (0,),
    fallback: str = "substitute",
) -> pd.DataFrame:
    """Summaries (one row per heuristic × seed) of heuristics driven through the env.

    Without an explicit ``window`` the window holds every job of the day, so each heuristic
    reproduces ``simulate(name, day, seed)`` exactly.
    """
    from gpu_sched_env.cgrsp.config import CGRSPEnvConfig, as_env_config
    from gpu_sched_env.cgrsp.evaluation import evaluate

    given = env_config is not None and (isinstance(env_config, CGRSPEnvConfig) or "window" in env_config)
    cfg = as_env_config(env_config)
    if not given:  # no explicit window: the whole day, so every heuristic sees every job
        cfg = cfg.replace(window=cfg.sim_params().n_jobs)
    seeds = list(seeds)
    return pd.concat([evaluate(HeuristicAgent(n, fallback=fallback), cfg, seeds) for n in names], ignore_index=True)


__all__ = ["FALLBACKS", "HeuristicAgent", "evaluate_heuristics"]
