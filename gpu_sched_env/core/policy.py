"""The one policy protocol every scenario's heuristics follow, and the planner protocol.

A policy is a scheduler the simulator calls at each decision point::

    policy.reset(state, rng)   # once per run
    policy.decide(view)        # at every decision point -> the scenario's decision

``rng`` is the run's policy random stream (a :class:`numpy.random.Generator` drawn from
the run seed, so policies compared on a seed see the same world). ``state`` is what the
scenario gives a policy for the whole run, ``view`` what it gives at one decision; both are
read-only (a view has no method that changes the run, and shows no realised draw or future
arrival), and the decision type is per scenario:

========  ======================================  ======================================  ==========================
scenario  ``reset(state, ...)``                   ``decide(view)``                        returns
========  ======================================  ======================================  ==========================
cgrsp     ``cgrsp.view.SimView`` (``sim.view``)   the same view                           ``[(job_id, slot), ...]``
hgsp      ``hgsp.sim.Problem`` (offline)          ``hgsp.sim.Decision``                   GPU index
llm       ``llm.sim.LLMSetup``                    ``llm.sim.LLMDecision``                 request index
mig       ``mig.online.MIGSetup``                 ``mig.sim.PlacementState``              instance index or defer
edge      ``edge.model.Cluster``                  ``edge.env.EdgeDecision``               device index
========  ======================================  ======================================  ==========================

A CGRSP policy gets the simulator's :class:`~gpu_sched_env.cgrsp.view.SimView`, never the
simulator: the view has no ``assign``/``advance``, no realised run times or delays, and its
per-job lists hold the arrived jobs only. The other scenarios hand frozen dataclasses
(tuples, non-writeable arrays). A policy returns its decision; the driver applies it.

A **planner** is not called at decision points: it plans a whole problem before anything
runs (edge's MemBatch ILP, baseline ILP and FCFS-LLF)::

    planner.plan(problem, rng)  # -> the scenario's plan (edge: ``edge.plan.Plan``)

``rng`` is the run's planner stream (used by randomised planners, ignored by the others).
Planners are registered apart from policies (``gpu_sched_env.edge.policies.PLANNERS``).

Knobs are constructor arguments, so a policy (or planner) is built by name from its
scenario's registry with the one factory signature
``gpu_sched_env.<scenario>.policies.POLICIES.make(name, world=None, **knobs)`` (``world``:
CGRSP's parameters, ``None`` elsewhere; see :mod:`gpu_sched_env.core.registry`).
Scenario-specific extra hooks are documented in the scenario's ``policies`` module (HGSP's
``order(problem)`` and ``decode_rule``).

On an env, every scenario's heuristics are driven by an ``HeuristicAgent(name, env,
**knobs)`` from ``gpu_sched_agents.heuristics.<scenario>``, a subclass of the one agent base
``gpu_sched_agents.heuristics.env_agent.EnvAgent``, with Stable-Baselines3's
``predict(observation, state, episode_start, deterministic)``; its policy comes from the
scenario's ``POLICIES`` table.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """A scheduler: ``reset(state, rng)`` once per run, ``decide(view)`` at each decision."""

    name: str

    def reset(self, state: Any, rng: np.random.Generator) -> None:
        """Start a new run on ``state`` with the run's policy random stream."""

    def decide(self, view: Any) -> Any:
        """Return the scenario's decision for ``view``."""


def check_policy(policy: Any) -> Any:
    """Return ``policy`` if it follows :class:`Policy` (methods *and* their arity), else raise TypeError.

    ``isinstance(p, Policy)`` only checks that the attributes exist; this also checks that
    ``reset`` takes ``(state, rng)`` and ``decide`` takes one view.
    """
    if not isinstance(policy, Policy):
        raise TypeError(f"{policy!r} is not a policy: it needs name, reset(state, rng) and decide(view)")
    for meth, n in (("reset", 2), ("decide", 1)):
        try:
            inspect.signature(getattr(policy, meth)).bind(*([None] * n))
        except TypeError as e:
            raise TypeError(f"{type(policy).__name__}.{meth} must take {n} positional argument(s): {e}") from None
    return policy


@runtime_checkable
class Planner(Protocol):
    """An offline planner: ``plan(problem, rng)`` returns a plan for the whole problem."""

    name: str

    def plan(self, problem: Any, rng: np.random.Generator | None = None) -> Any:
        """Plan every task of ``problem`` (``rng``: the run's planner stream)."""


def check_planner(planner: Any) -> Any:
    """Return ``planner`` if it follows :class:`Planner` (``plan(problem, rng)``), else raise TypeError."""
    if not isinstance(planner, Planner):
        raise TypeError(f"{planner!r} is not a planner: it needs name and plan(problem, rng)")
    try:
        inspect.signature(planner.plan).bind(None, None)
    except TypeError as e:
        raise TypeError(f"{type(planner).__name__}.plan must take (problem, rng): {e}") from None
    return planner


__all__ = ["Planner", "Policy", "check_planner", "check_policy"]
