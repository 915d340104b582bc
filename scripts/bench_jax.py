"""Benchmark: the JAX env and ppo_jax (shim of `python -m studies bench jax`; `--help`)."""

import sys

from _studies import run_studies

if __name__ == "__main__":
    sys.exit(run_studies("bench", "jax"))
