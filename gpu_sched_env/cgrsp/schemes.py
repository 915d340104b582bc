"""CGRSP-v0's action designs by ``action_mode``: the one table of schemes.

Apart from :mod:`.actions` (the joint and slot schemes) and :mod:`.held` (held deferrals, built
on the joint scheme), so that the table can name every scheme while no scheme module imports
another's dependents (no import circle).
"""

from __future__ import annotations

from gpu_sched_env.cgrsp.actions import ActionScheme, JointActions, SlotOffers
from gpu_sched_env.cgrsp.held import HeldDeferrals
from gpu_sched_env.cgrsp.when import LearnedTiming

_SCHEMES = (JointActions, SlotOffers, HeldDeferrals, LearnedTiming)
ACTION_SCHEMES: dict[str, type[ActionScheme]] = {cls.mode: cls for cls in _SCHEMES}
ACTION_MODES: tuple[str, ...] = tuple(ACTION_SCHEMES)


def scheme_of(action_mode: str) -> type[ActionScheme]:
    """The scheme class of an ``action_mode`` (the config has checked the name)."""
    return ACTION_SCHEMES[action_mode]


__all__ = ["ACTION_MODES", "ACTION_SCHEMES", "scheme_of"]
