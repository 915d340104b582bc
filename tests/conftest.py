"""Shared pytest configuration."""

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
# JAX's persistent compilation cache (read by JAX when it is imported; git-ignored): a rerun of the
# JAX tests loads their compiled programs instead of compiling them again (tens of seconds each)
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(Path(__file__).parents[1] / ".cache" / "jax"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.2")

SCRIPTS = Path(__file__).parents[1] / "scripts"


@pytest.fixture
def load_script():
    """``load_script("planner_cost")``: the module of ``scripts/planner_cost.py`` (scripts are not a package)."""

    def load(name: str):
        spec = importlib.util.spec_from_file_location(f"scripts_{name}", SCRIPTS / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    return load
