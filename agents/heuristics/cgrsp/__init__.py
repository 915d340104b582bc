"""The CGRSP heuristics (spec §3): ten published policies plus the CADR-OO ablation.

Importing this package registers every policy in
:data:`gpu_sched_env.cgrsp.policies.POLICIES` (the ``cgrsp`` entry point of the
``gpu_sched_env.policies`` group), where the simulator resolves names. ``POLICIES`` maps each
public name to its class; :func:`make_policy` builds one with a clear error for an unknown
name.
"""

from __future__ import annotations

from agents.heuristics.cgrsp.base import CGRSPPolicy
from agents.heuristics.cgrsp.deadline import CADR, CADROO, Adaptive, SPTRescue
from agents.heuristics.cgrsp.extensions import EDFDeferLow
from agents.heuristics.cgrsp.ordering import EDF, FIFO, LCF, SPT, Balanced, Random
from agents.heuristics.cgrsp.rh import RH
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.policies import POLICIES as REGISTRY

POLICIES: dict[str, type[CGRSPPolicy]] = {
    cls.name: cls
    for cls in (FIFO, SPT, EDF, LCF, Balanced, Random, SPTRescue, Adaptive, RH, CADR, CADROO)
}
POLICY_NAMES: tuple[str, ...] = tuple(POLICIES)  # the published ten + CADR-OO
# our own heuristics: usable everywhere by name, but kept out of the published-policy tables
EXTENSIONS: dict[str, type[CGRSPPolicy]] = {cls.name: cls for cls in (EDFDeferLow,)}
ALL_POLICY_NAMES: tuple[str, ...] = POLICY_NAMES + tuple(EXTENSIONS)

for _name, _cls in POLICIES.items():
    REGISTRY.register(_name, _cls)
for _name, _cls in EXTENSIONS.items():
    REGISTRY.register(_name, _cls, published=False)


def make_policy(name: str, params: CGRSPParams) -> CGRSPPolicy:
    """A fresh policy instance by name (published or extension)."""
    return REGISTRY.make(name, params)


__all__ = ["ALL_POLICY_NAMES", "EXTENSIONS", "POLICIES", "POLICY_NAMES", "CGRSPPolicy", "make_policy"]
