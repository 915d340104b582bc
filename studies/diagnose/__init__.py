"""Diagnostics behind readings in the docs.

Run ``python -m studies diagnose NAME [ARGS...]`` (or ``scripts/diagnose_NAME.py``). Each module has ``main(argv)``;
``NAME --help`` lists its options. ``hgsp-tasks1`` lives with the HGSP studies (:mod:`studies.hgsp.tasks1`).
"""

from __future__ import annotations

from collections.abc import Sequence

from studies.commands import Command, Main, dispatch


def _advantages() -> Main:
    from studies.diagnose.advantages import main

    return main


def _policy() -> Main:
    from studies.diagnose.policy import main

    return main


def _reward() -> Main:
    from studies.diagnose.reward import main

    return main


def _reward_alignment() -> Main:
    from studies.diagnose.reward_alignment import main

    return main


def _rh_reservation() -> Main:
    from studies.diagnose.rh_reservation import main

    return main


def _design_cost() -> Main:
    from studies.diagnose.design_cost import main

    return main


def _versus_rule() -> Main:
    from studies.diagnose.versus_rule import main

    return main


def _headroom() -> Main:
    from studies.cgrsp.headroom import main

    return main


def _rule_fix() -> Main:
    from studies.cgrsp.rule_fix import main

    return main


def _planner_calibration() -> Main:
    from studies.cgrsp.calibration import main

    return main


def _hgsp_tasks1() -> Main:
    from studies.hgsp.tasks1 import main

    return main


# name -> the diagnostic (loaded when run)
DIAGNOSTICS: dict[str, Command] = {
    "advantages": Command(_advantages, "PPO's advantages at dispatch-or-idle, by stock level"),
    "policy": Command(_policy, "why a trained CGRSP policy waits: argmax vs factored vs sampled"),
    "reward": Command(_reward, "step reward of dispatch vs idle by stock (and a Monte-Carlo value)"),
    "reward-alignment": Command(_reward_alignment, "do reward presets rank heuristics as the objective?"),
    "rh-reservation": Command(_rh_reservation, "where RH's reservation puts loose jobs"),
    "design-cost": Command(_design_cost, "what an env's action design costs a rule against simulate()"),
    "versus-rule": Command(_versus_rule, "does a learner lose to the strongest rule on when or on which job?"),
    "headroom": Command(
        _headroom, "the headroom map: the rule vs its bounds, and the planner vs the rule (paired, resumable)"
    ),
    "rule-fix": Command(_rule_fix, "the deferring rule before and after issue #29's two corrections (paired)"),
    "planner-calibration": Command(_planner_calibration, "the planner's screen horizon against full-day rollouts"),
    "hgsp-tasks1": Command(_hgsp_tasks1, "why HGSP tasks1 misfits the study at its published load"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run diagnostic ``argv[0]`` with the rest of ``argv``; returns the exit status."""
    return dispatch(DIAGNOSTICS, argv, "python -m studies diagnose", "diagnostic")


__all__ = ["DIAGNOSTICS", "main"]
