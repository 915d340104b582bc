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
  public stock model (fresh or Markov with its mean dwell), while a future event (a busy
  slot or an arrival still to come) exists.

A deferral never stalls a day: every mode defers only while an event is still to come,
which brings the next decision point (and, under fresh stock, a new draw).

Registered names (:data:`RULES`): ``<base>_defer_low``, ``<base>_defer_lm``,
``<base>_defer_exp`` for the bases SPT, SPT+Rescue and CADR, and ``edf_defer_low``.
:data:`STRONG_RULES` names the strongest rule under each stock model (measured by
``scripts/strong_rules.py``, docs/strong_rules.md); :func:`best_rule` picks it for a
parameter set.
"""

from __future__ import annotations

from typing import Any

from gpu_sched_agents.heuristics.cgrsp.base import Assignment, CGRSPPolicy
from gpu_sched_agents.heuristics.cgrsp.config import with_defer
from gpu_sched_agents.heuristics.cgrsp.deadline import CADR, SPTRescue
from gpu_sched_agents.heuristics.cgrsp.ordering import EDF, SPT
from gpu_sched_env.cgrsp.fleet import HIGH, LOW
from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.cgrsp.stock import defer_cost, next_event_gap
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


def deferred_slots(view: SimView, mode: str, scale: float = 1.0) -> list[int]:
    """Idle slots to leave idle at this decision point under deferral ``mode`` (never stalls).

    ``scale`` (``expected`` only) multiplies the expected cost of waiting (the ``defer_scale`` knob).
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
    if not (busy or view.n_arrived < view.n_jobs):  # "expected": only while an event is to come
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


class Deferring(CGRSPPolicy):
    """Mixin: leave the slots :func:`deferred_slots` names idle, let the base rule fill the others."""

    def decide(self, view: SimView) -> list[Assignment]:
        held = deferred_slots(view, self.cfg.defer, self.cfg.defer_scale)
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
    return type(f"{base.__name__}Defer{suffix.title()}", (Deferring, base), {
        "name": name, "Config": with_defer(base.Config, mode), "__doc__": doc, "__module__": __name__,
    })


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
    "RULES", "RULE_BASES", "STRONG_RULES", "SUFFIXES", "Deferring", "EDFDeferLow", "IdleView",
    "best_rule", "defer_cost", "deferred_slots", "deferring", "next_event_gap",
]
