"""LLM-serving heuristics: FIFO and WSRPT, plus env agents.

Every policy has ``reset(rng)`` and ``decide(decision) -> request index`` and picks among
``decision.candidates`` (the queued requests whose GPUs are free now). Policies use only
estimated run times (``p_est``), never realised ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_sched_env.core.errors import check_choice
from gpu_sched_env.llm.sim import LLMDecision


class FIFO:
    """Earliest arrival first among the startable requests (ties: lowest index)."""

    name = "fifo"

    def reset(self, rng: Any = None) -> None:
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


POLICIES: dict[str, type] = {"fifo": FIFO, "wsrpt": WSRPT}


def make_policy(name: str) -> FIFO:
    """Instantiate a registered policy by name."""
    check_choice("policy", name, POLICIES)
    return POLICIES[name]()


class LLMAgent:
    """A policy as an SB3-style agent on ``LLMServe-v0`` (bound to one env, reads its decision)."""

    def __init__(self, env: Any, policy: str | FIFO = "wsrpt") -> None:
        self.env = env
        self.policy = make_policy(policy) if isinstance(policy, str) else policy

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[int, Any]:
        """The policy's request for the env's current decision."""
        return int(self.policy.decide(self.env.unwrapped.decision())), state
