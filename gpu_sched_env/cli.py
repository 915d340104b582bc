"""The ``gpu-sched`` command: one entry point for the toolkit's command-line tools.

    gpu-sched compare [--day surge] [--trace FILE] ...   # CGRSP heuristics over seeds (or on a job log)
    gpu-sched trace --day hectic --seed 3 --out t.csv    # write a simulated day/month as a trace
    gpu-sched generate-jobs CONFIG -o jobs.json          # MIG job sets (the Java generator's format)
    gpu-sched experiments all                            # CGRSP experiment programme (checkout only)
    gpu-sched bench sim                                  # benchmarks (checkout only)
    gpu-sched diagnose reward --seeds 3                  # diagnostics (checkout only)

``compare``, ``trace`` and ``generate-jobs`` are part of the installed library. The research
programme (``experiments``, ``bench``, ``diagnose``) lives in the repository's top-level
``studies/`` package, which the wheel does not install: those commands work in a checkout
(an editable install or the repository root) and say so elsewhere. Each subcommand takes
``--help``. The scripts under ``scripts/`` are thin wrappers around the same functions.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

# subcommand -> (module, function, one-line help); functions take argv and return the exit status
COMMANDS: dict[str, tuple[str, str, str]] = {
    "compare": ("gpu_sched_env.cgrsp.commands", "compare_main", "compare CGRSP policies over seeds, or on a trace"),
    "trace": ("gpu_sched_env.cgrsp.commands", "trace_main", "write a simulated CGRSP day or month as a trace"),
    "generate-jobs": ("gpu_sched_env.mig.generator.cli", "main", "generate MIG job sets from a generator config"),
    "experiments": ("studies.cgrsp.cli", "main", "CGRSP experiment programme and docs/results.md (checkout only)"),
    "bench": ("studies.bench", "main", "benchmarks: sim, env, edge, hgsp, mig, train (checkout only)"),
    "diagnose": ("studies.diagnose", "main", "diagnostics: rewards, learned policies vs rules, action designs, RH (checkout only)"),
}


def checkout_root() -> Path | None:
    """The repository root when ``gpu_sched_env`` is imported from a checkout (it has ``studies/``)."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "studies" / "__init__.py").is_file() else None


def import_studies(module: str) -> ModuleType:
    """Import ``studies.<...>`` from the checkout this package was loaded from.

    Raises:
        SystemExit: outside a checkout (an installed wheel has no ``studies``), with a message
            that says where the command is available.
    """
    root = checkout_root()
    if root is None:
        raise SystemExit(f"error: {module.split('.')[0]!r} is the research programme of the gpu_sched_env "
                         "repository and is not installed with the package; run this command from a "
                         "checkout (git clone ... && pip install -e .)")
    if str(root) not in sys.path:
        sys.path.append(str(root))
    return importlib.import_module(module)


def command(name: str) -> Callable[[list[str] | None], int]:
    """The function behind subcommand ``name``."""
    module, func, _ = COMMANDS[name]
    mod = import_studies(module) if module.startswith("studies") else importlib.import_module(module)
    return getattr(mod, func)


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {n:{width}s}  {h}" for n, (_, _, h) in COMMANDS.items()]
    return "usage: gpu-sched COMMAND [ARGS...]\n\ncommands:\n" + "\n".join(lines) + "\n\n`gpu-sched COMMAND --help` for a command's options."


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gpu-sched``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"gpu-sched: unknown command {name!r}; allowed: {', '.join(COMMANDS)}\n\n{_usage()}", file=sys.stderr)
        return 2
    return int(command(name)(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
