"""A command that needs an optional package says which extra of pyproject.toml brings it.

The packages are made unimportable for one test: ``sys.modules[name] = None`` (what an absent
package raises: ModuleNotFoundError with ``name`` set) or a patched ``builtins.__import__``.
"""

import builtins
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from gpu_sched_env.core.extras import EXTRA_OF, MissingExtraError, needs_extra

tomllib = pytest.importorskip("tomllib")
ROOT = Path(__file__).resolve().parents[2]


def _absent(monkeypatch, *modules: str) -> None:
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)


def test_a_missing_package_of_an_extra_names_the_distribution_and_the_extra(monkeypatch):
    _absent(monkeypatch, "stable_baselines3")
    with pytest.raises(MissingExtraError) as e, needs_extra("gpu-sched evaluate of an SB3 zip"):
        import stable_baselines3  # noqa: F401
    assert str(e.value).startswith("gpu-sched evaluate of an SB3 zip needs stable-baselines3, which is not installed")
    assert "pip install 'gpu_sched_env[train]'" in str(e.value)
    assert isinstance(e.value, ModuleNotFoundError) and isinstance(e.value, ImportError)
    assert e.value.extra == "train" and e.value.name == "stable_baselines3"
    assert isinstance(e.value.__cause__, ModuleNotFoundError)


def test_a_submodule_counts_as_its_package_and_the_extra_can_be_named(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] == "hydra_plugins":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingExtraError, match=r"needs hydra-optuna-sweeper.*gpu_sched_env\[sweep\]"):
        with needs_extra("hydra/sweeper=optuna"):
            import hydra_plugins.hydra_optuna_sweeper  # noqa: F401
    with pytest.raises(MissingExtraError, match=r"gpu_sched_env\[sweep\]"):
        with needs_extra("a sweep", extra="sweep"):
            _absent(monkeypatch, "hydra")
            import hydra  # noqa: F401


def test_other_import_errors_pass_through_unchanged():
    with pytest.raises(ModuleNotFoundError) as e, needs_extra("anything"):
        import gpu_sched_agents.no_such_module  # noqa: F401 (this project's own module: a bug, not an install)
    assert not isinstance(e.value, MissingExtraError)
    with pytest.raises(ImportError) as e, needs_extra("anything"):
        raise ImportError("cannot import name 'x' from 'torch'", name="torch")  # a broken install, not a missing one
    assert not isinstance(e.value, MissingExtraError)
    with needs_extra("anything"):
        import json  # noqa: F401  (present: nothing happens)


def test_nested_sites_keep_the_outer_request_and_the_inner_extra(monkeypatch):
    _absent(monkeypatch, "optuna")
    with pytest.raises(MissingExtraError) as e, needs_extra("train.py hydra/sweeper=optuna"):
        with needs_extra("the sweeper plug-in", extra="sweep"):
            import optuna  # noqa: F401
    assert str(e.value).startswith("train.py hydra/sweeper=optuna needs optuna") and e.value.extra == "sweep"


def test_every_extra_named_exists_and_brings_the_distribution():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, (dist, extra) in EXTRA_OF.items():
        assert extra in extras, (module, extra)
        named = {canonicalize_name(Requirement(r).name) for r in extras[extra]}
        assert canonicalize_name(dist) in named | {"jaxlib"}, (module, dist, extra)  # jaxlib: jax's own requirement


def test_torch_message_points_to_the_cpu_build(monkeypatch):
    _absent(monkeypatch, "torch")
    cpu_first = r"gpu_sched_env\[train\]'; without a GPU, install PyTorch's CPU build first"
    with pytest.raises(MissingExtraError, match=cpu_first):
        with needs_extra("train.py"):
            import torch  # noqa: F401


# --- the import sites -------------------------------------------------------------------------


def test_executor_ray_without_ray_names_the_ray_extra(monkeypatch):
    from gpu_sched_env.core.fanout import map_cells

    _absent(monkeypatch, "ray")
    with pytest.raises(MissingExtraError, match=r"^executor=ray needs ray.*gpu_sched_env\[ray\]"):
        map_cells(abs, [{"x": -1}, {"x": 2}], executor="ray", progress=False)


def test_an_sb3_learner_without_sb3_names_the_train_extra(monkeypatch):
    from gpu_sched_agents.rl.registry import get_algo

    _absent(monkeypatch, "sb3_contrib")
    with pytest.raises(MissingExtraError, match=r"the SB3 learner sb3_contrib:MaskablePPO needs sb3-contrib"):
        _ = get_algo("ppo").cls
    _absent(monkeypatch, "stable_baselines3")
    with pytest.raises(MissingExtraError, match=r"needs stable-baselines3.*gpu_sched_env\[train\]"):
        _ = get_algo("ppo_unmasked").cls
    assert get_algo("ppo_unmasked").policy == "MultiInputPolicy"  # a name SB3 resolves: no import


def _sb3_zip(path: Path) -> Path:
    """A file that reads as a MaskablePPO zip (its ``data`` names the policy class); loading it imports SB3."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_class": {":serialized:": "MaskableMultiInputActorCriticPolicy"}}))
    return path


def test_gpu_sched_evaluate_of_an_sb3_zip_without_sb3_says_which_extra(monkeypatch, tmp_path, capsys):
    from gpu_sched_env.cli import main

    _absent(monkeypatch, "sb3_contrib")
    zipped = _sb3_zip(tmp_path / "model.zip")
    assert main(["evaluate", str(zipped), "--quick", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpu-sched evaluate: POLICY {str(zipped)!r} (a ppo model) needs sb3-contrib"), err
    assert "pip install 'gpu_sched_env[train]'" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_gpu_sched_evaluate_of_a_run_folder_without_omegaconf_says_which_extra(monkeypatch, tmp_path, capsys):
    from gpu_sched_env.cli import main

    _absent(monkeypatch, "omegaconf")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("algo:\n  name: ppo\n")
    assert main(["evaluate", str(tmp_path / "run"), "--quick", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "(a train.py run folder) needs omegaconf" in err and "gpu_sched_env[train]" in err, err


def test_the_learners_registry_without_omegaconf_names_the_train_extra():
    code = "import sys; sys.modules['omegaconf'] = None\nimport gpu_sched_agents.rl.registry"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("gpu_sched_env.core.extras.MissingExtraError: gpu_sched_agents.rl"), r.stderr
    assert "needs omegaconf" in last and "gpu_sched_env[train]" in last
