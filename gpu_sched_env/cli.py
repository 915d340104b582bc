"""The ``gpu-sched`` command: the installed library's command-line tools.

    gpu-sched compare [--day surge] [--trace FILE] ...   # CGRSP heuristics over seeds (or on a job log)
    gpu-sched trace --day hectic --seed 3 --out t.csv    # write a simulated day/month as a trace
    gpu-sched generate-jobs CONFIG -o jobs.json          # MIG job sets (the Java generator's format)
    gpu-sched evaluate POLICY [--quick]                  # any CGRSP policy on the standard protocol

``evaluate`` is a plug-in of the agents layer (``gpu_sched_agents.evaluate.cli:main``): this
module names it as a string and imports it when the command runs (:func:`_plugin`), so
``gpu_sched_env`` never imports ``gpu_sched_agents``; without the agents package the command
says so and exits with status 2.

The research programme (experiments, benchmarks, diagnostics, the scenarios' reports) lives in
the repository's top-level ``studies/`` package, which the wheel does not install; its command
line is ``python -m studies COMMAND`` from the checkout root (:mod:`studies.commands`).
In a checkout (the editable install of ``scripts/setup.sh``) ``gpu-sched experiments|bench|diagnose``
run that command line in a child process (:func:`_run_studies`); an installed wheel has no
``studies/``, so there they say where it lives and exit with status 2. Each subcommand takes
``--help``. The scripts under ``scripts/`` are thin shims of the same functions.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

Main = Callable[[list[str]], "int | None"]


@dataclass(frozen=True)
class Command:
    """One subcommand: ``load()`` imports its module and returns its ``main(argv)``."""

    load: Callable[[], Main]
    help: str


def _compare() -> Main:
    from gpu_sched_env.cgrsp.commands import compare_main

    return compare_main


def _trace() -> Main:
    from gpu_sched_env.cgrsp.commands import trace_main

    return trace_main


def _generate_jobs() -> Main:
    from gpu_sched_env.mig.generator.cli import main

    return main


def _plugin(target: str) -> Callable[[], Main]:
    """A loader of ``"module:function"``, a command a higher layer provides (resolved when the command runs)."""

    def load() -> Main:
        from gpu_sched_env.core.registry import load_object

        try:
            return load_object(target)
        except ImportError as e:
            why = f"gpu-sched: this command needs the {target.split('.')[0]!r} package ({e}); install gpu_sched_env"

            def missing(argv: list[str]) -> int:
                print(why, file=sys.stderr)
                return 2

            return missing

    return load


# subcommand -> the function behind it (loaded when run); functions take argv, return the exit status
COMMANDS: dict[str, Command] = {
    "compare": Command(_compare, "compare CGRSP policies over seeds, or on a trace"),
    "trace": Command(_trace, "write a simulated CGRSP day or month as a trace"),
    "generate-jobs": Command(_generate_jobs, "generate MIG job sets from a generator config"),
    "evaluate": Command(
        _plugin("gpu_sched_agents.evaluate.cli:main"), "score a CGRSP policy on the standard protocol (report, CIs)"
    ),
}

# commands of the research programme (studies/, checkout only): where they are now
STUDIES_COMMANDS = ("experiments", "bench", "diagnose")


def command(name: str) -> Main:
    """The function behind subcommand ``name``."""
    return COMMANDS[name].load()


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {n:{width}s}  {c.help}" for n, c in COMMANDS.items()]
    return (
        "usage: gpu-sched COMMAND [ARGS...]\n\ncommands:\n"
        + "\n".join(lines)
        + "\n\n`gpu-sched COMMAND --help` for a command's options; the research programme "
        "(experiments, bench, diagnose, ...) is `python -m studies` in a checkout."
    )


def _run_studies(root: Path, argv: list[str]) -> int:
    """``python -m studies ARGV`` of the checkout at ``root``, from the caller's directory.

    A child process with the checkout on its ``PYTHONPATH`` (no ``sys.path`` edit in this one):
    relative paths in ``argv`` keep meaning what the caller meant.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "studies", *argv], env=env, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gpu-sched``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name in STUDIES_COMMANDS:
        root = Path(__file__).resolve().parents[1]  # the checkout, when installed editable
        if (root / "studies" / "__main__.py").is_file():
            return _run_studies(root, [name, *rest])
        print(
            f"gpu-sched: {name!r} is a command of the research programme (studies/), which is not installed "
            f"with the package; from the root of a checkout run: python -m studies {name} "
            f"{' '.join(rest)}".rstrip(),
            file=sys.stderr,
        )
        return 2
    if name not in COMMANDS:
        print(f"gpu-sched: unknown command {name!r}; allowed: {', '.join(COMMANDS)}\n\n{_usage()}", file=sys.stderr)
        return 2
    return int(command(name)(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
