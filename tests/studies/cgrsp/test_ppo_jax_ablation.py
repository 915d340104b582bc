"""``python -m studies ablation``: rows as overrides, a refused row recorded with its error, resumable."""

import pandas as pd
import pytest

from studies.cgrsp.learning import ablation as study


def test_every_row_is_a_set_of_overrides_and_bad_options_are_refused(capsys):
    assert study.ROWS["joint"] == ("-", ("+ablation=joint",))
    assert study.ROWS["time_aware"] == ("1", ("+ablation=time_aware",))
    assert study.ROWS["hold_excess1_time_aware"][0] == "1+2+3" and study.ROWS["when_time_aware"][0] == "1+3w"
    with pytest.raises(SystemExit):
        study.parse_args(["--budget", "0", "--out", "x"])
    assert "--budget = 0: too small" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        study.parse_args(["--budget", "10", "--out", "x", "--rows", "nope"])


def test_a_row_file_composes_as_its_overrides_on_the_command_line():
    """``+ablation=<row>`` (conf/ablation/<row>.yaml) is the config its overrides spelled out give, row by hand."""
    from omegaconf import OmegaConf

    from studies.conf import compose_config

    by_hand = {
        "joint": (),
        "time_aware": ("algo.tau_s=90",),
        "joint_hold": ("env.action_mode=joint_hold",),
        "when_time_aware": ("env.action_mode=when", "algo.tau_s=90"),
        "occupancy_risk": ("env.reward=occupancy", "env.shaping=backlog_risk", "env.shaping_gamma=0.95"),
        "capacity_excess1_time_aware_lam099": (
            "+env.reward_weights.excess_run=1.0",
            "algo.tau_s=90",
            "algo.gae_lambda=0.99",
        ),
        "capacity_excess03_miss256": ("+env.reward_weights.excess_run=0.3", "env.reward_weights.miss=921600"),
    }
    base = ("experiment=ppo_jax_joint", "day=hectic", "run_dir=/tmp/unused")
    for row, overrides in by_hand.items():
        mine = OmegaConf.to_container(compose_config(*base, *study.ROWS[row][1]), resolve=True)
        assert mine == OmegaConf.to_container(compose_config(*base, *overrides), resolve=True), row
    assert study.item_of({"env": {"reward_weights": {"delay": 1.0}}, "algo": {"tau_s": 90}}) == "1+2"
    assert study.item_of({"algo": {"gae_lambda": 0.99}}) == "-"  # not a design item


def test_the_cgrsp_v0_confirmation_joins_each_seed_and_parity_needs_it(capsys):
    rows = [{"seed": 0, "wait_diff": 0.1, "parity": True}, {"seed": 1, "wait_diff": -0.3, "parity": True}]
    v0 = {1: {"v0_wait_diff": 0.9, "v0_parity": False}, 0: {"v0_wait_diff": 0.2, "v0_parity": True}}
    out = study.with_confirmation(rows, v0)
    assert [r["v0_wait_diff"] for r in out] == [0.2, 0.9] and [r["parity"] for r in out] == [True, False]
    assert [r["wait_diff"] for r in out] == [0.1, -0.3]  # the JAX judge's own columns stay
    with pytest.raises(SystemExit):
        study.parse_args(["--budget", "10", "--out", "x", "--confirm-days", "1"])
    assert "--confirm-days = 1: 0 (no confirmation) or at least 2" in capsys.readouterr().err


def test_a_row_this_build_cannot_run_is_recorded_with_its_error(tmp_path, monkeypatch):
    """A row refused by validation gets one record naming the ConfigError; it is tried again on the next run."""
    refused = ("9", ("env.window=4",))  # the JAX env implements window 3 only
    monkeypatch.setitem(study.ROWS, "refused", refused)
    argv = ["--budget", "8192", "--out", str(tmp_path), "--regimes", "hectic_fresh", "--rows", "refused"]
    assert study.main(argv) == 0
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert len(rows) == 1 and rows.status[0].startswith("not runnable on this build: window = 4")
    assert "| hectic_fresh | refused | 9 |" in (tmp_path / "table.md").read_text()
    assert study.main(argv) == 0  # tried again, still one record
    assert len(pd.read_csv(tmp_path / "rows.csv")) == 1


@pytest.mark.slow
def test_tiny_ablation_trains_judges_and_resumes(tmp_path):
    argv = [
        "--budget", "128", "--out", str(tmp_path), "--regimes", "hectic_fresh", "--rows", "joint", "time_aware",
        "--seeds", "0", "1", "--n-envs", "4", "--n-steps", "16", "--select-every", "32", "--select-days", "2",
        "--jax-days", "3", "--confirm-days", "2", "--recheck-days", "2", "--recheck-top", "1",
    ]  # fmt: skip
    assert study.main(argv) == 0
    rows = pd.read_csv(tmp_path / "rows.csv")
    assert (rows.v0_n == 2).all() and rows.v0_rule.notna().all()  # the CGRSP-v0 confirmation, per seed
    assert rows.row.tolist() == ["joint", "joint", "time_aware", "time_aware"] and (rows.status == "ok").all()
    assert (rows.n == 3).all() and (rows.train_s > 0).all() and (rows.miss_ci_high >= rows.miss_diff).all()
    sel = pd.read_csv(tmp_path / "hectic_fresh_time_aware_b128" / "seed0_select.csv")
    assert sel.picked.sum() == 1 and len(sel) == 2  # two updates of 64 steps, one evaluation each, one picked
    replayed = sel.recheck_wait_min.notna()  # the second stage replayed the best one on 2 more days: it is kept
    assert replayed.sum() == 1 and sel.picked[replayed].all() and (sel.pooled_rule_miss_pct >= 0).all()
    table = (tmp_path / "table.md").read_text()
    assert "| hectic_fresh | joint |" in table and "| hectic_fresh | time_aware | 1 | 2 |" in table
    assert study.main(argv) == 0  # resumed: nothing left to do
    assert len(pd.read_csv(tmp_path / "rows.csv")) == 4


def test_rows_of_parallel_folders_merge_into_one_table(tmp_path):
    """``--merge-from``: rows trained by other processes join, under the same settings only."""
    row = {"regime": "hectic_fresh", "overrides": "", "budget": 8192, "status": "ok", "n": 3}
    nums = {"learned_wait": 45.0, "rule_wait": 44.0, "wait_diff": 1.0, "wait_ci_high": 1.2, "miss_diff": 0.0}
    base = ["--budget", "8192", "--regimes", "hectic_fresh"]
    for name, row_name in (("a", "joint"), ("b", "time_aware")):
        (tmp_path / name).mkdir()
        study.check_settings_of(tmp_path / name, base)
        item = study.ROWS[row_name][0]
        rows = [
            {**row, **nums, "row": row_name, "item": item, "seed": s, "parity": False, "train_s": 10.0} for s in (0, 1)
        ]
        pd.DataFrame(rows).to_csv(tmp_path / name / "rows.csv", index=False)
    assert study.main([*base, "--out", str(tmp_path / "a"), "--merge-from", str(tmp_path / "b")]) == 0
    merged = pd.read_csv(tmp_path / "a" / "rows.csv")
    assert merged.row.tolist() == ["joint", "joint", "time_aware", "time_aware"]
    table = (tmp_path / "a" / "table.md").read_text()
    assert "| hectic_fresh | time_aware | 1 | 2 | 10 | 45.00 | 44.00 | +1.00 / +1.00 |" in table
    (tmp_path / "c").mkdir()
    study.check_settings_of(tmp_path / "c", [*base, "--select-days", "7"])
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match="select_days"):
        study.main([*base, "--out", str(tmp_path / "a"), "--merge-from", str(tmp_path / "c")])
