"""Knobs of the CGRSP heuristics: one small frozen config per policy family.

The simulator's :class:`~gpu_sched_env.cgrsp.params.CGRSPParams` describe the world; these
describe how a heuristic decides (spec §3: θ, P, CR*, ρ_res, gate, weights). Each policy
class names its ``Config``; a knob is validated when the config is built, with a
:class:`~gpu_sched_env.core.errors.ConfigError` naming the knob, its value and what is
allowed. Checks that need the world (``rho_res < c_max``) run when the policy is built for a
parameter set (:meth:`gpu_sched_agents.heuristics.cgrsp.base.CGRSPPolicy.check`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any

from gpu_sched_env.cgrsp.params import STOCK_LEVELS
from gpu_sched_env.core.errors import ConfigError, check_choice, check_number

RH_DEFER_MODES = ("expected", "low", "never")
RH_PLAN_MODES = ("idle", "timeline")
# deferral of idle slots by stock status (extensions.py): "none", "low" (Low-stock slots),
# "low_medium" (every slot not in High stock), "expected" (a slot whose status' mean delay
# exceeds the expected cost of waiting for a better status under the public stock model)
DEFER_MODES = ("none", "low", "low_medium", "expected")
# the gap a deferring rule weighs in "expected" mode: "plan" counts the slots the same
# plan fills (their expected end) and so keeps deferring when nothing else is busy; "busy" is the
# rule as published before (busy slots and arrivals only, no deferral when neither exists)
DEFER_GAPS = ("plan", "busy")
# the slot a deferring rule gives a job: "delay" the least expected start delay + W̄ (the corrected rule),
# "rule" the published rule's own slot score (SPT's price term can outweigh a Medium status)
SLOT_SCORES = ("delay", "rule")
STOCK_PENALTY = (0.0, 0.2, 1.0)  # sp(High/Medium/Low), added to slot scores


def _per_level(name: str, v: Any) -> None:
    if not isinstance(v, tuple) or len(v) != 3:
        raise ConfigError(f"{name} = {v!r}: need 3 values (High, Medium, Low)")
    for lvl, x in zip(STOCK_LEVELS, v):
        check_number(f"{name}[{lvl}]", x, lo=0.0)


def _weights(name: str, v: Any) -> None:
    if not isinstance(v, tuple) or len(v) != 2:
        raise ConfigError(f"{name} = {v!r}: need 2 weights")
    for x in v:
        check_number(name, x, lo=0.0)


def _names(name: str, v: Any) -> None:
    if not isinstance(v, tuple) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{name} = {v!r}: need a list of rule names")


# One check per knob name (a knob shared by several configs is checked the same way).
_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "stock_penalty": _per_level,
    "lcf_stock_factor": _per_level,
    "spt_weights": _weights,
    "balanced_weights": _weights,
    "rh_weights": _weights,
    "theta": lambda n, v: check_number(n, v, lo=0.0),
    "pressure_queue": lambda n, v: check_number(n, v, lo=0, integer=True),
    "theta_pressure": lambda n, v: check_number(n, v, lo=0.0),
    "cr_star": lambda n, v: check_number(n, v, lo=1.0, lo_open=True),
    "rho_res": lambda n, v: check_number(n, v, lo=0, integer=True),
    "rho_gate": lambda n, v: check_number(n, v, lo=0.0),
    "rh_defer": lambda n, v: check_choice(n, v, RH_DEFER_MODES),
    "rh_plan": lambda n, v: check_choice(n, v, RH_PLAN_MODES),
    "defer": lambda n, v: check_choice(n, v, DEFER_MODES),
    "defer_scale": lambda n, v: check_number(n, v, lo=0.0, lo_open=True),
    "defer_gap": lambda n, v: check_choice(n, v, DEFER_GAPS),
    "slot_score": lambda n, v: check_choice(n, v, SLOT_SCORES),
    "base_rule": lambda n, v: check_choice(f"{n} type", type(v).__name__, ("str",)),  # the name: checked by the planner
    "n_rollouts": lambda n, v: check_number(n, v, lo=1, hi=64, integer=True),
    "horizon_s": lambda n, v: check_number(n, v, lo=0.0, lo_open=True),
    "max_candidates": lambda n, v: check_number(n, v, lo=2, hi=16, integer=True),
    "confidence_z": lambda n, v: check_number(n, v, lo=0.0),
    "n_confirm": lambda n, v: check_number(n, v, lo=2, hi=512, integer=True),
    "confirm_horizon_s": lambda n, v: check_number(n, v, lo=0.0),
    "error_rate": lambda n, v: check_number(n, v, lo=0.0, hi=0.5, lo_open=True, hi_open=True),
    "portfolio": lambda n, v: _names(n, v),  # the names themselves: checked by the planner
}


@dataclass(frozen=True)
class Knobs:
    """Base of every policy config: each field validated on construction."""

    def __post_init__(self) -> None:
        for f in fields(self):
            _CHECKS[f.name](f.name, getattr(self, f.name))

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The knob names of this config."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Knob name → default value."""
        return {f.name: f.default for f in fields(cls)}

    @classmethod
    def build(cls, policy: str, **knobs: Any) -> Knobs:
        """A validated config from user input (lists become tuples, as from YAML or a CLI)."""
        allowed = cls.names()
        unknown = sorted(set(knobs) - set(allowed))
        if unknown:
            raise ConfigError(
                f"unknown knobs for policy {policy!r}: {', '.join(unknown)}; allowed: "
                f"{', '.join(allowed) or 'none (this policy has no knobs)'}"
            )
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in knobs.items()})


@dataclass(frozen=True)
class NoKnobs(Knobs):
    """FIFO, EDF, Random and EDF-defer-low have nothing to set."""


@dataclass(frozen=True)
class SPTSlotKnobs(Knobs):
    """SPT's slot score: ww·W̄/W̄_min + wp·price/price_min + sp(stock)."""

    spt_weights: tuple[float, float] = (0.7, 0.3)  # (run time, price)
    stock_penalty: tuple[float, float, float] = STOCK_PENALTY


@dataclass(frozen=True)
class LCFKnobs(Knobs):
    """LCF's stock factor f(stock) in price·W̄·f."""

    lcf_stock_factor: tuple[float, float, float] = (1.0, 1.05, 1.15)


@dataclass(frozen=True)
class BalancedKnobs(Knobs):
    """Balanced's slot score: ww·W̄/W̄_max + wp·price/price_max + sp(stock)."""

    balanced_weights: tuple[float, float] = (0.8, 0.2)
    stock_penalty: tuple[float, float, float] = STOCK_PENALTY


@dataclass(frozen=True)
class RescueKnobs(SPTSlotKnobs):
    """SPT+Rescue: laxity threshold θ of the urgent tier, and SPT's slot score."""

    theta: float = 600.0  # [s]


@dataclass(frozen=True)
class AdaptiveKnobs(RescueKnobs):
    """Adaptive: θ, and θ_eff = θ_pressure while more than P jobs wait."""

    pressure_queue: int = 10  # P [jobs]
    theta_pressure: float = 28800.0  # [s]


@dataclass(frozen=True)
class CADRKnobs(Knobs):
    """CADR: at-risk critical-ratio bound CR*."""

    cr_star: float = 3.0


@dataclass(frozen=True)
class CADROOKnobs(CADRKnobs, SPTSlotKnobs):
    """CADR-OO: CADR's CR* with SPT's slot score."""


@dataclass(frozen=True)
class RHKnobs(Knobs):
    """RH: reservation, its load gate, placement weights, deferral mode, stock penalty."""

    # idle slots held back from loose jobs while ρ < rho_gate and jobs are still to arrive
    # (a loose job takes an idle slot only while more than rho_res are free); waiting tight
    # jobs lead the order then. See the rh module's docstring.
    rho_res: int = 1
    rho_gate: float = 0.95
    rh_weights: tuple[float, float] = (0.5, 0.5)  # (QoS, cost) in the placement score
    # leave an idle slot for the next re-plan (fresh stock draw): "never" (default: commit
    # what starts now; keeps RH inside the pack on the hectic and surge days and every C_max),
    # "expected" when the stock model expects an earlier start that way (beats the published
    # hectic miss by re-rolling the stock, and leaves the pack on every cell), "low" only for
    # Low-stock slots
    rh_defer: str = "never"
    # where candidates are placed: "idle" (default: each candidate in RH order takes its
    # best *idle* slot; nothing is planned on busy slots) or "timeline" (the spec's full
    # rolling horizon: a candidate may be planned on a busy slot's timeline, leaving an idle
    # slot idle; with fresh stock that re-rolls a Low status, see docs/results.md, experiment
    # rhplan). The reservation (rho_res, rho_gate) applies under both.
    rh_plan: str = "idle"
    stock_penalty: tuple[float, float, float] = STOCK_PENALTY


@dataclass(frozen=True)
class RolloutKnobs(Knobs):
    """The rollout planner's knobs.

    Base rule; screen (futures, look-ahead, candidates, gate); confirmation (futures, horizon,
    error rate).
    """

    base_rule: str = "spt_rescue_defer_exp"  # the rule rolled out and improved upon (a rule name, planner.RULE_BASES)
    n_rollouts: int = 4  # screen: sampled futures per candidate (common random numbers across candidates)
    horizon_s: float = 600.0  # [s] screen: simulated look-ahead per rollout (plus the terminal term)
    max_candidates: int = 5  # candidate plans screened per decision point (the base rule's first)
    confidence_z: float = (
        1.0  # screen gate: confirm the best-looking plan only if it leads the base by > z standard errors
    )
    n_confirm: int = 32  # confirmation: independent futures on which the screened plan must beat the base plan
    confirm_horizon_s: float = 0.0  # [s] confirmation look-ahead; 0: to the end of the day (no terminal term)
    error_rate: float = (
        0.01  # one-sided level of the confirmation's paired t-test: P(leave an equal base plan) per decision
    )
    portfolio: tuple[
        str, ...
    ] = ()  # further rules (planner.RULE_BASES) whose plans join the candidates: *which* job goes where


def with_defer(config: type[Knobs], default: str) -> type[Knobs]:
    """``config`` plus the ``defer`` knob (default ``default``) and ``defer_scale``: the config of a deferring rule.

    ``defer_scale`` (``expected`` mode only) multiplies the expected cost of waiting that a
    status' mean delay is compared with: below 1 defers more, above 1 less (1: the model's own
    break-even, what the registered rules use). ``defer_gap`` (:data:`DEFER_GAPS`) and
    ``slot_score`` (:data:`SLOT_SCORES`) select the corrected rule (default) or the rule as
    published before its two corrections, for the before/after tables.
    """
    check_choice("defer", default, DEFER_MODES)
    fields_ = [
        ("defer", str, field(default=default)),
        ("defer_scale", float, field(default=1.0)),
        ("defer_gap", str, field(default="plan")),
        ("slot_score", str, field(default="delay")),
    ]
    return make_dataclass(f"{config.__name__}Defer", fields_, bases=(config,), frozen=True)


__all__ = [
    "DEFER_GAPS",
    "DEFER_MODES",
    "RH_DEFER_MODES",
    "RH_PLAN_MODES",
    "AdaptiveKnobs",
    "BalancedKnobs",
    "CADRKnobs",
    "CADROOKnobs",
    "Knobs",
    "LCFKnobs",
    "NoKnobs",
    "RHKnobs",
    "RescueKnobs",
    "RolloutKnobs",
    "SLOT_SCORES",
    "SPTSlotKnobs",
    "with_defer",
]
