"""The wheel installs `gpu_sched_env` and `gpu_sched_agents`, never a top-level `agents`.

A top-level `agents` would collide with `openai-agents` and the older `agents` distribution:
whichever is installed last silently shadows the other. The install test builds the wheel and
a stand-in distribution that owns `agents`, installs both into a fresh venv (no download: the
third-party dependencies come from this interpreter's site-packages, minus this project's own
install) and runs the simulator and the env there, away from the checkout.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

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
    """A fresh venv that sees this interpreter's third-party packages, not this project's install.

    The site-packages entries are linked into one folder that a ``.pth`` file appends to the
    venv's path, after the venv's own site-packages; the links leave out this project's
    editable install (its ``.pth`` and finder) and metadata, so they cannot leak in.
    """
    venv.EnvBuilder(with_pip=False).create(path)
    python = path / "bin" / "python"
    deps = path / "deps"
    deps.mkdir()
    for site in dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")):
        for entry in Path(site).iterdir():
            if not OWN_ENTRIES.match(entry.name) and entry.suffix != ".pth" and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "zz_shared_deps.pth").write_text(f"{deps}\n")
    return python


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
