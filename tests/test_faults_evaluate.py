"""``gpu-sched evaluate``'s results can be trusted: real processes on one --out, a user's files there, stale days.

* two writers on one ``--out``: the second is refused while the first holds the folder's lock,
  whatever its policy, and the first's report is the first's;
* an existing folder evaluate did not make: refused without ``--force``; with it, no user file is
  replaced or deleted;
* two POLICY arguments of one name get two labels and two folders (no report lost);
* a ``module:attr`` policy whose helper module changed is played again, and the command says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gpu_sched_agents.evaluate.cli import main
from gpu_sched_env.core.outdir import LOCKFILE, MANIFEST

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--seeds", "2", "--regimes", "surge_fresh", "--month-reps", "0", "--jax-days", "0", "--workers", "1"]
# first come, lowest idle slot first (FIFO's dispatch); its reset waits for a file when told to
GATED = textwrap.dedent("""
    import os
    import time
    from pathlib import Path

    from gated_helper import pairs

    class Gated:
        name = "gated"

        def reset(self, view, rng):
            gate = os.environ.get("GATE")
            if gate:
                Path(gate + ".playing").touch()
                t0 = time.monotonic()
                while not Path(gate).exists() and time.monotonic() - t0 < 60:
                    time.sleep(0.05)

        def decide(self, view):
            return pairs(view)
""")
HELPER = "def pairs(view):\n    return list(zip(list(view.waiting), view.idle_slots()))\n"


# what `python -m gpu_sched_env.cli evaluate` imports (~2 s of CPU a process here), loaded once by the fork server
PRELOAD = [
    "gpu_sched_env.cli",
    "gpu_sched_agents.evaluate.cli",
    "gpu_sched_agents.evaluate.protocol",
    "gpu_sched_env.core.plotting",  # matplotlib (MPLBACKEND=Agg, tests/conftest.py): the report's figure
]


@pytest.fixture(scope="module")
def forks(tmp_path_factory):
    """One fresh interpreter with evaluate's modules imported, forking a process per command (tests/forked.py)."""
    from tests.forked import ForkServer

    server = ForkServer(PRELOAD, tmp_path_factory.mktemp("forked"))
    yield server
    server.close()


def evaluate(*argv: str, cwd: Path, env: dict[str, str] | None = None, wait: bool = True, forks=None):
    """``python -m gpu_sched_env.cli evaluate ARGV`` in a process of its own (its modules found in ``cwd``).

    ``forks`` (the module's fork server): the process is forked from an interpreter that imported
    evaluate's modules already, instead of starting Python afresh; it is still a process of its own
    (its pid, its exit status and output, its lock on ``--out``).
    """
    if forks is not None:
        env = {"PYTHONPATH": str(cwd), **(env or {})}
        args = ("python", "evaluate", *argv)
        if wait:
            return forks.run(args, cwd, env, module="gpu_sched_env.cli")
        return forks.start(args, cwd, env, module="gpu_sched_env.cli")
    env = {**os.environ, "PYTHONPATH": str(cwd), **(env or {})}
    cmd = [sys.executable, "-m", "gpu_sched_env.cli", "evaluate", *argv]
    if wait:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def gated(tmp_path):
    (tmp_path / "gated_policy.py").write_text(GATED)
    (tmp_path / "gated_helper.py").write_text(HELPER)
    return "gated_policy:Gated"


def test_a_second_writer_on_one_out_is_refused_while_the_first_holds_it(tmp_path, gated, forks):
    out, gate = tmp_path / "out", tmp_path / "gate"
    first = evaluate(gated, "--out", str(out), *SMALL, cwd=tmp_path, env={"GATE": str(gate)}, wait=False, forks=forks)
    try:
        t0 = time.monotonic()
        while not Path(f"{gate}.playing").exists():  # the first is playing its days, its lock held
            assert first.poll() is None, first.communicate()
            assert time.monotonic() - t0 < 60
            time.sleep(0.05)
        held = files(out)  # the first is blocked in its first day's reset: nothing of it changes now
        same, other = (
            evaluate(*spec, "--out", str(out), *SMALL, cwd=tmp_path, wait=False, forks=forks)
            for spec in ([gated], ["fifo"])
        )
        errs = [p.communicate(timeout=120)[1] for p in (same, other)]
        assert (same.returncode, other.returncode) == (2, 2), errs
        for err in errs:
            assert err.count("\n") == 1 and err.startswith(f"gpu-sched evaluate: --out {str(out)!r}"), err
        assert f"--out {str(out)!r} is being written by another process (pid {first.pid}: " in errs[0]
        assert "wait for it to finish or choose another --out" in errs[0]
        assert files(out) == held  # the refused two wrote nothing
    finally:
        gate.touch()
        _, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr
    report = json.loads((out / "report.json").read_text())
    assert report["policy"]["spec"] == gated and report["policy"]["label"] == "gated"
    assert json.loads((out / MANIFEST).read_text())["owner"] == {"policy": gated}


def test_a_later_writer_of_another_policy_is_refused_and_the_first_report_kept(tmp_path, forks):
    out = tmp_path / "out"
    assert evaluate("cadr", "--out", str(out), *SMALL, cwd=tmp_path, forks=forks).returncode == 0
    kept = files(out)
    late = evaluate("fifo", "--out", str(out), *SMALL, cwd=tmp_path, forks=forks)
    assert late.returncode == 2
    assert f"--out {str(out)!r} holds the results of another policy 'cadr'" in late.stderr and "--force" in late.stderr
    assert files(out) == kept and json.loads((out / "report.json").read_text())["policy"]["spec"] == "cadr"


def test_a_users_files_in_an_existing_out_survive(tmp_path, capsys, forks):
    out = tmp_path / "mine"
    (out / "days").mkdir(parents=True)
    (out / "days" / "important.csv").write_text("a,b\n1,2\n")
    (out / "report.md").write_text("my own notes\n")
    theirs = files(out)
    plain = evaluate("cadr", "--out", str(out), *SMALL, cwd=tmp_path, forks=forks)
    assert plain.returncode == 2
    assert f"--out {str(out)!r} holds files gpu-sched evaluate did not write" in plain.stderr
    assert "pass --force" in plain.stderr and "choose another --out" in plain.stderr
    forced = evaluate("cadr", "--out", str(out), "--force", *SMALL, cwd=tmp_path, forks=forks)
    assert forced.returncode == 2
    assert "'report.md' is there and gpu-sched evaluate did not write it" in forced.stderr
    assert files(out) == theirs  # both refused before anything was written
    (out / "report.md").rename(tmp_path / "notes.md")  # the user moves the one file of the same name
    assert main(["cadr", "--out", str(out), "--force", *SMALL]) == 0
    assert (out / "days" / "important.csv").read_text() == "a,b\n1,2\n"
    manifest = json.loads((out / MANIFEST).read_text())
    assert "days/important.csv" not in manifest["files"] and "report.md" in manifest["files"]
    assert json.loads((out / "report.json").read_text())["policy"]["spec"] == "cadr"
    capsys.readouterr()
    assert main(["cadr", "--out", str(out), *SMALL]) == 0  # its own folder now: no --force, the days reused
    assert "surge_fresh: reused" in capsys.readouterr().out
    assert (out / "days" / "important.csv").read_text() == "a,b\n1,2\n" and (out / LOCKFILE).is_file()


def _npz(path: Path) -> Path:
    """A small exported ppo_jax actor of the joint design (random weights)."""
    from gpu_sched_agents.rl.ppo_jax.export import save_policy
    from gpu_sched_env.cgrsp.env import CGRSPEnv
    from gpu_sched_env.cgrsp.jax.bench import joint_heads_config

    env = CGRSPEnv(joint_heads_config("surge"))
    width = sum(int(np.prod(s.shape)) for k, s in env.observation_space.spaces.items() if k != "action_mask")
    n, rng = int(env.action_space.n), np.random.default_rng(0)
    params = {
        "pi_0": {"kernel": rng.normal(0, 0.1, (width, 8)), "bias": np.zeros(8)},
        "pi_out": {"kernel": rng.normal(0, 0.1, (8, n)), "bias": np.zeros(n)},
    }
    path.parent.mkdir(parents=True)
    return save_policy(path, {"params": params}, width, n)


def test_two_policies_of_one_name_get_two_labels_and_two_folders(tmp_path, capsys):
    a, b = _npz(tmp_path / "A" / "actor.npz"), _npz(tmp_path / "B" / "actor.npz")
    out = tmp_path / "out"
    assert main([str(a), str(b), "--out", str(out), *SMALL]) == 0
    said = capsys.readouterr().out
    assert f"POLICY {str(a)!r}: labelled 'ppo_jax (actor) [A]'" in said
    assert f"POLICY {str(b)!r}: labelled 'ppo_jax (actor) [B]'" in said
    reports = {p.parent.name: json.loads(p.read_text())["policy"] for p in out.glob("*/report.json")}
    assert len(reports) == 2
    assert sorted(r["spec"] for r in reports.values()) == sorted([str(a), str(b)])
    assert sorted(r["label"] for r in reports.values()) == ["ppo_jax (actor) [A]", "ppo_jax (actor) [B]"]


@pytest.mark.e2e
def test_a_module_policy_whose_helper_changed_is_played_again(tmp_path, gated):
    out = tmp_path / "out"
    first = evaluate(gated, "--out", str(out), *SMALL, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "surge_fresh: 2 days of the policy" in first.stdout
    again = evaluate(gated, "--out", str(out), *SMALL, cwd=tmp_path)
    assert again.returncode == 0 and "surge_fresh: reused" in again.stdout and "recomputing" not in again.stdout
    key = json.loads((out / "days" / "key.json").read_text())
    assert str((tmp_path / "gated_helper.py").resolve()) in key["fingerprint"]["sources"]
    (tmp_path / "gated_helper.py").write_text(HELPER.replace("list(view.waiting)", "[*view.waiting]"))
    changed = evaluate(gated, "--out", str(out), *SMALL, cwd=tmp_path)
    assert changed.returncode == 0, changed.stderr
    assert f"the days stored in {out / 'days'} were made by another model, env config or policy code" in (
        changed.stdout
    )
    assert "recomputing" in changed.stdout and "surge_fresh: reused" not in changed.stdout
    assert "surge_fresh: 2 days of the policy" in changed.stdout
    assert json.loads((out / "days" / "key.json").read_text())["fingerprint"] != key["fingerprint"]


def test_an_output_folder_deletes_only_what_it_recorded_and_locks_out_a_second_claim(tmp_path):
    """The folder API under evaluate: --force adopts a user's folder and still never touches a user's file."""
    from gpu_sched_env.core.errors import ConfigError
    from gpu_sched_env.core.outdir import check, claim

    out = tmp_path / "theirs"
    (out / "days").mkdir(parents=True)
    (out / "days" / "user.csv").write_text("x\n")
    with pytest.raises(ConfigError, match=r"holds files cmd did not write \(e\.g\. 'days/user\.csv'.*pass --force"):
        check(out, "cmd", {"policy": "p"}, files=["a.txt"])
    with claim(check(out, "cmd", {"policy": "p"}, files=["a.txt"], force=True)) as folder:
        (out / "a.txt").write_text("mine\n")
        assert folder.own("a.txt") and not folder.own("days/user.csv")
        assert not folder.remove_own("days/user.csv")
        with pytest.raises(ConfigError, match="'days/user.csv' is there and cmd did not write it"):
            folder.record(["days/user.csv"])
        with pytest.raises(ConfigError, match=f"{str(out)!r} is being written by another process \\(pid {os.getpid()}"):
            with claim(check(out, "cmd", {"policy": "p"}, files=["a.txt"])):
                pass
        assert folder.remove_own("a.txt") and not (out / "a.txt").exists()
    assert (out / "days" / "user.csv").read_text() == "x\n"
    assert json.loads((out / MANIFEST).read_text())["owner"] == {"policy": "p"}
    with claim(check(out, "cmd", {"policy": "p"}, files=["a.txt"])):  # its own now, and the lock released
        pass
    made = tmp_path / "new" / "deeper"
    with pytest.raises(ConfigError, match="found while writing"):
        with claim(check(made, "cmd", {"policy": "p"}, files=["r.txt"])):
            (made / "r.txt").write_text("half\n")
            raise ConfigError("found while writing")
    assert not (tmp_path / "new").exists()  # the folders it made went with its files


def test_an_upgrade_of_the_package_plays_the_days_again(tmp_path, capsys, monkeypatch):
    import gpu_sched_env

    out = tmp_path / "out"
    assert main(["cadr", "--out", str(out), *SMALL]) == 0
    assert main(["cadr", "--out", str(out), *SMALL]) == 0
    assert "surge_fresh: reused" in capsys.readouterr().out
    monkeypatch.setattr(gpu_sched_env, "__version__", gpu_sched_env.__version__ + ".post1")
    assert main(["cadr", "--out", str(out), *SMALL]) == 0
    said = capsys.readouterr().out
    assert f"the days stored in {out / 'days'} were made by another package version" in said
    assert "recomputing" in said and "surge_fresh: reused" not in said
    assert json.loads((out / "days" / "key.json").read_text())["package"] == gpu_sched_env.__version__


def test_a_folder_of_an_earlier_evaluate_is_its_own_and_its_days_are_played_again(tmp_path, capsys, forks):
    """Before manifests, evaluate left days/key.json naming the POLICY: that folder is still evaluate's."""
    out = tmp_path / "old"
    (out / "days").mkdir(parents=True)
    old_key = {"policy": {"spec": "cadr", "kind": "rule"}, "fingerprint": {}, "protocol": {}}
    (out / "days" / "key.json").write_text(json.dumps(old_key))
    (out / "days" / "surge_fresh.csv").write_text("stale\n")
    (out / "notes.txt").write_text("mine\n")
    late = evaluate("fifo", "--out", str(out), *SMALL, cwd=tmp_path, forks=forks)
    assert late.returncode == 2 and "holds the results of another policy 'cadr' (its days/key.json" in late.stderr
    assert main(["cadr", "--out", str(out), *SMALL]) == 0
    said = capsys.readouterr().out
    assert "made by an earlier version of gpu-sched evaluate" in said and "surge_fresh: 2 days of the policy" in said
    assert (out / "notes.txt").read_text() == "mine\n" and "stale" not in (out / "days" / "surge_fresh.csv").read_text()
