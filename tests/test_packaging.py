"""The wheel installs `gpu_sched_env` and `gpu_sched_agents`, no top-level `agents`; alone it needs no torch or JAX.

A top-level `agents` would collide with `openai-agents` and the older `agents` distribution:
whichever is installed last silently shadows the other. The install test builds the wheel and
a stand-in distribution that owns `agents`, installs both into a fresh venv (no download: the
third-party dependencies come from this interpreter's site-packages, minus this project's own
install) and runs the simulator and the env there, away from the checkout.

The package without extras (`pip install gpu_sched_env`) is what the simulators, the envs and
`gpu-sched compare / trace / evaluate` of a rule need: pip's resolve of it in a fresh venv holds
no PyTorch, JAX, Ray or CUDA wheel, and the wheel runs those commands in a venv that sees only
the closure of the core dependencies. docs/performance.md ("Install") has the measured sizes.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.venvs import venv_seeing_site, venv_with_links

ROOT = Path(__file__).resolve().parents[1]
# repository folder -> installed package name
INSTALLED_AS = {"gpu_sched_env": "gpu_sched_env", "agents": "gpu_sched_agents"}
# what this interpreter's site-packages may hold of this project (an editable install of a
# checkout) or of another owner of `agents`: none of it may reach the test venv
OWN_ENTRIES = re.compile(r"^(__editable__|(gpu_sched_env|gpu_sched_agents|agents)([-._]|$))", re.I)
MARKER = "the stand-in agents package"


def _source_packages() -> list[str]:
    """Every folder of the repository's packages (data-only ones too), by its installed name."""
    names = []
    for folder, name in INSTALLED_AS.items():
        for d in [ROOT / folder, *sorted((ROOT / folder).rglob("*"))]:
            if d.is_dir() and d.name != "__pycache__" and any(f.is_file() for f in d.iterdir()):
                names.append(".".join([name, *d.relative_to(ROOT / folder).parts]))
    return sorted(names)


def test_pyproject_lists_every_package_under_its_installed_name():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    st = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert st["package-dir"] == {"gpu_sched_agents": "agents"}
    assert sorted(st["packages"]) == _source_packages()
    assert not any(p == "agents" or p.startswith("agents.") for p in st["packages"])


def _pip(*args: str, cwd: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def _copy_of_the_checkout(tmp_path: Path) -> Path:
    """What a build reads, copied so that the checkout gets no build/ or egg-info."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in INSTALLED_AS:
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _build_wheels(tmp_path: Path) -> tuple[Path, Path]:
    """This project's wheel and the stand-in's."""
    src = _copy_of_the_checkout(tmp_path)
    standin = tmp_path / "standin"
    (standin / "agents").mkdir(parents=True)
    (standin / "agents" / "__init__.py").write_text(f"MARKER = {MARKER!r}\n")
    (standin / "pyproject.toml").write_text(
        textwrap.dedent("""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "agents"
        version = "0.0.1"

        [tool.setuptools]
        packages = ["agents"]
    """)
    )
    dist = tmp_path / "dist"
    for d in (src, standin):
        _pip("wheel", "--no-deps", "--no-index", "--no-build-isolation", "-q", "-w", str(dist), str(d), cwd=tmp_path)
    ours = next(dist.glob("gpu_sched_env-*.whl"))
    return ours, next(dist.glob("agents-*.whl"))


def _venv_with_these_dependencies(path: Path) -> Path:
    """A fresh venv that sees this interpreter's third-party packages, not this project's install."""
    return venv_seeing_site(path, OWN_ENTRIES)


RUN_INSTALLED = textwrap.dedent("""
    import sys
    from pathlib import Path

    import agents
    import gymnasium
    import pandas as pd

    import gpu_sched_agents
    import gpu_sched_env
    import gpu_sched_env.core.registry as reg
    from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
    from gpu_sched_env.cgrsp import simulate

    venv, checkout = Path(sys.prefix).resolve(), Path(sys.argv[1]).resolve()
    assert agents.MARKER == sys.argv[2], agents.__file__
    for mod in (agents, gpu_sched_agents, gpu_sched_env):
        assert Path(mod.__file__).resolve().is_relative_to(venv), mod.__file__
    assert not any(Path(p or ".").resolve() == checkout for p in sys.path), sys.path

    ref = simulate("rh")  # the hectic day, seed 0
    assert reg.plugin_modules("cgrsp") == ["gpu_sched_agents.heuristics.cgrsp"]  # the wheel's entry point
    assert not reg._failed, reg._failed
    env = gymnasium.make("CGRSP-v0", window=1000)  # hectic; a window that holds every job
    agent = HeuristicAgent("rh", env)
    obs, _ = env.reset(seed=0)
    done = steps = 0
    while not done:
        obs, _, done, _, info = env.step(agent.predict(obs)[0])
        steps += 1
    pd.testing.assert_frame_equal(env.unwrapped.result("rh").jobs, ref.jobs, check_exact=True)
    print("JOBS", len(ref.jobs), "STEPS", steps, "COMPLETED", info["summary"]["completed"])

    # the console entry point: library commands work, the research programme says where it lives
    import subprocess
    gpu_sched = Path(sys.executable).parent / "gpu-sched"
    r = subprocess.run([str(gpu_sched), "trace", "--day", "quiet", "--out", "t.csv"], capture_output=True, text=True)
    assert r.returncode == 0 and "written to" in r.stdout, r.stderr
    r = subprocess.run([str(gpu_sched), "experiments", "list"], capture_output=True, text=True)
    assert r.returncode == 2 and "not installed with the package" in r.stderr, r.stderr
    assert "python -m studies experiments list" in r.stderr, r.stderr
""")


def _wheel_of_the_checkout(tmp_path: Path) -> Path:
    """The project's wheel, built from a copy of the checkout into ``tmp_path/dist`` (no index, no isolation)."""
    _need_pip_and_setuptools()
    src = _copy_of_the_checkout(tmp_path)
    _pip(
        "wheel",
        "--no-deps",
        "--no-index",
        "--no-build-isolation",
        "-q",
        "-w",
        str(tmp_path / "dist"),
        str(src),
        cwd=tmp_path,
    )
    return next((tmp_path / "dist").glob("*.whl"))


def _need_pip_and_setuptools():
    for tool in ("pip", "setuptools"):  # no build isolation: the build uses this interpreter's
        if importlib.util.find_spec(tool) is None:
            pytest.skip(f"{tool} is not installed (building and installing without download needs it)")


def _run_isolated(python: Path, code: str, *args: str, cwd: Path) -> str:
    """Run ``code`` in ``python`` without PYTHON* variables, user site or the cwd on the path."""
    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    r = subprocess.run(
        [str(python), "-I", "-c", code, *args], cwd=cwd, env=clean_env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@pytest.mark.e2e
def test_wheel_installs_beside_another_agents_package_and_runs(tmp_path):
    _need_pip_and_setuptools()
    ours, standin = _build_wheels(tmp_path)
    with zipfile.ZipFile(ours) as z:
        top = {n.split("/")[0] for n in z.namelist() if not n.split("/")[0].endswith(".dist-info")}
        assert top == {
            "gpu_sched_env",
            "gpu_sched_agents",
        }  # no `studies`: the research programme stays in the checkout
        assert not any(n.startswith("studies/") or "/studies/" in n for n in z.namelist())
        entry_points = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))).decode()
        assert "gpu-sched = gpu_sched_env.cli:main" in entry_points
        assert "gpu_sched_env/cgrsp/data/example_trace.csv" in z.namelist()
        # the one shape: solvers and planners ship with the agents, the reports stay in studies/
        names = set(z.namelist())
        for s in ("cgrsp", "hgsp", "llm", "mig", "edge"):
            assert f"gpu_sched_env/{s}/env.py" in names and f"gpu_sched_agents/heuristics/{s}/__init__.py" in names
        assert {
            "gpu_sched_agents/heuristics/edge/ilp.py",
            "gpu_sched_agents/heuristics/mig/cpsat.py",
            "gpu_sched_agents/heuristics/hgsp/exact.py",
        } <= names
        assert not [
            n
            for n in names
            if n.startswith("gpu_sched_env/")
            and n.rsplit("/", 1)[-1]
            in ("ilp.py", "llf.py", "cpsat.py", "exact.py", "report.py", "study.py", "published.py")
        ]

    python = _venv_with_these_dependencies(tmp_path / "venv")
    _pip("--python", str(python), "install", "--no-deps", "--no-index", "-q", str(ours), str(standin), cwd=tmp_path)
    out = _run_isolated(python, RUN_INSTALLED, str(ROOT), MARKER, cwd=tmp_path)
    jobs, steps, completed = (int(x) for x in out.split()[1::2])
    assert jobs > 0 and completed == jobs and steps >= jobs


@pytest.mark.e2e
def test_editable_install_maps_gpu_sched_agents_to_the_agents_folder(tmp_path):
    # what scripts/setup.sh does (`pip install -e .`), on a copy of the checkout
    _need_pip_and_setuptools()
    src = _copy_of_the_checkout(tmp_path)
    python = _venv_with_these_dependencies(tmp_path / "venv")
    _pip(
        "--python",
        str(python),
        "install",
        "--no-deps",
        "--no-index",
        "--no-build-isolation",
        "-q",
        "-e",
        str(src),
        cwd=tmp_path,
    )
    out = _run_isolated(
        python,
        textwrap.dedent("""
        import importlib.util
        import gpu_sched_agents.heuristics.cgrsp
        import gpu_sched_env
        from gpu_sched_env.cgrsp import simulate
        print(gpu_sched_agents.__file__)
        print(gpu_sched_env.__file__)
        print(importlib.util.find_spec("agents"))
        print(simulate("rh", "quiet", 0).summary()["policy"])
    """),
        cwd=tmp_path,
    )
    assert out.split("\n")[:4] == [
        str(src / "agents" / "__init__.py"),
        str(src / "gpu_sched_env" / "__init__.py"),
        "None",
        "rh",
    ]


# --- the package alone (no extras) ----------------------------------------------------------

# what no install without extras may hold: the learning stacks and the CUDA wheels they bring
LEARNING_STACK = re.compile(
    r"^(torch|torchvision|triton|nvidia-.*|jax|jaxlib|jax-cuda.*|flax|optax|ray|tensorflow.*|tf-.*|tfp-nightly"
    r"|stable-baselines3|sb3-contrib|hydra-core|omegaconf|tensorboard)$"
)
# top-level modules that must not even be findable in the core-only venv
LEARNING_MODULES = ("torch", "jax", "flax", "optax", "ray", "stable_baselines3", "sb3_contrib", "hydra", "omegaconf")


def _pip_into(python: Path, *args: str, cwd: Path) -> str:
    """``pip --python PYTHON ARGS`` (pip of this interpreter acting on a venv that has none of its own)."""
    r = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def _core_requirements() -> list[Requirement]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    return [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]


@pytest.mark.e2e
def test_the_package_alone_resolves_without_a_learning_stack(tmp_path):
    """What `pip install gpu_sched_env` would install into a fresh venv today (PyPI; a dry run, nothing installed)."""
    _need_pip_and_setuptools()
    src = _copy_of_the_checkout(tmp_path)
    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    report = tmp_path / "report.json"
    _pip_into(
        tmp_path / "venv" / "bin" / "python",
        "install",
        "--dry-run",
        "-q",
        "--report",
        str(report),
        str(src),
        cwd=tmp_path,
    )
    names = {canonicalize_name(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]}
    assert "gpu-sched-env" in names
    assert {canonicalize_name(r.name) for r in _core_requirements()} <= names
    assert sorted(n for n in names if LEARNING_STACK.match(n)) == []
    print(f"{len(names)} packages with the project: {sorted(names)}")


def _core_closure() -> set[str]:
    """The installed distributions the core dependencies need, transitively (this interpreter's markers, no extras)."""
    todo, seen = _core_requirements(), set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        for r in map(Requirement, metadata.distribution(name).requires or []):
            wanted = [{"extra": e} for e in req.extras] or [{"extra": ""}]
            if r.marker is None or any(r.marker.evaluate(env) for env in wanted):
                todo.append(r)
    return seen


def _venv_with_only(path: Path, dists: set[str]) -> Path:
    """A fresh venv that sees only ``dists`` of this interpreter's installed distributions (linked, as above)."""
    entries = []
    for name in sorted(dists):
        dist = metadata.distribution(name)
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        entries += [Path(dist.locate_file(top)) for top in sorted(tops)]
    return venv_with_links(path, entries)


RUN_CORE_ONLY = textwrap.dedent("""
    import importlib.util
    import json
    import os
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    import gymnasium as gym

    import gpu_sched_env
    from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
    from gpu_sched_env._registration import ENV_TABLE

    findable = [m for m in sys.argv[1].split(",") if importlib.util.find_spec(m) is not None]
    assert not findable, f"the core-only venv sees {findable}"
    for env_id in ENV_TABLE:  # every env builds and resets
        env = gym.make(env_id)
        env.reset(seed=0)
        env.close()
    env = gym.make("CGRSP-v0", day="quiet", window=1000)
    agent = HeuristicAgent("rh", env)
    obs, _ = env.reset(seed=0)
    done, steps = False, 0
    while not done:
        obs, _, terminated, truncated, info = env.step(agent.predict(obs)[0])
        done, steps = terminated or truncated, steps + 1
    assert steps > 0 and info["summary"]["completed"] > 0, info["summary"]

    bin_ = Path(sys.executable).parent
    run = dict(capture_output=True, text=True, env={**os.environ, "GPU_SCHED_REFERENCE_CACHE": "0"})
    r = subprocess.run([str(bin_ / "gpu-sched"), "compare", "--day", "quiet", "--seeds", "2", "--policies", "rh",
                        "spt", "--executor", "serial", "--no-progress", "--out", "cmp"], **run)
    assert r.returncode == 0 and "Tables written" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(bin_ / "gpu-sched"), "trace", "--day", "quiet", "--out", "t.parquet"], **run)
    assert r.returncode == 0 and Path("t.parquet").is_file(), r.stderr
    r = subprocess.run([str(bin_ / "gpu-sched"), "evaluate", "rh", "--quick", "--workers", "1", "--out", "ev"], **run)
    assert r.returncode == 0 and Path("ev/report.md").is_file() and Path("ev/report.png").is_file(), r.stderr
    # a learned policy needs an extra: the command says which, exit status 2
    with zipfile.ZipFile("model.zip", "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":serialized:": "MaskableMultiInputActorCriticPolicy"}}))
    r = subprocess.run([str(bin_ / "gpu-sched"), "evaluate", "model.zip", "--quick"], **run)
    assert r.returncode == 2 and "pip install 'gpu_sched_env[train]'" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    print("STEPS", steps)
""")


@pytest.mark.e2e
def test_the_package_alone_runs_the_envs_and_gpu_sched_on_the_core_dependencies(tmp_path):
    """The wheel in a venv that sees only the core dependencies' closure: envs, compare, trace, evaluate of a rule."""
    wheel = _wheel_of_the_checkout(tmp_path)
    closure = _core_closure()
    assert not [n for n in closure if LEARNING_STACK.match(n)], sorted(closure)
    python = _venv_with_only(tmp_path / "venv", closure)
    _pip_into(python, "install", "--no-deps", "--no-index", "-q", str(wheel), cwd=tmp_path)
    out = _run_isolated(python, RUN_CORE_ONLY, ",".join(LEARNING_MODULES), cwd=tmp_path)
    assert int(out.split()[-1]) > 0


@pytest.mark.slow
def test_the_package_alone_installs_from_pypi_and_runs(tmp_path):
    """A real `pip install` of the wheel with no extras into a fresh venv (about a minute: 30-odd wheels, 0.7 GB)."""
    wheel = _wheel_of_the_checkout(tmp_path)
    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    _pip_into(python, "install", "-q", str(wheel), cwd=tmp_path)
    installed = json.loads(_pip_into(python, "list", "--format", "json", cwd=tmp_path))
    names = {canonicalize_name(d["name"]) for d in installed}
    assert sorted(n for n in names if LEARNING_STACK.match(n)) == []
    out = _run_isolated(python, RUN_CORE_ONLY, ",".join(LEARNING_MODULES), cwd=tmp_path)
    assert int(out.split()[-1]) > 0
