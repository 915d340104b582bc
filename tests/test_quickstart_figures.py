"""The Quickstart's figures: docs/training.md's table is the main job's ``final_eval.csv``, as the command writes it.

``docs/figures/main_job_final_eval.csv`` is the ``final_eval.csv`` of ``python train.py algo=ppo
day=hectic`` (the README's first command). The fast test holds every row of the page's table
that names a policy of that file equal to it, as printed (two decimals); the slow test runs the
command and compares what it writes with the file.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "docs" / "figures" / "main_job_final_eval.csv"
PAGE = ROOT / "docs" / "training.md"
CELL = r" \| (?P<{}>[^|]+)"
CELLS = "".join(CELL.format(k) for k in ("wait", "miss", "tard", "cost"))
ROW = re.compile(r"^\| (?P<policy>[^|]+?)" + CELLS + r" \|$")


def _table_rows() -> dict[str, tuple[str, ...]]:
    """The Quickstart table's rows: policy name (first word, without markup) -> its four cells as printed."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("| policy | mean wait min (95 % CI) |")
    block = text[start : text.index("\n\n", start)].splitlines()[2:]
    rows = {}
    for line in block:
        m = ROW.match(line)
        assert m, line
        name = m["policy"].replace("*", "").replace("`", "").split()[0]
        rows[name] = tuple(m[k].replace("*", "").strip() for k in ("wait", "miss", "tard", "cost"))
    return rows


def _printed(r: pd.Series) -> tuple[str, ...]:
    return (
        f"{r.mean_wait_min:.2f} ± {r.mean_wait_min_ci:.2f}",
        f"{r.miss_pct:.2f} ± {r.miss_pct_ci:.2f}",
        f"{r.mean_tardiness_min:.2f}",
        f"{r.cost_usd:.2f}",
    )


def test_the_quickstart_table_is_the_main_jobs_final_eval():
    table = pd.read_csv(CSV).set_index("policy")
    rows = _table_rows()
    checked = [p for p in rows if p in table.index]
    assert "ppo" in checked and len(checked) >= 8, checked
    assert {p: rows[p] for p in checked} == {p: _printed(table.loc[p]) for p in checked}
    assert set(rows) - set(checked) == {"dqn"}  # the one row from another command (algo=dqn), said so on the page


@pytest.mark.slow
def test_the_main_job_regenerates_the_quickstart_figures(tmp_path):
    """The README's first command (after the setup), to its end: its final_eval.csv is the page's file."""
    out = tmp_path / "run"
    env = {**os.environ, "GPU_SCHED_REFERENCE_CACHE": "0"}
    cmd = [sys.executable, "train.py", "algo=ppo", "day=hectic", f"hydra.run.dir={out}", "train.progress_bar=false"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pd.testing.assert_frame_equal(pd.read_csv(out / "final_eval.csv"), pd.read_csv(CSV), rtol=1e-9)
