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

# The fast tier compiles with XLA's legacy CPU emitters: its JAX programs each run once or a few times,
# so compiling is most of their cost, and these emitters compile a CGRSP day program in about half the
# time of XLA's default (fusion) emitters, running it as fast (docs/tests.md, "Where the JAX tests'
# time goes"), and generates each program's code in one piece instead of up to 32 parts on threads of
# their own: with two xdist workers on two cores the threads only compete, and splitting the module
# costs CPU of its own. Neither flag changes what a program computes (the bit-for-bit equivalence
# tests run under them). The programs JAX traces and lowers are the same; XLA_FLAGS is part of JAX's
# compile-cache key, so they are stored apart from the commands'. Only where the run deselects every
# e2e and every slow test (those tiers, which play the documented numbers and whole trainings, keep
# XLA's defaults), only before JAX made its backend, only on the jaxlib it was measured on (a flag
# XLA no longer knows aborts the process), and never over a choice the user made in XLA_FLAGS;
# GPU_SCHED_TEST_XLA=default keeps XLA's defaults in the fast tier too.
QUICK_XLA = (("xla_cpu_use_fusion_emitters", "false"), ("xla_cpu_parallel_codegen_split_count", "1"))
QUICK_XLA_JAXLIB = "0.10."


def _fast_tier_only(markexpr: str) -> bool:
    """Whether ``-m markexpr`` deselects every ``e2e`` and every ``slow`` test (the README's fast tier)."""
    if not markexpr:
        return False
    from _pytest.mark.expression import Expression

    try:
        expr = Expression.compile(markexpr)
    except Exception:  # pytest reports a bad expression itself
        return False
    return not any(expr.evaluate(lambda name, m=m, **_: name == m) for m in ("e2e", "slow"))


def _quick_xla(config) -> None:
    from importlib.metadata import PackageNotFoundError, version

    if os.environ.get("GPU_SCHED_TEST_XLA", "quick") != "quick" or not _fast_tier_only(config.option.markexpr):
        return
    try:
        if not version("jaxlib").startswith(QUICK_XLA_JAXLIB):
            return
    except PackageNotFoundError:
        return
    if "jax" in sys.modules:
        from jax._src import xla_bridge

        if xla_bridge._backends:  # too late: the backend read XLA_FLAGS already
            return
    given = os.environ.get("XLA_FLAGS", "")
    quick = [f"--{flag}={value}" for flag, value in QUICK_XLA if f"--{flag}=" not in given]
    os.environ["XLA_FLAGS"] = " ".join([given, *quick]).strip()


def pytest_configure(config):
    _quick_xla(config)


# The files whose tests cost the most CPU, heaviest first (measured with --durations; each tier's
# own, in one list since the markers deselect the rest). xdist hands whole files to its workers in
# collection order (--dist loadfile), and collection is alphabetical, which put the e2e tier's
# longest files (the documented runs, the killed-and-resumed trainings) last, one worker running
# them alone at the end. Started first, the rest of the files fill both workers around them.
HEAVY_FIRST = (
    "tests/test_faults_resume.py",
    "tests/test_documented_runs_rules.py",
    "tests/test_documented_runs_learners.py",
    "tests/rl/test_train_runs_sb3.py",
    "tests/rl/test_train_runs_jax.py",
    "tests/rl/test_train_runs_jax_select.py",
    "tests/rl/test_ppo_jax_train.py",
    "tests/rl/test_multiseed.py",
    "tests/studies/cgrsp/test_ppo_jax_generalist.py",
    "tests/cgrsp/jax/test_adapters.py",
    "tests/cgrsp/jax/test_mixed.py",
    "tests/cgrsp/jax/test_api.py",
    "tests/cgrsp/jax/test_joint_hold_jax.py",
    "tests/cgrsp/jax/test_when_jax.py",
    "tests/cgrsp/jax/test_equivalence.py",
    "tests/cgrsp/jax/test_rules.py",
    "tests/cgrsp/jax/test_native.py",
    "tests/cgrsp/jax/test_illegal.py",
    "tests/cgrsp/jax/test_deadline_credit.py",
    "tests/test_bad_inputs_train.py",
    "tests/test_faults_evaluate.py",
)


@pytest.fixture(scope="module")
def trainer(tmp_path_factory):
    """One per test module: its ``train.py`` runs fork from one server and share a user cache new to the module.

    (tests/rl/train_runs.py's :class:`Trainer`: the shipped-config runs and the killed-and-resumed ones.)
    """
    from tests.rl.train_runs import start_trainer

    t = start_trainer(tmp_path_factory.mktemp("forked"), tmp_path_factory.mktemp("user_cache"))
    yield t
    t.server.close()


def pytest_collection_modifyitems(config, items):
    """The files of :data:`HEAVY_FIRST` first, in its order; every other test keeps its place after them."""
    rank = {f: i for i, f in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


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
