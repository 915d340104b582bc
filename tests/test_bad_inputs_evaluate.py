"""``gpu-sched evaluate``'s bad inputs: each is one line naming what was given and what is allowed, exit status 2,
and nothing written (no --out folder, no page, no file beside the inputs)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from gpu_sched_agents.evaluate.cli import main
from gpu_sched_env.cgrsp.trace import EXAMPLE_TRACE

SMALL = ["--seeds", "2", "--regimes", "surge_fresh", "--month-reps", "0", "--jax-days", "0", "--workers", "1"]
FAULTY = textwrap.dedent("""
    import numpy as np

    class Raises:  # the simulator's protocol
        name = "raises"

        def reset(self, view, rng):
            pass

        def decide(self, view):
            if len(view.waiting) >= 1:
                raise ZeroDivisionError("my bug")
            return []

    class ReturnsNone:
        name = "returns_none"

        def reset(self, view, rng):
            pass

        def decide(self, view):
            return None

    class Illegal:
        name = "illegal"

        def reset(self, view, rng):
            pass

        def decide(self, view):
            return [(10**6, 0)]  # no such job

    class PredictIllegal:  # SB3's protocol: an action the mask forbids
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return int(np.flatnonzero(obs["action_mask"] == 0)[0]), state

    class PredictNone:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return None
""")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes (what a refused command must leave as it was; not Python's caches)."""
    files = (p for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts)
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def refused(capsys, argv: list[str], root: Path) -> str:
    """Run ``argv``; assert exit status 2, one line on stderr and no change under ``root``; return the line."""
    before = tree(root)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpu-sched evaluate: ") and "\n" not in err, err
    assert "Traceback" not in err
    assert tree(root) == before, "a refused command wrote or removed a file"
    return err


@pytest.fixture
def faulty(tmp_path, monkeypatch):
    (tmp_path / "faulty_policies.py").write_text(FAULTY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "faulty_policies"
    sys.modules.pop("faulty_policies", None)


def test_an_hgsp_run_folder_is_named_as_one(tmp_path, capsys):
    from hydra_conf import cfg_for
    from omegaconf import OmegaConf

    run = tmp_path / "ppo_hgsp_seed0"
    run.mkdir()
    OmegaConf.save(cfg_for("scenario=hgsp", "algo=ppo"), run / "config.yaml")
    (run / "final_model.zip").write_bytes(b"")  # the layout of a run folder; never opened
    err = refused(capsys, [str(run), "--out", str(tmp_path / "out"), *SMALL], tmp_path)
    assert f"POLICY {str(run)!r}: a train.py run of scenario=hgsp, not of CGRSP-v0" in err
    assert "evaluate scores CGRSP policies" in err and "MissingMandatoryValue" not in err


def test_an_sb3_model_of_another_env_is_named_as_one(tmp_path, capsys):
    from sb3_contrib import MaskablePPO

    from gpu_sched_agents.rl.scenarios import spec_of
    from gpu_sched_env.hgsp.config import HGSPEnvConfig

    env = spec_of("hgsp").make_env(HGSPEnvConfig())
    path = tmp_path / "hgsp_model.zip"
    MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=8, policy_kwargs={"net_arch": [8]}, device="cpu").save(path)
    err = refused(capsys, [str(path), "--out", str(tmp_path / "out"), *SMALL], tmp_path)
    assert f"POLICY {str(path)!r}: an SB3 model of another env (HGSPEnv, observation space Box" in err
    assert "not of CGRSP-v0" in err and "use_sde" not in err and "does not load as" not in err


@pytest.mark.parametrize(
    "given, says",
    [
        ("gone/model.zip", "no such file (expected an SB3 model file (.zip))"),
        ("policy.npz", "no such file (expected an exported ppo_jax policy (.npz))"),
        ("runs/train/nothing_here", "no such file or folder (expected a train.py run folder"),
    ],
)
def test_a_missing_model_path_is_no_such_file(tmp_path, capsys, monkeypatch, given, says):
    monkeypatch.chdir(tmp_path)
    err = refused(capsys, [given, "--out", "out", *SMALL], tmp_path)
    assert f"POLICY {given!r}: {says}" in err and "none of the accepted kinds" not in err


def test_a_folder_as_trace_is_named_a_folder(tmp_path, capsys):
    (tmp_path / "logs").mkdir()
    err = refused(capsys, ["cadr", "--trace", str(tmp_path / "logs"), "--out", str(tmp_path / "out")], tmp_path)
    assert f"--trace {str(tmp_path / 'logs')!r} is a folder; expected a job log file (CSV or Parquet)" in err


def test_a_module_in_the_current_folder_off_the_import_path_gets_a_hint(tmp_path, capsys, monkeypatch):
    (tmp_path / "here_policy_mod.py").write_text(FAULTY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    err = refused(capsys, ["here_policy_mod:Raises", "--out", "out", *SMALL], tmp_path)
    assert "POLICY 'here_policy_mod:Raises': module 'here_policy_mod' does not import" in err
    assert "'here_policy_mod.py' is in the current folder" in err and "run with PYTHONPATH=. or install it" in err


@pytest.mark.parametrize(
    "attr, says",
    [
        ("Raises", "decide(view) raised ZeroDivisionError: my bug"),
        ("ReturnsNone", "decide(view) returned None; allowed: an iterable of (job, slot) pairs"),
        ("Illegal", "decide(view) returned [(1000000, 0)], which the simulator refused (InvalidActionError: job"),
        ("PredictIllegal", "which the env refused (InvalidActionError: action"),
        ("PredictNone", "predict(obs, …) returned None; allowed: a pair (action, state)"),
    ],
)
def test_a_module_policy_that_fails_is_one_line_naming_the_policy_day_seed_and_step(
    tmp_path, capsys, faulty, attr, says
):
    spec = f"{faulty}:{attr}"
    err = refused(capsys, [spec, "--out", str(tmp_path / "out" / "deep"), *SMALL], tmp_path)
    assert f"POLICY {spec!r} on surge, seed 20000, step 1: " in err  # every fault here is at its first decision
    assert says in err
    if "refused" in says:
        assert "allowed:" in err


def test_broken_json_under_the_leaderboard_folder_names_the_file(tmp_path, capsys):
    board = tmp_path / "board"
    board.mkdir()
    (board / "half.json").write_text('{"schema": ')
    err = refused(capsys, ["--leaderboard", str(board)], tmp_path)
    assert f"--leaderboard {str(board)!r}: half.json is not readable JSON" in err
    assert not board.with_suffix(".md").exists()


@pytest.mark.parametrize("page", ["FILE/x.md", "board.txt"])
def test_a_leaderboard_page_that_cannot_be_written_is_one_line(tmp_path, capsys, page):
    board = tmp_path / "board"
    board.mkdir()
    (tmp_path / "FILE").write_text("a file where a folder would be")
    err = refused(capsys, ["--leaderboard", str(board), "--page", str(tmp_path / page)], tmp_path)
    said = ("FILE' is a file, not a folder", "the suffix '.txt' is not allowed")
    assert "--page" in err and any(s in err for s in said), err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (a folder nobody can create in)")
def test_an_out_that_cannot_be_created_is_one_line(tmp_path, capsys):
    err = refused(capsys, ["cadr", "--out", "/proc/gpu_sched_no_such", *SMALL], tmp_path)
    assert "--out '/proc/gpu_sched_no_such': cannot be created" in err
    assert not Path("/proc/gpu_sched_no_such").exists()


def test_regimes_without_a_value_is_refused_naming_the_regimes(tmp_path, capsys):
    err = refused(capsys, ["cadr", "--regimes", "--out", str(tmp_path / "out")], tmp_path)
    assert "--regimes: no regime given; allowed: hectic_fresh, hectic_D900, surge_fresh, surge_D900, or none" in err


def test_regimes_none_is_the_month_only(tmp_path):
    from gpu_sched_agents.evaluate.cli import parser, protocol_of

    proto = protocol_of(parser().parse_args(["cadr", "--regimes", "none", "--month-reps", "2"]))
    assert proto.regimes == () and proto.scopes == ("month",) and proto.name == "custom"


def test_persistence_and_trace_together_are_refused(tmp_path, capsys):
    argv = ["cadr", "--persistence", "--trace", str(EXAMPLE_TRACE), "--out", str(tmp_path / "out"), *SMALL]
    err = refused(capsys, argv, tmp_path)
    assert "--trace and --persistence: each is a look of its own" in err and "give one of them" in err


def test_a_malformed_trace_is_read_before_anything_is_written(tmp_path, capsys):
    bad = tmp_path / "jobs.csv"
    bad.write_text("submit_s,complexity,deadline_s\n0,low,100\n5,enormous,200\n")
    err = refused(capsys, ["cadr", "--trace", str(bad), "--out", str(tmp_path / "out"), *SMALL], tmp_path)
    assert f"--trace {str(bad)!r}: trace row 1 (file line 3), column complexity = 'enormous'" in err
    assert "allowed: low, medium, high" in err


def test_the_same_policy_twice_is_refused(tmp_path, capsys):
    err = refused(capsys, ["cadr", "fifo", "cadr", "--out", str(tmp_path / "out"), *SMALL], tmp_path)
    assert "POLICY 'cadr' is given twice" in err


def test_an_out_of_another_policy_is_refused_without_force(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    manifest = {"schema": "gpu_sched_env/outdir/1", "command": "gpu-sched evaluate", "owner": {"policy": "fifo"}}
    (out / ".gpu-sched.json").write_text(json.dumps({**manifest, "files": ["report.md"]}))
    (out / "report.md").write_text("fifo's report\n")
    err = refused(capsys, ["cadr", "--out", str(out), *SMALL], tmp_path)
    assert f"--out {str(out)!r} holds the results of another policy 'fifo'" in err and "--force" in err


def test_an_out_of_another_command_is_refused_without_force(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".gpu-sched.json").write_text(json.dumps({"command": "gpu-sched compare", "owner": {}, "files": []}))
    err = refused(capsys, ["cadr", "--out", str(out), *SMALL], tmp_path)
    assert f"--out {str(out)!r} belongs to 'gpu-sched compare'" in err and "--force" in err
