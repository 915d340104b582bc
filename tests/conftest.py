"""Shared pytest configuration."""

import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")
# Bytecode caches on even under PYTHONDONTWRITEBYTECODE=1: without them every run, and each
# xdist worker, recompiles the project's modules and re-rewrites every test module's asserts
# (about 5 s of CPU per worker on the project's 2-core machine). They are __pycache__/ folders,
# which git ignores.
sys.dont_write_bytecode = False
# JAX's persistent compilation cache (gpu_sched_env.core.jaxcache, set before JAX is imported): a
# rerun of the JAX tests loads their compiled programs instead of compiling them again (tens of
# seconds each); a fresh clone on the same machine reuses it, a new machine compiles once.
from gpu_sched_env.core.jaxcache import use_compile_cache  # noqa: E402 (the package imports no JAX)

use_compile_cache()
