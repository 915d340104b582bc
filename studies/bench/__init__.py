"""``gpu-sched bench NAME [ARGS...]``: the benchmarks under ``scripts/bench_NAME.py``, run as scripts.

The benchmark programs stay in ``scripts/`` (they re-invoke themselves in child processes
and read ``conf/``); this module only dispatches to them.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Sequence
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
BENCHMARKS = ("sim", "env", "edge", "hgsp", "mig", "train")


def main(argv: Sequence[str] | None = None) -> int:
    """Run benchmark ``argv[0]`` with the rest of ``argv`` as its command line; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in BENCHMARKS:
        bad = f"unknown benchmark {args[0]!r}; " if args and args[0] not in ("-h", "--help") else ""
        print(f"{bad}usage: gpu-sched bench {{{','.join(BENCHMARKS)}}} [ARGS...]", file=sys.stderr if bad else sys.stdout)
        return 2 if bad or not args else 0
    script = SCRIPTS / f"bench_{args[0]}.py"
    saved = sys.argv
    sys.argv = [str(script), *args[1:]]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.argv = saved
    return 0


__all__ = ["BENCHMARKS", "main"]
