"""``gpu-sched compare``'s tables folder is its own: a user's files are kept, a second writer is refused."""

from __future__ import annotations

from gpu_sched_env.cgrsp.commands import COMPARE, COMPARE_FILES
from gpu_sched_env.cli import main
from gpu_sched_env.core.outdir import MANIFEST, check, claim

SMALL = ["compare", "--seeds", "2", "--policies", "fifo", "--executor", "serial", "--no-progress"]


def test_a_folder_with_a_users_file_is_refused_and_with_force_the_file_is_kept(tmp_path, capsys):
    tables = tmp_path / "out" / "hectic"
    tables.mkdir(parents=True)
    (tables / "notes.txt").write_text("mine")
    try:
        main([*SMALL, "--out", str(tmp_path / "out")])
        raise AssertionError("compare wrote beside a user's file without --force")
    except SystemExit as e:
        assert e.code == 2
    assert "holds files gpu-sched compare did not write (e.g. 'notes.txt'" in capsys.readouterr().err
    assert sorted(p.name for p in tables.iterdir()) == ["notes.txt"]  # nothing written
    assert main([*SMALL, "--out", str(tmp_path / "out"), "--force"]) == 0
    assert (tables / "notes.txt").read_text() == "mine" and (tables / "per_seed.csv").is_file()


def test_reruns_and_an_earlier_compares_folder_are_its_own(tmp_path):
    out = tmp_path / "out"
    assert main([*SMALL, "--out", str(out)]) == 0
    assert main([*SMALL, "--out", str(out), "--seeds", "3"]) == 0  # its own folder: rewritten
    (out / "hectic" / MANIFEST).unlink()  # as a compare before manifests left it: compare's files only
    assert set(p.name for p in (out / "hectic").iterdir()) <= {*COMPARE_FILES, ".gpu-sched.lock"}
    assert main([*SMALL, "--out", str(out)]) == 0


def test_a_second_writer_of_one_folder_is_refused(tmp_path, capsys):
    tables = tmp_path / "out" / "hectic"
    with claim(check(tables, COMPARE, {}, files=COMPARE_FILES)):  # another compare is writing it
        assert main([*SMALL, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(tables)!r} is being written by another process" in err
    assert not (tables / "per_seed.csv").exists()
