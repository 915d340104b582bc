"""The CGRSP heuristics (spec §3): ten published policies plus the CADR-OO ablation, and ours.

Importing this package registers every policy, with its knobs and their defaults, in
:data:`gpu_sched_env.cgrsp.policies.POLICIES` (the ``cgrsp`` entry point of the
``gpu_sched_env.policies`` group), where the simulator resolves names. ``POLICIES`` here maps
each published name to its class; :func:`make_policy` builds one with its knobs and a clear
error for an unknown name or knob.
"""

from __future__ import annotations

from typing import Any

from gpu_sched_agents.heuristics.cgrsp.base import CGRSPPolicy
from gpu_sched_agents.heuristics.cgrsp.deadline import CADR, CADROO, Adaptive, SPTRescue
from gpu_sched_agents.heuristics.cgrsp.extensions import RULES, STRONG_RULES, best_rule
from gpu_sched_agents.heuristics.cgrsp.ordering import EDF, FIFO, LCF, SPT, Balanced, Random
from gpu_sched_agents.heuristics.cgrsp.planner import Rollout
from gpu_sched_agents.heuristics.cgrsp.rh import RH
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.policies import POLICIES as REGISTRY

POLICIES: dict[str, type[CGRSPPolicy]] = {
    cls.name: cls for cls in (FIFO, SPT, EDF, LCF, Balanced, Random, SPTRescue, Adaptive, RH, CADR, CADROO)
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)  # the published ten + CADR-OO
# our own heuristics: usable everywhere by name, but kept out of the published-policy tables.
# EXTENSIONS: the deferring rules (cheap; every learner is compared with them); PLANNERS:
# the rollout planner (the simulator as its model; seconds to minutes per day).
EXTENSIONS: dict[str, type[CGRSPPolicy]] = dict(RULES)
PLANNERS: dict[str, type[CGRSPPolicy]] = {Rollout.name: Rollout}
ALL_POLICY_NAMES: tuple[str, ...] = POLICY_NAMES + tuple(EXTENSIONS) + tuple(PLANNERS)

for _cls in POLICIES.values():
    REGISTRY.register(_cls.name, _cls, knobs=_cls.Config.defaults())
for _cls in (*EXTENSIONS.values(), *PLANNERS.values()):
    REGISTRY.register(_cls.name, _cls, published=False, knobs=_cls.Config.defaults())


def make_policy(name: str, params: CGRSPParams, **knobs: Any) -> CGRSPPolicy:
    """A fresh policy instance by name (published or extension) with its knobs.

    Raises:
        ConfigError: unknown name, a knob the policy does not have (naming its knobs), an
            invalid knob value, or one the world rejects (RH's ``rho_res`` ≥ ``c_max``).
    """
    return REGISTRY.make(name, params, **knobs)


__all__ = [
    "ALL_POLICY_NAMES",
    "EXTENSIONS",
    "PLANNERS",
    "POLICIES",
    "POLICY_NAMES",
    "STRONG_RULES",
    "CGRSPPolicy",
    "best_rule",
    "make_policy",
]
