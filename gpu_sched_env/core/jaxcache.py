"""JAX's persistent compilation cache for this project's commands, in the user's cache folder.

A JAX program of this project (a vmapped CGRSP day, a PPO update) compiles in tens of seconds on
a 2-core machine; JAX can store the compiled program on disk and load it on the next run. The
cache is keyed by the program, the JAX version and the device, so it is never stale; it lives
where pip keeps its cache (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``gpu_sched_env/jax``), so a
fresh clone on the same machine reuses it. ``gpu-sched evaluate``, ``train.py algo=ppo_jax`` and
the test suite turn it on; ``JAX_COMPILATION_CACHE_DIR`` chooses another folder, and
``GPU_SCHED_JAX_CACHE=0`` turns it off. JAX's own module (``jax.experimental.compilation_cache``)
does the work; this module only picks the folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MIN_COMPILE_S = 0.2  # programs that compile faster than this are not stored


def cache_dir() -> Path:
    """The default folder: ``$XDG_CACHE_HOME/gpu_sched_env/jax`` (``~/.cache/...`` when unset)."""
    from gpu_sched_env.core.store import user_cache_dir

    return user_cache_dir() / "jax"


def use_compile_cache() -> Path | None:
    """Turn the cache on (before or after JAX is imported); returns its folder, None when turned off."""
    if os.environ.get("GPU_SCHED_JAX_CACHE", "1") == "0":
        return None
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(cache_dir()))
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", str(MIN_COMPILE_S))
    if "jax" in sys.modules:  # JAX read its environment at import: tell its config directly
        import jax

        min_s = float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"])
        jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", min_s)
    return Path(os.environ["JAX_COMPILATION_CACHE_DIR"])


__all__ = ["MIN_COMPILE_S", "cache_dir", "use_compile_cache"]
