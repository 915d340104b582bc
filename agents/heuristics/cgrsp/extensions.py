"""Heuristics of our own, beyond the published ten (not in the calibration tables).

They are registered under their names (``simulate("cadr_defer_low", ...)``, heuristic agents,
behaviour-cloning teachers, ``baselines()`` of the learners) but are not part of
``POLICY_NAMES``, so the published-policy tables and experiments are unchanged.

**Deferring rules.** One mechanism, one knob: a published rule with the ``defer`` knob
(:data:`~gpu_sched_agents.heuristics.cgrsp.config.DEFER_MODES`) first picks the idle slots to
leave idle at this decision point (:func:`deferred_slots`), then runs the published rule
unchanged on the policy's view with those slots hidden
(:class:`IdleView`): the published rule places its best jobs on the slots that remain.

* ``low``: Low-stock idle slots, while another slot is busy;
* ``low_medium``: every idle slot not in High stock, while another slot is busy;
* ``expected``: a slot whose status' mean delay exceeds the expected cost of waiting for a
  better status (:func:`defer_cost`, times the ``defer_scale`` knob, 1 by default), from the
  public stock model (fresh or Markov with its mean dwell). The time to the next event counts
  busy slots, arrivals still to come and the slots the same plan fills (``defer_gap="plan"``,
  :func:`_expected_plan`); ``defer_gap="busy"`` is the rule as published, before its two corrections.

Each job goes to the idle slot with the least expected delay + W̄ (``slot_score="delay"``,
:func:`~.base.slot_delay`), or to the base rule's own slot choice (``slot_score="rule"``).

A deferral never stalls a day: every mode defers only while an event is still to come,
which brings the next decision point (and, under fresh stock, a new draw).

Registered names (:data:`RULES`): ``<base>_defer_low``, ``<base>_defer_lm``,
``<base>_defer_exp`` for the bases SPT, SPT+Rescue and CADR, and ``edf_defer_low``.
:data:`STRONG_RULES` names the strongest rule under each stock model (measured by
``scripts/strong_rules.py``, docs/strong_rules.md); :func:`best_rule` picks it for a
parameter set.
"""

from __future__ import annotations

import math
from typing import Any

from gpu_sched_agents.heuristics.cgrsp.base import Assignment, CGRSPPolicy, SlotRule, slot_delay
from gpu_sched_agents.heuristics.cgrsp.config import with_defer
from gpu_sched_agents.heuristics.cgrsp.deadline import CADR, SPTRescue
from gpu_sched_agents.heuristics.cgrsp.ordering import EDF, SPT
from gpu_sched_env.cgrsp.fleet import HIGH, LOW
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.stock import MIN_GAP_S, defer_cost, next_event_gap
from gpu_sched_env.cgrsp.view import SimView


class IdleView:
    """A policy's view with some idle slots hidden (left idle at this decision point).

    Every attribute is the wrapped :class:`~gpu_sched_env.cgrsp.view.SimView`'s except
    :meth:`idle_slots` and :attr:`n_idle`, which list only the slots still offered. It wraps
    the view, never the simulator, so it reaches no more than the view does.
    """

    __slots__ = ("_view", "_idle")

    def __init__(self, view: SimView, idle: list[int]) -> None:
        self._view = view
        self._idle = idle

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # the view's private names are not part of it
            raise AttributeError(name)
        return getattr(self._view, name)

    def idle_slots(self) -> list[int]:
        """The offered idle slots in registration order (a new list)."""
        return list(self._idle)

    @property
    def n_idle(self) -> int:
        """Number of offered idle slots."""
        return len(self._idle)


def deferred_slots(view: SimView, mode: str, scale: float = 1.0, gap_mode: str = "plan") -> list[int]:
    """Idle slots to leave idle at this decision point under deferral ``mode`` (never stalls).

    ``scale`` (``expected`` only) multiplies the expected cost of waiting (the ``defer_scale``
    knob); ``gap_mode`` (``expected`` only, the ``defer_gap`` knob) is how the expected time to
    the next event is found: ``"plan"`` (:func:`_expected_plan`) or ``"busy"`` (the rule as
    published, before its corrections: busy slots and arrivals only; no deferral when neither exists).
    """
    if mode == "none":
        return []
    idle = view.idle_slots()
    busy = len(idle) < len(view.slot_job)
    st, stock = view.fleet.slot_type, view.stock
    if mode == "low":
        return [s for s in idle if stock[st[s]] == LOW] if busy else []
    if mode == "low_medium":
        return [s for s in idle if stock[st[s]] != HIGH] if busy else []
    if gap_mode == "plan":
        return _expected_plan(view, idle, scale)
    if not (busy or view.n_arrived < view.n_jobs):  # "busy": only while an event is to come
        return []
    gap = next_event_gap(view)
    dm = view.fleet.delay_mean
    cost: dict[int, float] = {}
    out = []
    for s in idle:
        g = st[s]
        if stock[g] != HIGH:
            if g not in cost:
                cost[g] = scale * defer_cost(view, g, gap)
            if dm[stock[g]] > cost[g]:
                out.append(s)
    return out


def _expected_plan(view: SimView, idle: list[int], scale: float) -> list[int]:
    """``expected`` deferral that counts the slots this plan fills (the correction of the end-of-day cascade).

    The idle slots are taken best status first (least mean delay; ties: registration order).
    A High slot, or any slot while no event is to come (no busy slot, no arrival, no slot
    filled yet), is filled; any other is left idle when its status' mean delay exceeds
    ``scale`` × :func:`defer_cost` at the current gap, else filled. Each slot filled (while
    jobs remain to fill it) brings an event at its expected end, the level's mean delay plus
    the smallest W̄ on its type, so the gap shrinks as the plan grows. The first slot is
    always filled when nothing else is to come: the rule never stalls.
    """
    fl = view.fleet
    st, stock, dm = fl.slot_type, view.stock, fl.delay_mean
    if all(stock[st[s]] == HIGH for s in idle):  # nothing to defer (the common case; a hot path of the planner)
        return []
    gap = next_event_gap(view)  # inf when no slot is busy and no arrival is to come
    jobs = len(view.waiting)
    out: list[int] = []
    for s in sorted(idle, key=lambda s: (dm[stock[st[s]]], s)):
        g = st[s]
        lvl = stock[g]
        if lvl != HIGH and gap < math.inf and dm[lvl] > scale * defer_cost(view, g, gap):
            out.append(s)
        elif jobs > 0:  # filled: its job is expected to end after the delay and the shortest W̄
            jobs -= 1
            gap = min(gap, max(dm[lvl] + min(row[g] for row in fl.wbar), MIN_GAP_S))
    return out


class Deferring(CGRSPPolicy):
    """Mixin: leave the slots :func:`deferred_slots` names idle, let the base rule fill the others.

    The slot each job gets is the base rule's (``slot_score="rule"``) or the least expected
    delay + W̄ (``"delay"``, the default: :func:`~.base.slot_delay`).
    """

    def slot_rule(self) -> SlotRule:
        if self.cfg.slot_score == "delay":
            return slot_delay
        return super().slot_rule()  # type: ignore[misc]

    def decide(self, view: SimView) -> list[Assignment]:
        held = deferred_slots(view, self.cfg.defer, self.cfg.defer_scale, self.cfg.defer_gap)
        if not held:
            return super().decide(view)
        offered = [s for s in view.idle_slots() if s not in held]
        if not offered:
            return []
        return super().decide(IdleView(view, offered))  # type: ignore[arg-type]


# suffix of a registered name -> deferral mode
SUFFIXES: dict[str, str] = {"low": "low", "lm": "low_medium", "exp": "expected"}


def deferring(base: type[CGRSPPolicy], suffix: str) -> type[CGRSPPolicy]:
    """The deferring rule ``<base.name>_defer_<suffix>``: ``base`` with the ``defer`` knob."""
    mode = SUFFIXES[suffix]
    name = f"{base.name}_defer_{suffix}"
    doc = f"{base.__name__} leaving idle slots idle while waiting pays (defer = {mode!r} by default)."
    return type(
        f"{base.__name__}Defer{suffix.title()}",
        (Deferring, base),
        {
            "name": name,
            "Config": with_defer(base.Config, mode),
            "__doc__": doc,
            "__module__": __name__,
        },
    )


RULE_BASES: tuple[type[CGRSPPolicy], ...] = (SPT, SPTRescue, CADR)
RULES: dict[str, type[CGRSPPolicy]] = {
    cls.name: cls for cls in [deferring(b, sfx) for b in RULE_BASES for sfx in SUFFIXES] + [deferring(EDF, "low")]
}
EDFDeferLow = RULES["edf_defer_low"]

# The strongest rule under each stock model ("fresh": redrawn at every decision point;
# "markov": persistent), from docs/strong_rules.md (scripts/strong_rules.py: hectic and
# surge days, test seeds 20000-20029, fresh and markov D = 900 s). THE bar for learners.
STRONG_RULES: dict[str, str] = {"fresh": "spt_rescue_defer_exp", "markov": "spt_rescue_defer_exp"}


def best_rule(params: CGRSPParams | None = None, stock_process: str | None = None) -> str:
    """Name of the strongest rule for ``params`` (or a stock process name; default: fresh)."""
    sp = stock_process or (params.stock_process if params is not None else "fresh")
    from gpu_sched_env.core.errors import check_choice

    return STRONG_RULES[check_choice("stock_process", sp, tuple(STRONG_RULES))]


__all__ = [
    "RULES",
    "RULE_BASES",
    "STRONG_RULES",
    "SUFFIXES",
    "Deferring",
    "EDFDeferLow",
    "IdleView",
    "best_rule",
    "defer_cost",
    "deferred_slots",
    "deferring",
    "next_event_gap",
]
