"""``gpu-sched bench NAME [ARGS...]``: the benchmarks, one module per benchmark (``studies.bench.NAME``).

Each module has ``main(argv)`` and runs on its own too (``python -m studies.bench.NAME`` from the
checkout root, which is also how ``sim`` starts its fresh child processes). ``NAME --help`` lists
a benchmark's options; ``scripts/bench_NAME.py`` are thin shims kept for old commands.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

# name -> one-line help; the module is studies.bench.<name>
BENCHMARKS = {
    "sim": "CGRSP simulator: jobs/s vs a bare heapq loop, the 30-seed grid, scaling to 100 000 jobs",
    "env": "CGRSP-v0 env steps/s vs CartPole-v1; rgb_array frame time (--render)",
    "edge": "edge schedulers' runtime on 100 tasks vs FCFS-LLF",
    "hgsp": "HGSP FIFO / Greedy tasks/s and SAGreedy's wall time",
    "mig": "MIG generator throughput and CP-SAT vs Best-Fit solve time",
    "train": "MaskablePPO training frames/s on CGRSP-v0 vs InvalidActionEnvDiscrete",
    "jax": "JAX env steps/s vs CGRSP-v0's; ppo_jax training frames/s vs MaskablePPO's (--json)",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run benchmark ``argv[0]`` with the rest of ``argv`` as its command line; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in BENCHMARKS:
        width = max(map(len, BENCHMARKS))
        lines = "\n".join(f"  {n:{width}s}  {h}" for n, h in BENCHMARKS.items())
        bad = f"unknown benchmark {args[0]!r}\n" if args and args[0] not in ("-h", "--help") else ""
        print(f"{bad}usage: gpu-sched bench NAME [ARGS...]\n\nbenchmarks:\n{lines}", file=sys.stderr if bad else sys.stdout)
        return 2 if bad or not args else 0
    return int(importlib.import_module(f"studies.bench.{args[0]}").main(args[1:]) or 0)


__all__ = ["BENCHMARKS", "main"]
