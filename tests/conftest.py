"""Shared pytest configuration."""

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
# JAX's persistent compilation cache (read by JAX when it is imported): a rerun of the JAX tests
# loads their compiled programs instead of compiling them again (tens of seconds each). It lives
# in the user's cache folder, like pip's, so a fresh clone on the same machine reuses it; a new
# machine compiles once. The cache is keyed by the program and the JAX version, never stale.
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu_sched_env" / "jax"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")
# Bytecode caches on even under PYTHONDONTWRITEBYTECODE=1: without them every run, and each
# xdist worker, recompiles the project's modules and re-rewrites every test module's asserts
# (about 5 s of CPU per worker on the project's 2-core machine). They are __pycache__/ folders,
# which git ignores.
sys.dont_write_bytecode = False
