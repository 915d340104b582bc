"""The research programme's command line: ``python -m studies COMMAND [ARGS...]`` (checkout only).

Run from the repository root: ``python -m`` puts the current folder on ``sys.path`` itself, so
``studies`` (not installed with the package) is found without any path edit. Every command is a
module's ``main(argv)`` reached by an ordinary import inside a small loader (the heavy ones,
PyTorch for ``bench train``, load only when run); ``COMMAND --help`` lists its options. The
library's own commands (``compare``, ``trace``, ``generate-jobs``) are ``gpu-sched``'s.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

Main = Callable[[list[str]], "int | None"]


@dataclass(frozen=True)
class Command:
    """One command: ``load()`` imports its module and returns its ``main(argv)``."""

    load: Callable[[], Main]
    help: str


def dispatch(table: Mapping[str, Command], argv: Sequence[str] | None, prog: str, what: str) -> int:
    """Run ``table[argv[0]]`` with the rest of ``argv``; usage (exit 2) for a missing or unknown name.

    argparse names a program after ``sys.argv[0]``, so it is set to ``"{prog} NAME"`` while the
    command runs: every usage line reads as the command a user types.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in table:
        width = max(map(len, table))
        lines = "\n".join(f"  {n:{width}s}  {c.help}" for n, c in table.items())
        asked = bool(args) and args[0] in ("-h", "--help")
        bad = f"unknown {what} {args[0]!r}; allowed: {', '.join(table)}\n" if args and not asked else ""
        print(f"{bad}usage: {prog} NAME [ARGS...]\n\n{what}s:\n{lines}", file=sys.stdout if asked else sys.stderr)
        return 0 if asked else 2
    argv0 = sys.argv[0] if sys.argv else ""
    sys.argv[:1] = [f"{prog} {args[0]}"]
    try:
        return int(table[args[0]].load()(args[1:]) or 0)
    finally:
        sys.argv[:1] = [argv0]


def _experiments() -> Main:
    from studies.cgrsp.cli import main

    return main


def _bench() -> Main:
    from studies.bench import main

    return main


def _diagnose() -> Main:
    from studies.diagnose import main

    return main


def _strong_rules() -> Main:
    from studies.cgrsp.strong_rules import main

    return main


def _persistence() -> Main:
    from studies.cgrsp.persistence import main

    return main


def _generalise() -> Main:
    from studies.cgrsp.generalise import main

    return main


def _generalist() -> Main:
    from studies.cgrsp.learning.generalist import main

    return main


def _parity() -> Main:
    from studies.cgrsp.learning.parity import main

    return main


def _ablation() -> Main:
    from studies.cgrsp.learning.ablation import main

    return main


def _tune() -> Main:
    from studies.cgrsp.learning.tune import main

    return main


def _hgsp_report() -> Main:
    from studies.hgsp.cli import main

    return main


def _llm_report() -> Main:
    from studies.llm.cli import main

    return main


def _mig_experiment() -> Main:
    from studies.mig.experiment import main

    return main


def _mig_histograms() -> Main:
    from studies.mig.histograms import main

    return main


def _edge_experiment() -> Main:
    from studies.edge.experiment import main

    return main


def _docs_graph() -> Main:
    from studies.docs_graph import main

    return main


COMMANDS: dict[str, Command] = {
    "experiments": Command(_experiments, "CGRSP experiment programme and docs/results.md"),
    "bench": Command(_bench, "benchmarks: sim, env, edge, hgsp, mig, train"),
    "diagnose": Command(_diagnose, "diagnostics: rewards, learned policies vs rules, action designs, RH, HGSP tasks1"),
    "strong-rules": Command(_strong_rules, "CGRSP: the strong-rule table (docs/strong_rules.md)"),
    "persistence": Command(_persistence, "CGRSP: the stock-persistence sweep"),
    "generalise": Command(_generalise, "CGRSP: the generalisation table of a trained run"),
    "generalist": Command(_generalist, "CGRSP: the ppo_jax generalist per regime and on the month (resumable)"),
    "parity": Command(_parity, "CGRSP: ppo_jax per regime from scratch against the best deferring rule (resumable)"),
    "ablation": Command(_ablation, "CGRSP: ppo_jax, issue 34's items on and off per regime (resumable)"),
    "tune": Command(_tune, "CGRSP: ppo_jax learning curves on the selection days"),
    "hgsp-report": Command(
        _hgsp_report, "HGSP: every policy x task set x cluster, orderings, CP-SAT gaps (docs/hgsp.md)"
    ),
    "llm-report": Command(_llm_report, "LLM serving: FIFO vs WSRPT, both engines"),
    "mig-experiment": Command(_mig_experiment, "MIG: Best-Fit vs CP-SAT vs the lower bound (docs/mig.md), resumable"),
    "mig-histograms": Command(_mig_histograms, "MIG: the generator's histograms against the configured distributions"),
    "edge-experiment": Command(
        _edge_experiment, "edge: MemBatch vs baseline ILP vs FCFS-LLF (docs/edge.md), resumable"
    ),
    "docs-graph": Command(_docs_graph, "the import graph of docs/architecture.md"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m studies``; returns the exit status."""
    return dispatch(COMMANDS, argv, "python -m studies", "command")


__all__ = ["COMMANDS", "Command", "dispatch", "main"]
