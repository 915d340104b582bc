"""The main jobs' figures: the pages' numbers are the ``final_eval`` files the commands write.

``docs/figures/main_job_final_eval.csv`` is the ``final_eval.csv`` of ``python train.py algo=ppo
day=hectic`` (the README's first command), ``docs/figures/ppo_jax_main_final_eval{,_jax}.csv`` those
of ``python train.py algo=ppo_jax day=hectic`` and ``ppo_jax_when_final_eval{,_jax}.csv`` those of
``python train.py experiment=ppo_jax_when day=hectic``. The fast tests hold docs/training.md's
Quickstart table and docs/results_ppo_jax.md's paragraphs of those runs equal to the files, as
printed (two decimals); the slow tests run the commands and compare what they write with the files.
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
JAX_PAGE = ROOT / "docs" / "results_ppo_jax.md"
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


def _signed(x: float) -> str:
    return f"{x:+.2f}".replace("-", "\u2212")  # the pages' minus sign


# docs/results_ppo_jax.md's JAX runs: the figures' stem -> (its section's heading, its command's overrides, the
# strongest rule of its final_eval table: no miss, then the lowest wait)
JAX_RUNS = {
    "ppo_jax_main": ("## The main job", ("algo=ppo_jax", "day=hectic"), "cadr_defer_exp"),
    "ppo_jax_when": (
        "## The `when` design with the 128×128 network",
        ("experiment=ppo_jax_when", "day=hectic"),
        "cadr_defer_exp",
    ),
    "ppo_jax_when_markov": (
        "## The `when` design with the 128×128 network",
        ("experiment=ppo_jax_when_markov", "day=hectic"),
        "spt_rescue_defer_exp",
    ),
    "ppo_jax_joint": ("## The joint design's run", ("experiment=ppo_jax_joint", "day=hectic"), "cadr_defer_exp"),
}


def _section(heading: str) -> str:
    text = JAX_PAGE.read_text(encoding="utf-8")
    start = text.index(heading + "\n")
    return " ".join(text[start : text.index("\n## ", start + 1)].split())


def _figures(stem: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    fig = ROOT / "docs" / "figures"
    return (
        pd.read_csv(fig / f"{stem}_final_eval.csv").set_index("policy"),
        pd.read_csv(fig / f"{stem}_final_eval_jax.csv").set_index("metric"),
    )


@pytest.mark.parametrize("stem", JAX_RUNS)
def test_a_ppo_jax_runs_paragraph_is_its_final_eval(stem):
    heading, _, strongest = JAX_RUNS[stem]
    t, days = _figures(stem)
    text = _section(heading)
    me, best = t.loc["ppo_jax"], t.loc[strongest]
    assert t.drop(index="ppo_jax").query("miss_pct == 0").mean_wait_min.idxmin() == strongest
    wait, miss = days.loc["mean_wait_min"], days.loc["miss_pct"]
    missed = " with no miss" if me.miss_pct == 0 else f", {me.miss_pct:.2f} % missed"
    printed = [
        f"waits **{me.mean_wait_min:.2f} min{missed}**",
        f"**{me.mean_wait_min / best.mean_wait_min:.4f}×** the best rule",
        f"{_signed(wait['diff'])} min [{_signed(wait.ci_low)}, {_signed(wait.ci_high)}]",
    ]
    if strongest == "cadr_defer_exp":
        spt = t.loc["spt_rescue_defer_exp"]
        assert spt.miss_pct == 0
        printed.append(f"`cadr_defer_exp` {best.mean_wait_min:.2f} and `spt_rescue_defer_exp` {spt.mean_wait_min:.2f}")
    else:
        printed.append(f"`{strongest}` {best.mean_wait_min:.2f}")
    if miss.learned == 0 == miss.rule:  # at parity where the wait's upper bound is within 1 % of the rule's
        printed.append(f"upper bound {_signed(wait.ci_high)} ≤ {0.01 * wait.rule:.2f}")
    else:
        printed.append(f"a miss of {miss['diff']:+.3f} pp [{miss.ci_low:+.3f}, {miss.ci_high:+.3f}]")
    for p in printed:
        assert p in text, p
    if stem == "ppo_jax_main":
        spt = t.loc["spt_rescue_defer_exp"]
        assert f"{_signed(me.mean_wait_min - spt.mean_wait_min)} min against `spt_rescue_defer_exp`" in text


@pytest.mark.slow
@pytest.mark.parametrize("stem", JAX_RUNS)
def test_a_ppo_jax_run_regenerates_its_figures(stem, tmp_path):
    """The section's command to its end: its two final_eval tables are the page's files."""
    _, overrides, _ = JAX_RUNS[stem]
    out = tmp_path / "run"
    env = {**os.environ, "GPU_SCHED_REFERENCE_CACHE": "0"}
    cmd = [sys.executable, "train.py", *overrides, f"hydra.run.dir={out}"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fig = ROOT / "docs" / "figures"
    for name in ("final_eval.csv", "final_eval_jax.csv"):
        want = pd.read_csv(fig / f"{stem}_{name}")
        pd.testing.assert_frame_equal(pd.read_csv(out / name), want, rtol=1e-9)
