"""Dependencies point down: gpu_sched_env imports without `gpu_sched_agents`; registries find the plug-ins.

The tests are laid out the same way: a library test imports no `studies`; a study's tests live in
tests/studies/<scenario>/.
"""

import ast
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

import gpu_sched_env.core.registry as reg
from gpu_sched_env.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

# The heuristics/RL package as installed (`gpu_sched_agents`) and as the folder of a checkout
# (`agents/`, importable as `agents` from the repository root): neither may be imported.
AGENT_PACKAGES = ("gpu_sched_agents", "agents")


def _is_agents(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in AGENT_PACKAGES)


# A meta-path finder that makes the agents packages (and their submodules) unimportable, as in
# an environment where only the simulator package is installed.
BLOCK_AGENTS = textwrap.dedent(f"""
    import sys
    AGENT_PACKAGES = {AGENT_PACKAGES!r}
    class _NoAgents:
        def find_spec(self, name, path=None, target=None):
            if any(name == p or name.startswith(p + ".") for p in AGENT_PACKAGES):
                raise ModuleNotFoundError(f"blocked for the test: {{name}}", name=name)
            return None
    sys.meta_path.insert(0, _NoAgents())
""")


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_AGENTS + textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.e2e
def test_every_gpu_sched_env_module_imports_without_agents():
    r = _run("""
        import importlib, pkgutil, traceback
        import gpu_sched_env
        failed, n = [], 0
        for m in pkgutil.walk_packages(gpu_sched_env.__path__, "gpu_sched_env."):
            n += 1
            try:
                importlib.import_module(m.name)
            except Exception:
                failed.append((m.name, traceback.format_exc()))
        agents = [k for k in sys.modules if k.split(".")[0] in AGENT_PACKAGES]
        assert not agents, f"agents got imported: {agents}"
        studies = [k for k in sys.modules if k.split(".")[0] == "studies"]
        assert not studies, f"studies got imported: {studies}"
        for name, tb in failed:
            print(name, tb)
        print("MODULES", n, "FAILED", len(failed))
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAILED 0" in r.stdout, r.stdout
    n = int(r.stdout.split("MODULES")[1].split()[0])
    assert n > 60  # really walked the package tree


def test_no_gpu_sched_env_source_imports_agents_even_lazily():
    # the import test above cannot see an import inside a function: read every module's AST
    offenders = []
    for path in sorted((ROOT / "gpu_sched_env").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            if any(_is_agents(n) for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def _imported_names(path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield node.lineno, [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, [node.module or ""]


def test_studies_is_the_top_layer():
    # the research programme (studies/, not installed) may use everything; nothing installed uses it
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in ("gpu_sched_env", "agents")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, names in _imported_names(path)
        if any(n == "studies" or n.startswith("studies.") for n in names)
    ]
    assert offenders == []
    uses = {
        n.split(".")[0]
        for path in (ROOT / "studies").rglob("*.py")
        for _, names in _imported_names(path)
        for n in names
    }
    assert {"gpu_sched_env", "studies"} <= uses  # the walk saw real imports


# the three packages of the house, by the name they are imported as
HOUSE = {"gpu_sched_env": "gpu_sched_env", "agents": "gpu_sched_agents", "studies": "studies"}
# no circle (the algorithm registry names the JAX trainer by string, as plug-ins are named)
KNOWN_CYCLES: list[list[str]] = []


def _module_import_graph(folders=("gpu_sched_env",)):
    """module -> the modules it imports by name (packages by their ``__init__``; lazy imports count too)."""
    mods = {}
    for folder in folders:
        for p in (ROOT / folder).rglob("*.py"):
            parts = p.relative_to(ROOT / folder).with_suffix("").parts
            mods[".".join((HOUSE[folder], *parts[: -1 if parts[-1] == "__init__" else None]))] = p
    edges = {m: set() for m in mods}
    for m, path in mods.items():
        here = m.split(".") if path.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, up level - 1
                    base = ".".join([*here[: len(here) - node.level + 1], *([base] if base else [])])
                # `from pkg import name`: the submodule pkg.name when it is one, else pkg itself
                targets = {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names}
            elif isinstance(node, ast.Import):
                targets = {a.name for a in node.names}
            else:
                continue
            edges[m] |= {t for t in targets if t in mods and t != m}
    return edges


def _cycles(edges):
    state, cycles = {}, []

    def visit(u, path):
        state[u] = "open"
        for v in sorted(edges[u]):
            if state.get(v) == "open":
                cycles.append(path[path.index(v) :] + [v])
            elif v not in state:
                visit(v, path + [v])
        state[u] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    return cycles


def test_no_import_cycle_between_gpu_sched_env_modules():
    edges = _module_import_graph()
    assert "gpu_sched_env.cgrsp.result" in edges["gpu_sched_env.cgrsp.sim"]  # the graph is real
    assert _cycles(edges) == []


def test_no_import_cycle_in_the_whole_house():
    edges = _module_import_graph(tuple(HOUSE))
    # the graph is real: packages count (the old circle studies.commands <-> studies.bench went through them)
    assert "studies.cgrsp.programme.grids" in edges["studies.cgrsp.programme.runner"]
    assert "gpu_sched_env.core.commands" in edges["studies.commands"]
    assert "gpu_sched_agents.heuristics.cgrsp" in edges["studies.cgrsp.planner.cost"]
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b", "a"]]  # and the search finds a circle
    assert _cycles(edges) == KNOWN_CYCLES


def test_simulators_run_policy_objects_without_agents():
    r = _run("""
        import numpy as np
        from gpu_sched_env.hgsp import run
        from gpu_sched_env.llm import simulate as llm_simulate
        from gpu_sched_env.mig.sim import run_policy
        from gpu_sched_env.mig.workload import mig_dataset

        class First:  # a user's own policy: the first legal choice in every scenario
            name = "first"
            def reset(self, state, rng):
                self.rng = rng
            def decide(self, view):
                if hasattr(view, "candidates"):
                    return int(view.candidates[0])
                if hasattr(view, "mask"):
                    return int(np.flatnonzero(view.mask())[0])
                return view.gpus[0]

        print("hgsp", run(First(), "tasks1", "small", 0).summary()["makespan"] > 0)
        print("llm", llm_simulate(First()).summary()["completed"] > 0)
        print("mig", run_policy(mig_dataset(0, 20), First()).metrics.makespan > 0)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["hgsp", "True", "llm", "True", "mig", "True"]


def test_blocker_really_blocks_and_lookup_names_the_missing_plugin():
    r = _run("""
        import importlib
        from gpu_sched_env.core.errors import ConfigError
        for name in ("gpu_sched_agents.heuristics", "agents.heuristics"):
            try:
                importlib.import_module(name)
            except ImportError:
                print("BLOCKED", name)
        from gpu_sched_env.cgrsp import simulate
        try:
            simulate("rh")
        except ConfigError as e:
            print("ERR", e)
    """)
    assert r.returncode == 0, r.stderr
    assert "BLOCKED gpu_sched_agents.heuristics" in r.stdout and "BLOCKED agents.heuristics" in r.stdout
    assert "policy = 'rh' is not known" in r.stdout
    assert "plug-in gpu_sched_agents.heuristics.cgrsp failed to import" in r.stdout


def test_builtin_plugin_list_equals_the_declared_entry_points():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][reg.ENTRY_POINT_GROUP]
    assert declared == reg.BUILTIN_PLUGINS


@pytest.fixture
def fresh_registry_state(monkeypatch):
    monkeypatch.setattr(reg, "_loaded", set())
    monkeypatch.setattr(reg, "_failed", {})


def _fake_entry_points(eps):
    def entry_points(group=None):
        assert group == reg.ENTRY_POINT_GROUP
        return list(eps)

    return entry_points


def test_entry_point_path_loads_declared_and_third_party_modules(monkeypatch, fresh_registry_state, tmp_path):
    # a third-party plug-in that registers an extra HGSP policy under the name "hgsp.extra"
    (tmp_path / "third_party_plugin.py").write_text(
        textwrap.dedent("""
        from gpu_sched_agents.heuristics.hgsp import Greedy
        from gpu_sched_env.hgsp.policies import POLICIES

        class Mine(Greedy):
            name = "mine"

        POLICIES.register("mine", Mine)
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [EntryPoint(n, v, reg.ENTRY_POINT_GROUP) for n, v in reg.BUILTIN_PLUGINS.items()]
    eps.append(EntryPoint("hgsp.extra", "third_party_plugin", reg.ENTRY_POINT_GROUP))
    eps.append(EntryPoint("llmx", "no_such_module_anywhere", reg.ENTRY_POINT_GROUP))  # other scenario
    monkeypatch.setattr(reg, "entry_points", _fake_entry_points(eps))
    assert reg.plugin_modules("hgsp") == ["gpu_sched_agents.heuristics.hgsp", "third_party_plugin"]
    assert reg.plugin_modules("llm") == ["gpu_sched_agents.heuristics.llm"]  # "llmx" is not "llm" or "llm.*"
    from gpu_sched_env.hgsp.policies import POLICIES

    monkeypatch.setattr(POLICIES, "_entries", dict(POLICIES._entries))  # undo the registration after
    assert "mine" in POLICIES.names()
    assert POLICIES.make("mine").name == "mine"
    assert not reg._failed


@pytest.mark.e2e
def test_fallback_path_when_metadata_lists_no_plugin(monkeypatch, fresh_registry_state):
    monkeypatch.setattr(reg, "entry_points", _fake_entry_points([]))
    for scenario, mod in reg.BUILTIN_PLUGINS.items():
        assert reg.plugin_modules(scenario) == [mod]
    # and in a fresh process whose metadata has no entry points, names still resolve
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
        import gpu_sched_env.core.registry as reg
        reg.entry_points = lambda group=None: []
        from gpu_sched_env.cgrsp import POLICY_NAMES
        from gpu_sched_env.hgsp import run
        print(POLICY_NAMES)
        print(run("greedy", "tasks1", "small", 0).summary()["wt"] > 0)
    """),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "'fifo', 'spt', 'edf'" in r.stdout and "True" in r.stdout


def test_failed_plugin_is_reported_not_dropped(monkeypatch, fresh_registry_state):
    monkeypatch.setattr(
        reg,
        "entry_points",
        _fake_entry_points([EntryPoint("mig.broken", "no_such_module_anywhere", reg.ENTRY_POINT_GROUP)]),
    )
    from gpu_sched_env.mig.policies import POLICIES

    with pytest.raises(ConfigError, match="plug-in no_such_module_anywhere failed to import"):
        POLICIES.entry("nope")
    assert POLICIES.make("best_fit").name == "best_fit"  # the built-in plug-in still loaded


# ----------------------------------------------------------------------------- one shape for every scenario
def _py_files(*folders):
    return [p for f in folders for p in sorted((ROOT / f).rglob("*.py"))]


def test_every_scenario_has_the_same_three_homes():
    from gpu_sched_env.core.scenarios import SCENARIOS

    assert [s.name for s in SCENARIOS] == ["cgrsp", "hgsp", "llm", "mig", "edge"]
    for s in SCENARIOS:
        lib = ROOT / "gpu_sched_env" / s.name
        assert (lib / "env.py").is_file() and (lib / "policies.py").is_file() and (lib / "sim.py").is_file(), s.name
        assert s.env.startswith(f"gpu_sched_env.{s.name}.env:"), s.env
        assert (ROOT / "agents" / "heuristics" / s.name / "__init__.py").is_file(), s.name
        assert s.plugin == f"gpu_sched_agents.heuristics.{s.name}"
        assert (ROOT / "studies" / s.name / "__init__.py").is_file(), s.name


def test_env_ids_and_plugins_are_derived_from_the_scenario_table():
    import gpu_sched_env
    from gpu_sched_env.core.scenarios import SCENARIOS

    ids = {i: (s.env, dict(kw)) for s in SCENARIOS for i, kw in s.env_ids.items()}
    assert gpu_sched_env.ENV_TABLE == ids and gpu_sched_env.ENV_IDS == list(ids)
    assert reg.BUILTIN_PLUGINS == {s.name: s.plugin for s in SCENARIOS}
    import gymnasium as gym

    for env_id, (entry, kwargs) in ids.items():
        assert gym.spec(env_id).entry_point == entry and gym.spec(env_id).kwargs == kwargs


def test_solvers_and_studies_live_outside_the_library():
    # the library holds model, simulator and env; solvers (OR-Tools) are agents, reports are studies
    offenders = [
        f"{p.relative_to(ROOT)}:{line}"
        for p in _py_files("gpu_sched_env")
        for line, names in _imported_names(p)
        if any(n == "ortools" or n.startswith("ortools.") for n in names)
    ]
    assert offenders == []
    moved = [
        "hgsp/exact.py",
        "hgsp/orderings.py",
        "hgsp/report.py",
        "llm/report.py",
        "mig/cpsat.py",
        "mig/bruteforce.py",
        "mig/published.py",
        "mig/report.py",
        "mig/histograms.py",
        "edge/ilp.py",
        "edge/llf.py",
        "edge/study.py",
        "edge/report.py",
    ]
    assert [m for m in moved if (ROOT / "gpu_sched_env" / m).exists()] == []
    assert [
        m for m in moved if not ((ROOT / "agents" / "heuristics" / m).exists() or (ROOT / "studies" / m).exists())
    ] == []


def test_no_path_edits_or_imports_by_string_beyond_the_registry():
    # gpu-sched and `python -m studies` reach their modules through the command machinery, which
    # resolves a command's "module:function" string when it runs; besides it, the plug-in registry
    # (entry points) is the one place that imports a module named by a string
    offenders = []
    for p in _py_files("gpu_sched_env", "agents", "studies"):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", None) == "sys":
                offenders.append(f"{p.relative_to(ROOT)}: sys.path")
            if isinstance(node, ast.Attribute) and node.attr in ("import_module", "resolve_name"):
                offenders.append(f"{p.relative_to(ROOT)}: {node.attr}")
            if isinstance(node, ast.Name) and node.id == "__import__":
                offenders.append(f"{p.relative_to(ROOT)}: __import__")
    assert offenders == [
        "gpu_sched_env/core/commands.py: resolve_name",
        "gpu_sched_env/core/registry.py: import_module",
    ]


@pytest.mark.e2e
def test_gpu_sched_names_agents_only_through_its_declared_plugin_commands():
    # gpu_sched_env never imports gpu_sched_agents (tests above); its command table may name a
    # command of the agents layer by string, and only those listed in PLUGIN_COMMANDS
    from gpu_sched_env.cli import GPU_SCHED, PLUGIN_COMMANDS
    from gpu_sched_env.core.commands import walk

    targets = {spelling.split()[-1]: c.target for spelling, c in walk(GPU_SCHED, "gpu-sched")}
    assert {n: t for n, t in targets.items() if not t.startswith("gpu_sched_env.")} == PLUGIN_COMMANDS
    assert all(t.startswith("gpu_sched_agents.") for t in PLUGIN_COMMANDS.values())
    # without the agents packages, gpu-sched still runs its own commands and says what is missing
    r = _run("""
        from gpu_sched_env.cli import main
        print("RC", main(["evaluate", "--help"]))
        try:
            main(["trace", "--help"])
        except SystemExit as e:
            print("TRACE", e.code)
    """)
    assert r.returncode == 0, r.stderr
    assert "RC 2" in r.stdout and "TRACE 0" in r.stdout, r.stdout
    assert "gpu-sched evaluate: not available: module gpu_sched_agents.evaluate.cli is not installed" in r.stderr


# ----------------------------------------------------------------------------- where the tests live
# The library's test folders (and the Hydra helper they share): they test gpu_sched_env and
# gpu_sched_agents, so they must pass in a checkout whose research programme is absent.
LIBRARY_TESTS = ("cgrsp", "core", "edge", "hgsp", "llm", "mig", "rl")
STUDY_TESTS = ROOT / "tests" / "studies"


def _studies_imports(source: str, name: str = "<string>") -> list[int]:
    """Lines of ``import studies...`` and ``from studies... import`` in ``source``, at any depth."""
    lines = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(n == "studies" or n.startswith("studies.") for n in names):
            lines.append(node.lineno)
    return lines


def test_no_library_test_imports_studies():
    # a test of a study lives in tests/studies/<scenario>/ (or tests/*.py for the doors and docs)
    files = [p for d in LIBRARY_TESTS for p in sorted((ROOT / "tests" / d).rglob("*.py"))]
    files.append(ROOT / "tests" / "hydra_conf.py")
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in files for line in _studies_imports(p.read_text(), str(p))]
    assert offenders == []
    assert len(files) > 100  # the walk saw the folders
    # and the scan sees every spelling: top level, aliased, dotted, inside a function, several names
    # (the probe names the package through {s}, so that a line-based grep of this file finds no import)
    probe = textwrap.dedent("""
        import os, {s}.conf as c
        from {s} import commands
        def f():
            from {s}.cgrsp.programme import tables
        class K:
            def g(self):
                import {s}
        from .{s} import not_the_programme
        from gpu_sched_agents.rl.compose import compose_config
        import {s}_elsewhere
    """).format(s="studies")
    assert _studies_imports(probe) == [2, 3, 5, 8]


def _study_test_in_place(path: Path, scenarios: set[str]) -> bool:
    """``path`` (a file under tests/studies/) is in a scenario's folder, or is a benchmark's test beside them."""
    parts = path.relative_to(STUDY_TESTS).parts
    if len(parts) == 1:
        return path.name.startswith("test_bench") and path.suffix == ".py"
    return parts[0] in scenarios


def test_every_study_test_lives_in_its_scenarios_folder():
    # tests/studies/<scenario>/ per scenario of the table; the benchmarks (one command over every
    # scenario, studies.bench) keep tests/studies/test_bench*.py
    from gpu_sched_env.core.scenarios import SCENARIOS

    scenarios = {s.name for s in SCENARIOS}
    files = [p for p in STUDY_TESTS.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert [str(p.relative_to(ROOT)) for p in files if not _study_test_in_place(p, scenarios)] == []
    assert len(files) > 20 and any(p.parent == STUDY_TESTS / "cgrsp" for p in files)  # the walk saw the files
    # and the rule can fail: a flat study test, another folder, a stray file beside the benchmarks
    for bad in ("test_headroom.py", "jax/test_x.py", "notes.md", "bench/test_bench.py"):
        assert not _study_test_in_place(STUDY_TESTS / bad, scenarios), bad
    assert _study_test_in_place(STUDY_TESTS / "test_bench_jax.py", scenarios)
