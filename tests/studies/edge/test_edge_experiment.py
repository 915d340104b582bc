from types import SimpleNamespace

import pandas as pd
import pytest

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.store import CellStore
from studies.edge import experiment


@pytest.mark.e2e
def test_experiment_runs_and_resumes_from_the_shared_store(tmp_path, capsys):
    def _run(*args):
        code = experiment.main(list(args))
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    out = tmp_path / "edge"
    doc = tmp_path / "page.md"
    doc.write_text("# page\n\n<!-- edge-results:start -->\nSTALE-TABLE\n<!-- edge-results:end -->\ntail\n")
    r = _run(
        "--sizes",
        "5,10",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-ablation",
        "--noise-sigma",
        "0",
        "--sensitivity-seeds",
        "1",
        "--update-docs",
        str(doc),
    )
    assert r.returncode == 0, r.stderr
    page = doc.read_text()
    assert "STALE-TABLE" not in page and page.endswith("<!-- edge-results:end -->\ntail\n")
    for head in ("Published vs ours", "Sensitivity to the ILP variants", "Sensitivity to FCFS-LLF's ranking"):
        assert head in page
    pub = page[page.index("Published vs ours") : page.index("**Five-task example**")]
    rows = [ln for ln in pub.splitlines() if ln.startswith("| ") and not ln.startswith("| figure")]
    assert len(rows) >= 15 and all(
        ln.rstrip(" |").split("| ")[-1].split(" ")[0] in ("faithful", "deviates", "missing") for ln in rows
    )
    sens = pd.read_csv(out / "sensitivity.csv")
    assert len(sens) == 8 and sens["default"].sum() == 1
    df = pd.read_csv(out / "scaling.csv")
    assert set(df.scheduler) == {"membatch", "baseline_ilp", "fcfs_llf"} and set(df.n_tasks) == {5, 10}
    five = pd.read_csv(out / "five_task.csv").set_index("scheduler")
    # without noise: the profiles' 115 < 122.5 min (with 5 % noise one repetition may flip them)
    assert five.loc["membatch", "makespan_min"] < five.loc["baseline_ilp", "makespan_min"]
    for png in (
        "makespan_vs_tasks.png",
        "runtime_vs_tasks.png",
        "utilisation_n10.png",
        "utilisation_five.png",
        "gantt_five_membatch.png",
        "gantt_n10_fcfs_llf.png",
    ):
        assert (out / png).stat().st_size > 1000
    report = (out / "report.md").read_text()
    assert "At 10 tasks" in report and "Five-task example" in report and "[" in report
    store = CellStore(out / "cells", version="any")  # reading keys and rows does not depend on the version
    assert len(store.keys()) == 6 and len(store.load()) == 6
    chunks = {p: p.stat().st_mtime_ns for p in store.chunks()}
    r2 = _run(
        "--sizes",
        "5,10,15",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-ablation",
        "--no-figures",
        "--noise-sigma",
        "0",
        "--sensitivity-seeds",
        "0",
    )
    assert r2.returncode == 0, r2.stderr
    assert "6 of 9 points from the store" in r2.stderr
    assert all(p.stat().st_mtime_ns == t for p, t in chunks.items())  # finished points kept, not rewritten
    assert len(store.keys()) == 9
    again = pd.read_csv(out / "scaling.csv")
    pd.testing.assert_frame_equal(again[again.n_tasks < 15].reset_index(drop=True), df)  # stored rows read back
    # other settings are other cells: nothing stale is reused, nothing is refused
    r3 = _run(
        "--sizes",
        "5",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-ablation",
        "--noise-sigma",
        "0",
        "--time-limit",
        "2",
        "--no-figures",
        "--sensitivity-seeds",
        "0",
    )
    assert r3.returncode == 0, r3.stderr
    assert "0 of 3 points from the store" in r3.stderr and len(store.keys()) == 12
    with pytest.raises(ConfigError, match="--sizes"):
        _run("--sizes", "0", "--out", str(tmp_path / "x"))
    with pytest.raises(SystemExit) as bad:  # argparse's choices
        _run("--rounds", "greedy", "--out", str(tmp_path / "y"))
    err = capsys.readouterr().err
    assert bad.value.code == 2 and "--rounds" in err and "load_aware" in err
    with pytest.raises(ConfigError, match="spread_threshold"):
        _run("--llf-spread-threshold", "-1", "--sizes", "5", "--out", str(tmp_path / "z"))
    assert not (tmp_path / "x").exists()  # bad input stops before anything is written
