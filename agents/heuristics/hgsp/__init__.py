"""HGSP heuristics: FIFO, Greedy (earliest finish time) and SAGreedy, the strong rules, plus the env agent.

Names: ``fifo``, ``greedy``, ``sagreedy`` (the source study's), and from :mod:`.strong` ``wspt``,
``atc``, ``mdd``, ``wmdd``, ``covert`` and ``ls`` (the field's classic rules and a descent seeded by
them; registered as extensions, ``published=False``, so the study's tables keep its three).
:mod:`.bounds` gives a bound per instance.

Every policy follows :class:`gpu_sched_env.core.policy.Policy` (``reset(problem, rng)``,
``decide(decision)`` -> the GPU for one task) and HGSP's ``order(problem)`` hook (the priority
list the simulator decodes; ``None`` = arrival order); see :mod:`gpu_sched_env.hgsp.policies`.
HGSP is an offline problem (the whole task set is given up front, as in the source study),
so SAGreedy may look at every task; FIFO and Greedy only look at the current task and the
GPUs' availability. Importing this module registers the policies by name.
"""

from __future__ import annotations

from typing import Any

from gpu_sched_agents.heuristics.env_agent import DecisionAgent
from gpu_sched_agents.heuristics.hgsp import strong
from gpu_sched_agents.heuristics.hgsp.rules import FIFO, Greedy, SAGreedy
from gpu_sched_env.hgsp.policies import POLICIES as REGISTRY

POLICIES: dict[str, type[FIFO]] = {c.name: c for c in (FIFO, Greedy, SAGreedy)}
for _name, _cls in POLICIES.items():
    REGISTRY.register(_name, _cls)

for _name, _cls in strong.STRONG.items():
    POLICIES[_name] = _cls
    REGISTRY.register(_name, _cls, published=False, knobs=strong.DEFAULTS.get(_name, {}))


def make_policy(name: str, **params: Any) -> FIFO:
    """Instantiate a registered policy by name (knobs as keyword arguments)."""
    return REGISTRY.make(name, **params)


class HeuristicAgent(DecisionAgent):
    """A placement policy as an SB3-style agent on ``HGSP-v0``: ``HeuristicAgent(name, env, **knobs)``.

    ``predict`` reads the exact decision the env is waiting on (the observation is scaled
    float32 and could blur ties), so the agent reproduces :func:`gpu_sched_env.hgsp.run`
    exactly. Greedy's agent is SAGreedy's decoder: run the env with
    ``order=SAGreedy().order(problem)`` to replay SAGreedy's schedule.
    """

    registry = REGISTRY
