"""LLM-serving heuristics: FIFO and WSRPT, the strong rules, plus the env agent.

Names: ``fifo``, ``wsrpt`` (the source study's), and from :mod:`.strong` ``spt``, ``wsrpt_aging``,
``smith_area``, ``backfill`` and ``rollout`` (the field's classic rules; registered as extensions,
``published=False``, so the study's tables keep its two). :mod:`.bounds` gives a bound per instance.

Every policy follows :class:`gpu_sched_env.core.policy.Policy` (``reset(setup, rng)``,
``decide(decision) -> request index``, see :mod:`gpu_sched_env.llm.policies`) and picks among
``decision.candidates`` (the queued requests whose GPUs are free now). Policies use only
estimated run times (``p_est``), never realised ones. Importing this module registers them.
"""

from __future__ import annotations

import numpy as np

from gpu_sched_agents.heuristics.env_agent import DecisionAgent
from gpu_sched_agents.heuristics.llm import strong
from gpu_sched_env.llm.policies import POLICIES as REGISTRY
from gpu_sched_env.llm.sim import LLMDecision, LLMSetup


class FIFO:
    """Earliest arrival first among the startable requests (ties: lowest index)."""

    name = "fifo"

    def reset(self, setup: LLMSetup, rng: np.random.Generator) -> None:
        """Nothing to reset (deterministic)."""

    def decide(self, d: LLMDecision) -> int:
        """The startable request that arrived first."""
        c = d.candidates
        return int(c[np.lexsort((c, d.arrival[c]))[0]])


class WSRPT(FIFO):
    """Weighted shortest remaining processing time: highest ``w / p_est`` first.

    ``p_est`` is the phase's run time on the fastest GPU type that can hold the request (the
    spec's ``p_prefill + p_decode`` for a single-phase request). Ties: earlier arrival, then
    lower index.
    """

    name = "wsrpt"

    def decide(self, d: LLMDecision) -> int:
        """The startable request with the largest weight per second of work."""
        c = d.candidates
        prio = d.weight[c] / d.p_est[c]
        return int(c[np.lexsort((c, d.arrival[c], -prio))[0]])


POLICIES: dict[str, type] = {c.name: c for c in (FIFO, WSRPT)}
for _name, _cls in POLICIES.items():
    REGISTRY.register(_name, _cls)

for _name, _cls in strong.STRONG.items():  # after the study's two, so names() lists those first
    POLICIES[_name] = _cls
    REGISTRY.register(_name, _cls, published=False, knobs=strong.DEFAULTS.get(_name, {}))


def make_policy(name: str) -> FIFO:
    """Instantiate a registered policy by name."""
    return REGISTRY.make(name)


class HeuristicAgent(DecisionAgent):
    """A policy as an SB3-style agent on ``LLMServe-v0``: ``HeuristicAgent(name, env)``.

    Reads the env's exact decision, so it replays :func:`gpu_sched_env.llm.simulate`.
    """

    registry = REGISTRY
