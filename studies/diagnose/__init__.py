"""Diagnostics behind readings in the docs: ``gpu-sched diagnose NAME [ARGS...]`` (or ``scripts/diagnose_NAME.py``).

Each module has ``main(argv)``; ``NAME --help`` lists its options.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# name -> (module, one-line help)
DIAGNOSTICS = {
    "advantages": ("studies.diagnose.advantages", "PPO's advantages at dispatch-or-idle, by stock level"),
    "policy": ("studies.diagnose.policy", "why a trained CGRSP policy waits: argmax vs factored vs sampled"),
    "reward": ("studies.diagnose.reward", "step reward of dispatch vs idle by stock (and a Monte-Carlo value)"),
    "reward-alignment": ("studies.diagnose.reward_alignment", "do reward presets rank heuristics as the objective?"),
    "rh-reservation": ("studies.diagnose.rh_reservation", "where RH's reservation puts loose jobs"),
    "design-cost": ("studies.diagnose.design_cost", "what an env's action design costs a rule against simulate()"),
    "versus-rule": ("studies.diagnose.versus_rule", "does a learner lose to the strongest rule on when or on which job?"),
    "headroom": ("studies.cgrsp.headroom", "the headroom map: the rule vs its bounds, and the planner vs the rule (paired, resumable)"),
    "rule-fix": ("studies.cgrsp.rule_fix", "the deferring rule before and after issue #29's two corrections (paired)"),
    "planner-calibration": ("studies.cgrsp.calibration", "the planner's screen horizon against full-day rollouts"),
    "hgsp-tasks1": ("studies.diagnose.hgsp_tasks1", "why HGSP tasks1 misfits the study at its published load"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run diagnostic ``argv[0]`` with the rest of ``argv``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in DIAGNOSTICS:
        width = max(map(len, DIAGNOSTICS))
        lines = "\n".join(f"  {n:{width}s}  {h}" for n, (_, h) in DIAGNOSTICS.items())
        bad = f"unknown diagnostic {args[0]!r}\n" if args and args[0] not in ("-h", "--help") else ""
        print(f"{bad}usage: gpu-sched diagnose NAME [ARGS...]\n\ndiagnostics:\n{lines}", file=sys.stderr if bad else sys.stdout)
        return 2 if bad or not args else 0
    # argparse names the program after sys.argv[0]: every diagnostic's usage line reads
    # `gpu-sched diagnose NAME`, also when a scripts/diagnose_*.py wrapper runs it
    argv0 = sys.argv[0] if sys.argv else ""
    sys.argv[:1] = [f"gpu-sched diagnose {args[0]}"]
    try:
        return int(importlib.import_module(DIAGNOSTICS[args[0]][0]).main(args[1:]) or 0)
    finally:
        sys.argv[:1] = [argv0]


__all__ = ["DIAGNOSTICS", "main"]
