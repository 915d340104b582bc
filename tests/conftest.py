"""Shared pytest configuration."""

import os
import sys

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
# The stores of deterministic reference results in the user's cache (the rules' and heuristics' days,
# gpu_sched_env.core.store.reference_cache) are off: every test computes what it asserts on (a
# compile count, a simulated day), whatever an earlier run left there. The tests of the stores turn
# them on in a temporary cache folder.
os.environ["GPU_SCHED_REFERENCE_CACHE"] = "0"
# Bytecode caches on even under PYTHONDONTWRITEBYTECODE=1: without them every run, and each
# xdist worker, recompiles the project's modules and re-rewrites every test module's asserts
# (about 5 s of CPU per worker on the project's 2-core machine). They are __pycache__/ folders,
# which git ignores.
sys.dont_write_bytecode = False
# JAX's persistent compilation cache (gpu_sched_env.core.jaxcache, set before JAX is imported): a
# rerun of the JAX tests loads their compiled programs instead of compiling them again (tens of
# seconds each); a fresh clone on the same machine reuses it, a new machine compiles once.
# The tests store every program, however small (the commands keep jaxcache.MIN_COMPILE_S): the
# suite runs many small ones (a test's eager ops, its per-state jits), and loading one from the
# cache costs less than compiling it again (measured on tests/cgrsp/jax/test_mixed.py: JAX's
# compile time 7.9 s -> 3.6 s on the second run).
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
from gpu_sched_env.core.jaxcache import use_compile_cache  # noqa: E402 (the package imports no JAX)

use_compile_cache()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """An xdist worker leaves at once when its session is over, skipping the interpreter's teardown.

    Its results are with the controller by then: xdist sends them when the worker's session
    finishes, before this hook, and marks the worker down, so its exit is no crash. The teardown
    it skips (JAX freeing its backends and compiled programs, 1.4-2.3 s; waiting for the
    controller to close the channel; the garbage of a whole suite) held the end of the fast tier
    back by 7-8 s at the end of every run on the project's 2-core machine (docs/tests.md).
    """
    if hasattr(config, "workerinput"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
