"""The one policy protocol every scenario's heuristics follow.

A policy is a scheduler the simulator calls at each decision point::

    policy.reset(state, rng)   # once per run
    policy.decide(view)        # at every decision point -> the scenario's decision

``rng`` is the run's policy random stream (a :class:`numpy.random.Generator` drawn from
the run seed, so policies compared on a seed see the same world). ``state`` is what the
scenario gives a policy for the whole run, ``view`` what it gives at one decision, and the
decision type is per scenario:

========  =============================  ===========================  ==========================
scenario  ``reset(state, ...)``          ``decide(view)``             returns
========  =============================  ===========================  ==========================
cgrsp     ``cgrsp.sim.Simulator``        the same simulator           ``[(job_id, slot), ...]``
hgsp      ``hgsp.sim.Problem``           ``hgsp.sim.Decision``        GPU index
llm       ``llm.sim.LLMSim``             ``llm.sim.LLMDecision``      request index
mig       ``mig.sim.PlacementSim``       ``mig.sim.PlacementState``   instance index or defer
edge      ``edge.model.EdgeProblem``     the same problem             ``edge.plan.Plan``
========  =============================  ===========================  ==========================

A policy sees only what a scheduler could know (never realised run times or future jobs).
Knobs are constructor arguments, so a policy is built by name from its scenario's registry
(``gpu_sched_env.<scenario>.policies.POLICIES.make(name, ...)``, see
:mod:`gpu_sched_env.core.registry`). Scenario-specific extra hooks are documented in the
scenario's ``policies`` module (HGSP's ``order(problem)`` and ``decode_rule``).

On an env, every scenario's heuristics are driven by an ``HeuristicAgent(name, env,
**knobs)`` from ``gpu_sched_agents.heuristics.<scenario>``, with Stable-Baselines3's
``predict(observation, state, episode_start, deterministic)``.
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


__all__ = ["Policy", "check_policy"]
