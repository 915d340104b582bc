"""The MIG job generator's command line (installed); the studies' experiment and histograms: tests/studies/mig."""

import json


def test_generate_jobs_cli(tmp_path, peer_dir):
    from gpu_sched_env.mig.generator.cli import main

    cfgp = peer_dir / "test_config.json"
    assert main([str(cfgp), "-o", str(tmp_path / "a.json"), "--jobs", "20"]) == 0
    assert main([str(cfgp), "-o", str(tmp_path / "b.json"), "--jobs", "20"]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert main([str(cfgp), "-o", str(tmp_path / "bulk"), "--jobs", "5", "--primes", "3", "--first-prime", "10"]) == 0
    man = json.loads((tmp_path / "bulk" / "manifest.json").read_text())
    assert [f["seed"] for f in man["files"]] == [11, 13, 17]
    assert main([str(cfgp), "-o", str(tmp_path / "r"), "--jobs", "5", "--seed-range", "3", "5"]) == 0
    assert sorted(p.name for p in (tmp_path / "r").iterdir())[:3] == [
        "jobs_seed3.json",
        "jobs_seed4.json",
        "jobs_seed5.json",
    ]


def test_generate_jobs_cli_reports_config_errors(tmp_path, capsys):
    from gpu_sched_env.mig.generator.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"numberOfJobs": 0, "seed": 1, }')
    assert main([str(bad), "--check"]) == 2
    assert "numberOfJobs = 0 is out of range" in capsys.readouterr().err
