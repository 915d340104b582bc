"""``python -m studies strong-rules --part defer-scale``: the scale picked on selection seeds, paired on test seeds."""

import pandas as pd
import pytest

from studies.cgrsp import defer_scale as ds


def test_pick_takes_the_fewest_misses_then_the_lowest_wait():
    sel = pd.DataFrame(
        {
            "scale": [0.5, 0.5, 1.0, 1.0, 2.0, 2.0],
            "miss_pct": [0.1, 0.1, 0.0, 0.0, 0.0, 0.0],
            "mean_wait_min": [1.0, 1.0, 3.0, 3.0, 2.0, 2.0],
        }
    )
    assert ds.pick(sel) == 2.0
    tied = sel.assign(mean_wait_min=2.0, miss_pct=0.0)
    assert ds.pick(tied) == 1.0  # a knob that changes nothing stays at its default


def test_a_small_run_pairs_the_chosen_scale_with_the_default():
    r = ds.row("surge", "fresh", 3, 3, [0.75, 1.0], workers=1)
    assert r["chosen"] in (0.75, 1.0) and r["day"] == "surge"
    if r["chosen"] == 1.0:
        assert r["diff"] == 0.0
    assert "0.75:" in r["selection"] and "1:" in r["selection"]
    assert "| surge | fresh |" in ds.markdown([r], 3, 3)


def test_bad_scales_are_refused():
    with pytest.raises(SystemExit):
        ds.main(["--scales", "0", "1"])


def test_another_deferring_rule_is_tuned_and_a_rule_without_the_knob_refused(capsys):
    days = ds.days_of("surge", "fresh", range(2), [0.75, 1.0], 1, rule="cadr_defer_exp")
    assert set(days.policy) == {"cadr_defer_exp"} and len(days) == 4
    r = ds.row("surge", "fresh", 2, 2, [0.75, 1.0], workers=1, rule="cadr_defer_exp")
    assert ds.markdown([r], 2, 2, "cadr_defer_exp").startswith("`cadr_defer_exp` with")
    with pytest.raises(SystemExit):
        ds.main(["--rule", "edf_defer_low"])
    assert "--rule = 'edf_defer_low'" in capsys.readouterr().err


def _row_folder(tmp_path, regime="hectic_fresh", row="joint", overrides=""):
    out = tmp_path / "abl"
    folder = out / f"{regime}_{row}_b1000"
    folder.mkdir(parents=True)
    pd.DataFrame(
        [{"regime": regime, "row": row, "overrides": overrides, "budget": 1000, "seed": 0, "status": "ok"}]
    ).to_csv(out / "rows.csv", index=False)
    for k in (0, 1, 10):
        (folder / f"seed{k}.npz").write_bytes(b"")
    return folder


def test_learned_actors_are_paired_with_the_chosen_rule_on_its_seeds(tmp_path, monkeypatch):
    from studies.cgrsp.learning import parity

    folder = _row_folder(tmp_path, overrides="env.action_mode=joint_hold")
    seen = []

    def day(policy, config, seed):
        seen.append((policy, config.day, dict(config.params), seed))
        k = int(policy.rsplit("seed", 1)[1].split(".")[0])
        return {"seed": seed, "mean_wait_min": 10.0 + k + seed, "miss_pct": 0.0}

    monkeypatch.setattr(parity, "_v0_day", day)
    rule_days = pd.DataFrame({"seed": [5, 6, 7], "mean_wait_min": [15.5, 16.5, 17.5], "miss_pct": [0.0, 0.1, 0.0]})
    pairs = ds.learned_vs_rule(folder, "hectic", "fresh", rule_days, workers=1)
    assert [p["actor"] for p in pairs] == ["seed0", "seed1", "seed10"]  # in seed order, not file-name order
    assert [round(p["wait_diff"], 9) for p in pairs] == [-0.5, 0.5, 9.5]
    assert pairs[0]["miss_diff"] == pytest.approx(-0.1 / 3)
    assert {s for *_, s in seen} == {5, 6, 7} and {d for _, d, _, _ in seen} == {"hectic"}
    assert "| seed10 | 26.000 | 16.500 | +9.500 ±" in ds.learned_markdown(pairs, folder, "cadr_defer_exp", 0.75)


def test_learned_actors_from_another_regime_or_no_row_are_refused(tmp_path, capsys):
    from gpu_sched_env.core.errors import ConfigError

    folder = _row_folder(tmp_path, regime="hectic_D900")
    with pytest.raises(ConfigError, match="trained on hectic_D900, not day 'hectic' under stock 'fresh'"):
        ds.learned_config(folder, "hectic", "fresh")
    assert ds.learned_config(folder, "hectic", "900").day == "hectic"
    with pytest.raises(ConfigError, match="not an ablation row's folder"):
        ds.learned_config(tmp_path, "hectic", "fresh")
    with pytest.raises(SystemExit):
        ds.main(["--learned", str(folder), "--days", "hectic", "surge"])
    assert "--learned needs one --days and one --stocks" in capsys.readouterr().err
