"""The result pages' tables are renders of the studies' stored rows (``python -m studies results``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from gpu_sched_env.core.errors import ConfigError
from studies import provenance, results


def test_the_pages_tables_are_their_stored_rows() -> None:
    assert results.differences() == []
    assert results.pages(), "no page shows a stored table"


def _study_out(folder: Path, argv: list[str], study: str = "parity") -> Path:
    """A study's --out folder as the parity study leaves it: two seeds' rows and its commands."""
    cols = ["jax_n", "jax_learned_wait", "jax_rule_wait", "jax_wait_diff", "jax_wait_ci_high", "jax_miss_diff"]
    cols += ["v0_n", "v0_learned_wait", "v0_rule_wait", "v0_wait_diff", "v0_wait_ci_high", "v0_miss_diff"]
    base = dict.fromkeys(cols, 0.0) | {"jax_rule_wait": 44.25, "v0_rule_wait": 44.3, "tolerance_min": 0.44}
    rows = pd.DataFrame(
        [
            base | {"seed": 0, "jax_learned_wait": 44.28, "jax_wait_diff": 0.03, "parity": True},
            base | {"seed": 1, "jax_learned_wait": 44.55, "jax_wait_diff": 0.30, "parity": False},
        ]
    ).assign(regime="hectic_fresh", budget=3000000, v0_rule="cadr_defer_exp")
    folder.mkdir(parents=True)
    rows.to_csv(folder / "rows.csv", index=False)
    (folder / "settings.json").write_text(json.dumps({"select_every": 250000}))
    provenance.record(folder, study, argv)
    return folder


def _page(docs: Path, key: str) -> Path:
    docs.mkdir(parents=True, exist_ok=True)
    page = docs / "page.md"
    page.write_text(f"# A page\n\nBefore.\n\n<!-- results:{key}:start -->\nold\n<!-- results:{key}:end -->\n\nAfter.\n")
    return page


def test_a_stored_folder_rewrites_its_block_and_check_holds_it(tmp_path: Path, capsys) -> None:
    out = _study_out(tmp_path / "runs" / "p", ["--budget", "3000000", "--out", "runs/p"])
    docs, store = tmp_path / "docs", tmp_path / "docs" / "results"
    page = _page(docs, "p3m")
    assert results.main(["--add", str(out), "--as", "p3m", "--docs", str(docs)]) == 0
    assert sorted(p.name for p in (store / "p3m").iterdir()) == ["commands.json", "rows.csv", "settings.json"]
    text = page.read_text()
    assert text.startswith("# A page\n\nBefore.\n\n<!-- results:p3m:start -->\n") and text.endswith("\n\nAfter.\n")
    assert "python -m studies parity --budget 3000000 --out runs/p" in text and "old" not in text
    assert "| hectic_fresh | 0 | 3 000 000 | 44.28 / 44.25 | +0.030 (0.000) |" in text
    assert "- hectic_fresh: 1 of 2 seeds at parity" in text
    assert results.main(["--check", "--docs", str(docs)]) == 0

    page.write_text(text.replace("44.28 / 44.25", "44.20 / 44.25"))  # a number edited by hand
    capsys.readouterr()
    assert results.main(["--check", "--docs", str(docs)]) == 1
    assert "page.md: a results block is not its rows' render" in capsys.readouterr().out
    page.write_text("no blocks\n")  # the stored folder is then on no page
    assert results.differences(docs, store) == [f"{store / 'p3m'}: stored but on no page " + (
        "(show it between <!-- results:p3m:start/end -->)")]  # fmt: skip


def test_refusals_name_the_folder_and_write_nothing(tmp_path: Path) -> None:
    out = _study_out(tmp_path / "p", ["--budget", "64"])
    store = tmp_path / "store"
    results.add(out, "k", store)
    before = (store / "k" / "rows.csv").read_bytes()
    (out / "rows.csv").write_text("regime,seed\n")
    with pytest.raises(ConfigError, match=r"--as k: .* is stored already; pass --replace"):
        results.add(out, "k", store)
    assert (store / "k" / "rows.csv").read_bytes() == before
    (out / "settings.json").unlink()
    results.add(out, "k", store, replace=True)  # replaced whole: the settings it no longer has are gone
    assert sorted(p.name for p in (store / "k").iterdir()) == ["commands.json", "rows.csv"]

    with pytest.raises(ConfigError, match=r"--add .*nowhere: no rows.csv there"):
        results.add(tmp_path / "nowhere", "n", store)
    other = _study_out(tmp_path / "g", ["--budget", "64"], study="tune")
    with pytest.raises(ConfigError, match="made by tune; a stored folder is one study's, allowed: parity, generalist"):
        results.add(other, "g", store)
    (other / "commands.json").unlink()
    with pytest.raises(ConfigError, match="g: no commands.json"):
        results.add(other, "g", store)
    for bad in ("a b", ".k", "../k"):
        with pytest.raises(ConfigError, match=f"--as '{re.escape(bad)}': a key is letters"):
            results.add(out, bad, store)
    assert sorted(p.name for p in store.iterdir()) == ["k"]

    page = _page(tmp_path / "docs", "missing")
    with pytest.raises(ConfigError, match="page.md: results block 'missing' has no stored rows"):
        results.rendered(page, store)


def test_the_command_line_refuses_unpaired_options() -> None:
    for argv in (["--add", "x"], ["--as", "k"], ["--check", "--add", "x", "--as", "k"]):
        with pytest.raises(SystemExit):
            results.parse_args(argv)


def test_a_folder_lists_each_command_once_with_its_commit(tmp_path: Path) -> None:
    first = provenance.record(tmp_path, "parity", ["--budget", "64", "--override", "algo.net_arch=[64,64]"])
    assert first[0]["command"] == "python -m studies parity --budget 64 --override 'algo.net_arch=[64,64]'"
    assert first[0]["commit"] is None or len(str(first[0]["commit"])) == 40
    assert first[0]["cpu"] == provenance.processor() and "(" in first[0]["cpu"]
    assert provenance.record(tmp_path, "parity", ["--budget", "64", "--override", "algo.net_arch=[64,64]"]) == first
    both = provenance.record(tmp_path, "parity", ["--budget", "64", "--seeds", "1"])
    assert [e["command"] for e in both][1] == "python -m studies parity --budget 64 --seeds 1"
    assert json.loads((tmp_path / "commands.json").read_text()) == both


def test_merged_rows_bring_their_commands(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    provenance.record(a, "ablation", ["--rows", "joint"])
    provenance.record(b, "ablation", ["--rows", "when"])
    provenance.record(a, "ablation", ["--merge-from", str(b)])
    merged = provenance.merge(a, [b, tmp_path / "no_commands"])
    assert [e["command"].split()[-1] for e in merged] == ["joint", str(b), "when"]


def test_a_generalist_folder_renders_its_regimes_months_and_verdicts(tmp_path: Path) -> None:
    folder = tmp_path / "gen"
    folder.mkdir()
    wait = {"jax_rule": "r", "jax_learned_wait": 45.0, "jax_rule_wait": 44.0, "jax_wait_diff": 1.0}
    wait |= {"jax_wait_ci_high": 0.5, "jax_miss_diff": 0.0}
    wait |= {"v0_learned_wait": 45.0, "v0_rule_wait": 44.0, "v0_wait_ci_high": 0.5, "v0_miss_diff": 0.0}
    pd.DataFrame([{"seed": 0, "budget": 10, "regime": "hectic_fresh", "v0_rule": "a", **wait}]).to_csv(
        folder / "rows.csv", index=False
    )
    month = {"seed": 0, "budget": 10, "stock": "fresh", "reps": 3, "learned_wait": 22.0, "rule": "a"}
    month |= {"rule_wait": 21.7, "wait_ci_high": 0.4, "miss_diff": 0.0}
    pd.DataFrame([month]).to_csv(folder / "month.csv", index=False)
    provenance.record(folder, "generalist", ["--budget", "10"])
    text = results.block(results.add(folder, "gen", tmp_path / "store"))
    assert "python -m studies generalist --budget 10" in text and "\n#" not in text.rsplit("```\n", 1)[1]
    assert "| seed | steps | hectic fresh | month, fresh |" in text  # no headings inside a page: one table
    assert "| 0 | 10 | **45.00 / 44.00 (1.023×); JAX +1.000 (0.500)** | **22.00 / 21.70 (1.014×)** |" in text
    assert "- seed 0, 10 steps: within 2 % in 1 of 1 regimes and 1 of 1 months" in text
    (tmp_path / "store" / "gen" / "month.csv").unlink()  # a folder judged per regime only: no month columns
    alone = results.block(tmp_path / "store" / "gen")
    assert "| seed | steps | hectic fresh |\n" in alone and "the best of `a` per regime" in alone
    assert "within 2 % in 1 of 1 regimes and 0 of 0 months" in alone


def test_an_ablation_folder_renders_with_its_settings_and_no_date(tmp_path: Path) -> None:
    folder = tmp_path / "abl"
    folder.mkdir()
    row = {"regime": "hectic_fresh", "row": "when", "item": "1", "budget": 64, "status": "ok", "train_s": 9.0}
    row |= {"learned_wait": 44.5, "rule_wait": 44.3, "wait_ci_high": 0.4, "miss_diff": 0.0, "parity": True}
    pd.DataFrame([row | {"seed": 0, "wait_diff": 0.2}, row | {"seed": 1, "wait_diff": 0.1}]).to_csv(
        folder / "rows.csv", index=False
    )
    provenance.record(folder, "ablation", ["--budget", "64"])
    with pytest.raises(ConfigError, match="abl: no settings.json"):
        results.block(folder)
    (folder / "settings.json").write_text(json.dumps({"select_every": 32, "select_days": 2, "jax_days": 3}))
    text = results.block(folder)
    assert "Budget 64 steps per seed" in text and "every 32 steps on 2 selection days; judged on 3" in text
    assert (
        "| hectic_fresh | when | 1 | 2 | 9 | 44.50 | 44.30 | +0.20 / +0.10 | +0.40 | +0.000 / +0.000 | 2 of 2 |" in text
    )
    assert "ablation, 20" not in text  # table.md's dated title stays out of the page


def test_an_interrupted_replace_leaves_the_stored_folder_as_it_was(tmp_path: Path, monkeypatch) -> None:
    out = _study_out(tmp_path / "p", ["--budget", "64"])
    store = tmp_path / "store"
    results.add(out, "k", store)
    before = {p.name: p.read_bytes() for p in (store / "k").iterdir()}
    (out / "rows.csv").write_text("regime,seed\nsurge_fresh,9\n")
    copies, real = [], shutil.copyfile

    def copy_then_fail(src, dst):  # the first file copied, then the process interrupted
        copies.append(src)
        if len(copies) == 2:
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(results.shutil, "copyfile", copy_then_fail)
    with pytest.raises(KeyboardInterrupt):
        results.add(out, "k", store, replace=True)
    assert len(copies) == 2
    assert {p.name: p.read_bytes() for p in (store / "k").iterdir()} == before
