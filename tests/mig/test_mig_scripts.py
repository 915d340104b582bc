import json
import runpy
from pathlib import Path

import pandas as pd

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def script(name):
    return runpy.run_path(str(SCRIPTS / name), run_name="not_main")["main"]


def test_generate_jobs_cli(tmp_path, peer_dir):
    main = script("generate_jobs.py")
    cfgp = peer_dir / "test_config.json"
    assert main([str(cfgp), "-o", str(tmp_path / "a.json"), "--jobs", "20"]) == 0
    assert main([str(cfgp), "-o", str(tmp_path / "b.json"), "--jobs", "20"]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert main([str(cfgp), "-o", str(tmp_path / "bulk"), "--jobs", "5", "--primes", "3", "--first-prime", "10"]) == 0
    man = json.loads((tmp_path / "bulk" / "manifest.json").read_text())
    assert [f["seed"] for f in man["files"]] == [11, 13, 17]
    assert main([str(cfgp), "-o", str(tmp_path / "r"), "--jobs", "5", "--seed-range", "3", "5"]) == 0
    assert sorted(p.name for p in (tmp_path / "r").iterdir())[:3] == ["jobs_seed3.json", "jobs_seed4.json", "jobs_seed5.json"]


def test_generate_jobs_cli_reports_config_errors(tmp_path, capsys):
    main = script("generate_jobs.py")
    bad = tmp_path / "bad.json"
    bad.write_text('{"numberOfJobs": 0, "seed": 1, }')
    assert main([str(bad), "--check"]) == 2
    assert "numberOfJobs = 0 is out of range" in capsys.readouterr().err


def test_mig_experiment_is_resumable(tmp_path, capsys):
    main = script("mig_experiment.py")
    args = ["--n-sets", "2", "--n-jobs", "6", "--time-limit", "2", "--out", str(tmp_path), "--no-figures"]
    assert main(args) == 0
    df = pd.read_csv(tmp_path / "results.csv")
    assert sorted(df["seed"].unique()) == [2, 3] and set(df["method"]) == {"best_fit", "cpsat"}
    assert (df.loc[df.method == "cpsat", "makespan"].to_numpy() <= df.loc[df.method == "best_fit", "makespan"].to_numpy()).all()
    capsys.readouterr()
    assert main(["--n-sets", "3", *args[2:]]) == 0
    assert "2 of 3 data sets already done; running 1" in capsys.readouterr().out
    assert (tmp_path / "seeds" / "seed_5.json").is_file()
