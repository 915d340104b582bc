"""The ppo_jax parity study: its criterion, its pairing, and a tiny resumable run."""

import json

import numpy as np
import pandas as pd
import pytest

from gpu_sched_env.core.criteria import tolerance
from studies.cgrsp.learning import parity as study


def test_tolerance_and_parity_follow_the_criterion():
    assert tolerance(44.0) == pytest.approx(0.44) and tolerance(2.0) == 0.05
    ok = {"wait_ci_high": 0.4, "rule_wait": 44.0, "miss_diff": 0.0}
    assert study.at_parity(ok)
    assert not study.at_parity({**ok, "wait_ci_high": 0.45})  # above 1 % of 44 min
    assert not study.at_parity({**ok, "miss_diff": 0.01})  # misses more


def test_paired_uses_common_days_and_a_t_interval():
    rng = np.random.default_rng(0)
    rule = pd.DataFrame({"seed": range(50), "mean_wait_min": rng.normal(45, 3, 50), "miss_pct": 0.0})
    learned = rule.assign(mean_wait_min=rule.mean_wait_min + 1.0 + rng.normal(0, 0.1, 50)).iloc[5:]
    p = study.paired(learned, rule, "seed")
    assert p["n"] == 45
    assert p["wait_ci_low"] < p["wait_diff"] < p["wait_ci_high"] and 0.9 < p["wait_diff"] < 1.1
    assert p["wait_ci_high"] - p["wait_ci_low"] < 0.1  # paired: the day-to-day spread (3 min) cancels


def test_paired_bounds_the_miss_difference_from_above():
    """The miss bound: one day with a job more missed in 100 has a positive mean and a wider upper bound."""
    rule = pd.DataFrame({"seed": range(100), "mean_wait_min": 44.0, "miss_pct": 0.0})
    learned = rule.assign(miss_pct=np.where(rule.seed == 7, 0.105, 0.0))
    p = study.paired(learned, rule, "seed")
    assert p["miss_diff"] == pytest.approx(0.00105)
    assert p["miss_ci_high"] == pytest.approx(0.00105 + 1.984217 * 0.0105 / 10, rel=1e-4)
    assert study.paired(rule, rule, "seed")["miss_ci_high"] == 0.0


def test_an_out_folder_refuses_other_training_settings(tmp_path):
    from gpu_sched_env.core.errors import ConfigError

    base = ["--budget", "64", "--out", str(tmp_path), "--regimes", "hectic_fresh"]
    args = study.parse_args([*base, "--override", "algo.gamma=0.95"])
    study.check_settings(tmp_path, args)  # first use: recorded
    study.check_settings(tmp_path, study.parse_args([*base, "--override", "algo.gamma=0.95", "--budget", "128"]))
    with pytest.raises(ConfigError, match=r"override: \['algo.gamma=0.95'\] there, \['algo.gamma=0.9'\] now"):
        study.check_settings(tmp_path, study.parse_args([*base, "--override", "algo.gamma=0.9"]))
    with pytest.raises(ConfigError, match="select_every: 0 there, 1000 now"):
        study.check_settings(
            tmp_path, study.parse_args([*base, "--override", "algo.gamma=0.95", "--select-every", "1000"])
        )


def test_the_selection_period_is_whole_updates(tmp_path):
    """``--select-every`` rounds down to whole updates: train.py acts at the first update reaching each multiple."""
    cfg = study.regime_config("hectic_fresh", 3_000_000, n_envs=64, n_steps=128)  # 8 192 steps an update
    for every, period in ((250_000, 30 * 8192), (8192, 8192), (100, 8192)):
        out = study.seeds_config(cfg, [0], tmp_path / "run", every, 0, 1, 100, "objective", [])
        assert out.algo.select_every == period, every
    assert study.seeds_config(cfg, [0], tmp_path / "run", 0, 0, 1, 100, "objective", []).algo.select_every is None
    assert study.whole_updates(cfg, 500_000) == 61 * 8192


@pytest.mark.slow
def test_tiny_study_writes_rows_and_resumes(tmp_path, capsys):
    argv = [
        "--budget",
        "64",
        "--out",
        str(tmp_path),
        "--regimes",
        "hectic_fresh",
        "--seeds",
        "0",
        "1",
        "--jax-days",
        "3",
        "--confirm-days",
        "2",
        "--n-envs",
        "4",
        "--n-steps",
        "16",
        "--select-every",
        "32",
        "--select-days",
        "2",
    ]
    assert study.main(argv) == 0
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert rows.seed.tolist() == [0, 1] and (rows.jax_n == 3).all() and (rows.v0_n == 2).all()
    assert (tmp_path / "table.md").read_text().count("hectic_fresh") >= 2
    assert (tmp_path / "hectic_fresh_b64" / "seed1.npz").exists()
    assert (tmp_path / "hectic_fresh_b64" / "seed0_select.csv").exists()  # the selection evaluations
    made = (tmp_path / "commands.json").read_text()
    assert json.loads(made)[0]["command"] == "python -m studies parity " + " ".join(argv)
    assert study.main(argv) == 0  # resumed: nothing left to do, the rows stay
    assert len(pd.read_csv(tmp_path / "rows.csv")) == 2
    assert (tmp_path / "commands.json").read_text() == made  # a rerun that added no row is not listed

    # the trained run folders judged by --from: each seed's row as the study's own judging wrote it
    judged = tmp_path / "judged"
    runs = str(tmp_path / "hectic_fresh_b64" / "runs" / "seeds0_1")
    assert study.main(["--from", runs, "--out", str(judged), "--jax-days", "3", "--confirm-days", "2"]) == 0
    again = pd.read_csv(judged / "judged.csv")
    assert again.seed.tolist() == [0, 1] and again.run.tolist() == [f"{runs}/seed0", f"{runs}/seed1"]
    cols = [c for c in rows.columns if c.startswith(("jax_", "v0_")) or c in ("regime", "parity", "tolerance_min")]
    pd.testing.assert_frame_equal(again[cols], rows[cols])
    assert "hectic_fresh" in (judged / "judged.md").read_text()


def test_a_run_folder_the_judge_cannot_read_is_one_line_naming_it(tmp_path, capsys):
    from omegaconf import OmegaConf

    from studies.commands import main

    def judge(folder):
        assert main(["parity", "--from", str(folder), "--out", str(tmp_path / "out")]) == 2
        return capsys.readouterr().err.strip().splitlines()

    (tmp_path / "empty").mkdir()
    assert judge(tmp_path / "empty") == [
        f"python -m studies parity: --from {tmp_path / 'empty'}: no config.yaml; expected a train.py run folder "
        "(or a train.seeds one)"
    ]
    sb3 = tmp_path / "sb3"
    sb3.mkdir()
    OmegaConf.save(OmegaConf.create({"algo": {"name": "ppo"}, "scenario": {"name": "cgrsp"}}), sb3 / "config.yaml")
    assert "a run of scenario=cgrsp, algo=ppo; parity judges CGRSP ppo_jax actors" in judge(sb3)[0]
    other = tmp_path / "hgsp"
    other.mkdir()
    OmegaConf.save(OmegaConf.create({"algo": {"name": "ppo"}, "scenario": {"name": "hgsp"}}), other / "config.yaml")
    assert "scenario=hgsp" in judge(other)[0]
    jax = tmp_path / "jax"
    jax.mkdir()
    OmegaConf.save(OmegaConf.create({"algo": {"name": "ppo_jax"}, "scenario": {"name": "cgrsp"}}), jax / "config.yaml")
    assert judge(jax) == [f"python -m studies parity: --from {jax}: no best_model.npz (its training did not finish)"]
    from tests.rl.test_multiseed import JAX, cfg_for  # a whole ppo_jax config, on the quiet day

    quiet = tmp_path / "quiet"
    quiet.mkdir()
    (quiet / "config.yaml").write_text(OmegaConf.to_yaml(cfg_for(quiet, *JAX), resolve=True))
    (quiet / "best_model.npz").write_bytes(b"")
    assert judge(quiet) == [
        f"python -m studies parity: --from {quiet}: trained on quiet_fresh (day quiet, stock fresh); parity judges "
        "the protocol's regimes, allowed: hectic_fresh, hectic_D900, surge_fresh, surge_D900"
    ]


def test_the_second_stage_is_refused_where_it_cannot_run():
    from gpu_sched_env.core.errors import ConfigError

    study.check_recheck(0, 100, "objective", None, 0, 8)  # off: nothing to check
    with pytest.raises(ConfigError, match="recheck_days = -1"):
        study.check_recheck(1000, 100, "lexicographic", None, -1, 8)
    with pytest.raises(ConfigError, match="select_by = 'objective'"):
        study.check_recheck(1000, 100, "objective", None, 500, 8)
    with pytest.raises(ConfigError, match=r"select_every = 0, .* select_regimes = \['hectic_fresh'\]"):
        study.check_recheck(0, 100, "objective", {"hectic_fresh": None}, 500, 8)
    study.check_recheck(1000, 100, "objective", {"hectic_fresh": None}, 500, 8)  # the generalist's worst-regime pick
    with pytest.raises(ConfigError, match="recheck_top = 0"):
        study.check_recheck(1000, 100, "lexicographic", None, 500, 0)
    with pytest.raises(ConfigError, match="select_days \\+ recheck_days = 10001: .* at most 10000"):
        study.check_recheck(1000, 100, "lexicographic", None, 9901, 8)
    study.check_recheck(1000, 100, "lexicographic", None, 9900, 8)  # the last selection key is 19 999


def test_a_folder_from_before_the_second_stage_resumes_with_it_off(tmp_path):
    """settings.json written before ``recheck_*`` existed reads as the stage off; asking for it there is refused."""
    import json

    from gpu_sched_env.core.errors import ConfigError
    from studies.cgrsp.learning import ablation

    old = {"n_envs": None, "n_steps": None, "select_every": 250000, "select_days": 100, "jax_days": 1000}
    (tmp_path / "settings.json").write_text(json.dumps(old))
    base = ["--budget", "64", "--out", str(tmp_path)]
    study.check_settings(tmp_path, ablation.parse_args(base), ablation.SETTINGS)
    with pytest.raises(ConfigError, match="recheck_days: 0 there, 1000 now"):
        study.check_settings(tmp_path, ablation.parse_args([*base, "--recheck-days", "1000"]), ablation.SETTINGS)


def test_the_table_shows_the_miss_bounds_where_the_rows_hold_them():
    cols = ["jax_n", "jax_learned_wait", "jax_rule_wait", "jax_wait_diff", "jax_wait_ci_high", "jax_miss_diff"]
    cols += ["v0_n", "v0_learned_wait", "v0_rule_wait", "v0_wait_diff", "v0_wait_ci_high", "v0_miss_diff"]
    rows = pd.DataFrame([dict.fromkeys(cols, 0.0)]).assign(
        regime="hectic_fresh", seed=0, budget=10, v0_rule="a", tolerance_min=0.44, parity=True
    )
    older = study.page_table(rows)  # older rows: without the miss bounds
    assert "| +0.000 | `a` |" in older and "(0.012)" not in older
    text = study.table_text(rows.assign(jax_miss_ci_high=0.0123, jax_miss_diff=-0.004, v0_miss_ci_high=0.0))
    row = next(line for line in text.splitlines() if line.startswith("| hectic_fresh"))
    assert row.split(" | ")[5:7] == ["-0.004 (0.012)", "`a`"] and row.split(" | ")[9] == "+0.000 (0.000)"
    assert row.endswith("| 0.44 | **yes** |") and "- hectic_fresh: 1 of 1 seeds at parity" in text
