"""``python -m studies ablation --part items``: the design and each item switched, read from ablation folders."""

import json

import pandas as pd
import pytest

from studies.cgrsp.learning import items


def test_items_are_named_against_the_design():
    assert items.switched("1+2+3") == "design"
    assert items.switched("2+3") == "−1 (clock)"
    assert items.switched("1+2") == "−3 (holds)"
    assert items.switched("1+2+3+4") == "+4 (miss constraint)"
    assert items.switched("-") == "none of 1–3"
    assert items.switched("2") == "−1 (clock), −3 (holds)"
    assert items.switched("1+3w") == "other design (1+3w)"


def _row(seed, **kw):
    base = {
        "regime": "hectic_fresh",
        "row": "hold_excess1_time_aware",
        "item": "1+2+3",
        "budget": 12_000_000,
        "seed": seed,
        "status": "ok",
        "train_s": 100.0,
        "rule_wait": 44.0,
        "wait_diff": -0.3,
        "wait_ci_high": -0.2,
        "miss_diff": 0.0,
        "miss_ci_high": 0.0,
        "v0_rule_wait": 44.0,
        "v0_wait_diff": -0.3,
        "v0_wait_ci_high": -0.1,
        "v0_miss_diff": 0.0,
    }
    return {**base, **kw}


def _folder(path, rows, recheck=None):
    path.mkdir()
    pd.DataFrame(rows).to_csv(path / "rows.csv", index=False)
    settings = {"jax_days": 1000} if recheck is None else {"jax_days": 1000, "recheck_days": recheck}
    (path / "settings.json").write_text(json.dumps(settings))
    return path


def test_the_miss_bound_and_the_stricter_count_differ_by_the_jax_mean_miss(tmp_path):
    rows = [
        _row(0),  # at parity both ways
        _row(1, miss_diff=0.0001, miss_ci_high=0.0003),  # a job more in 1000 days: the miss bound, not stricter
        _row(2, miss_ci_high=0.02),  # the JAX miss bound above 0.01 pp
        _row(3, v0_miss_diff=0.01),  # a miss more on CGRSP-v0
        _row(4, wait_ci_high=0.45),  # above the 1 % tolerance (0.44 min)
        _row(5, v0_wait_ci_high=0.43),  # within it on CGRSP-v0
        _row(6, status="not runnable on this build: …"),  # dropped
    ]
    one = _folder(tmp_path / "one", rows)
    got = items.read_folder(one)
    assert set(got.seed) == {0, 1, 2, 3, 4, 5} and set(got.pick) == {"one stage"}
    v = items.verdicts(got).set_index("seed")
    assert v.bound.to_dict() == {0: True, 1: True, 2: False, 3: False, 4: False, 5: True}
    assert v.strict.to_dict() == {0: True, 1: False, 2: False, 3: False, 4: False, 5: True}
    line = items.summary(got).iloc[0]
    assert (line.bound, line.strict, line["items"]) == ("3 of 6", "2 of 6", "design")


def test_the_table_puts_the_design_first_and_names_the_pick(tmp_path, capsys):
    two = _folder(
        tmp_path / "two",
        [_row(0, row="hold_time_aware", item="1+3", wait_diff=1.5), _row(0), _row(1)],
        recheck=1000,
    )
    out = tmp_path / "items.md"
    assert items.main(["--from", str(two), "--out", str(out)]) == 0
    text = out.read_text()
    lines = [ln for ln in text.splitlines() if ln.startswith("| hectic_fresh | ")]  # the per-row table
    assert "| design |" in lines[0] and "−2 (SPT charge)" in lines[1]
    assert "two stages (1000 days)" in lines[0] and "| 0 1 |" in lines[0] and "+1.50" in lines[1]
    assert text == capsys.readouterr().out.rstrip("\n") + "\n"
    assert items.main(["--from", str(two), "--seeds", "1"]) == 0
    assert "−2 (SPT charge)" not in capsys.readouterr().out  # that row has no seed 1


def test_a_folder_without_the_confirmation_counts_at_parity_on_neither(tmp_path):
    rows = [{k: v for k, v in _row(0).items() if not k.startswith("v0_")}]
    line = items.summary(items.read_folder(_folder(tmp_path / "jax_only", rows))).iloc[0]
    assert (line.bound, line.strict, line.v0_wait_diff) == ("0 of 1", "0 of 1", "–")


def test_bad_folders_and_empty_selections_are_refused(tmp_path, capsys):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match="no rows.csv"):
        items.main(["--from", str(tmp_path)])
    f = _folder(tmp_path / "f", [_row(0)])
    with pytest.raises(SystemExit):
        items.main(["--from", str(f), "--rows", "joint"])
    assert "no rows left" in capsys.readouterr().err


def test_the_matrix_has_one_cell_per_item_and_labels_a_second_pick(tmp_path):
    two = _folder(tmp_path / "two", [_row(0), _row(1, wait_diff=-0.5), _row(0, row="hold_excess1", item="2+3")], 1000)
    one = _folder(tmp_path / "one", [_row(0, wait_diff=2.0, miss_ci_high=0.02)])
    table = items.summary(pd.concat([items.read_folder(two), items.read_folder(one)], ignore_index=True))
    head, _, line = items.matrix(table).splitlines()
    assert head == "| regime (budget) | design | −1 (clock) |"
    design, clock = line.split(" | ")[1:3]
    assert design == "2 / 2 of 2, −0.40<br>0 / 0 of 1, +2.00 (one stage)"
    assert clock.startswith("1 / 1 of 1, −0.30") and line.startswith("| hectic_fresh (12M; two stages (1000 days))")


def test_the_matrix_goes_between_the_pages_markers(tmp_path):
    f = _folder(tmp_path / "f", [_row(0)])
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- ablation-items:start -->\nold\n<!-- ablation-items:end -->\nafter\n")
    assert items.main(["--from", str(f), "--update-docs", str(page)]) == 0
    text = page.read_text()
    assert "old" not in text and "| hectic_fresh (12M; one stage) | 1 / 1 of 1, −0.30 |" in text
    assert text.startswith("before\n") and text.endswith("after\n")
