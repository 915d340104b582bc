"""Shared pytest configuration."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
# Bytecode caches on even under PYTHONDONTWRITEBYTECODE=1: without them every run, and each
# xdist worker, recompiles the project's modules and re-rewrites every test module's asserts
# (about 5 s of CPU per worker on the project's 2-core machine). They are __pycache__/ folders,
# which git ignores.
sys.dont_write_bytecode = False

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
