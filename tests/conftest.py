"""Shared pytest configuration."""

import os
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
# JAX's persistent compilation cache (read by JAX when it is imported; git-ignored): a rerun of the
# JAX tests loads their compiled programs instead of compiling them again (tens of seconds each)
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(Path(__file__).parents[1] / ".cache" / "jax"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")
