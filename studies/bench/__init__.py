"""``python -m studies bench NAME [ARGS...]``: the benchmarks, one module per benchmark (``studies.bench.NAME``).

Each module has ``main(argv)`` and runs on its own too (``python -m studies.bench.NAME`` from the
checkout root, which is also how ``sim`` starts its fresh child processes). ``NAME --help`` lists
a benchmark's options; ``scripts/bench_NAME.py`` are thin shims kept for old commands.
"""

from __future__ import annotations

from collections.abc import Sequence

from studies.commands import Command, Main, dispatch


def _sim() -> Main:
    from studies.bench.sim import main

    return main


def _env() -> Main:
    from studies.bench.env import main

    return main


def _edge() -> Main:
    from studies.bench.edge import main

    return main


def _hgsp() -> Main:
    from studies.bench.hgsp import main

    return main


def _mig() -> Main:
    from studies.bench.mig import main

    return main


def _train() -> Main:
    from studies.bench.train import main

    return main


def _jax() -> Main:
    from studies.bench.jax import main

    return main


# name -> the benchmark (loaded when run)
BENCHMARKS: dict[str, Command] = {
    "sim": Command(_sim, "CGRSP simulator: jobs/s vs a bare heapq loop, the 30-seed grid, scaling to 100 000 jobs"),
    "env": Command(_env, "CGRSP-v0 env steps/s vs CartPole-v1; rgb_array frame time (--render)"),
    "edge": Command(_edge, "edge schedulers' runtime on 100 tasks vs FCFS-LLF"),
    "hgsp": Command(_hgsp, "HGSP FIFO / Greedy tasks/s and SAGreedy's wall time"),
    "mig": Command(_mig, "MIG generator throughput and CP-SAT vs Best-Fit solve time"),
    "train": Command(_train, "MaskablePPO training frames/s on CGRSP-v0 vs InvalidActionEnvDiscrete"),
    "jax": Command(_jax, "JAX env steps/s vs CGRSP-v0's; ppo_jax training frames/s vs MaskablePPO's (--json)"),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run benchmark ``argv[0]`` with the rest of ``argv`` as its command line; returns the exit status."""
    return dispatch(BENCHMARKS, argv, "python -m studies bench", "benchmark")


__all__ = ["BENCHMARKS", "main"]
