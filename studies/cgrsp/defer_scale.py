"""Does a one-knob change of the deferring rule match what a learner finds? ``defer_scale`` tuned per regime.

``python -m studies diagnose defer-scale``. ``spt_rescue_defer_exp`` leaves a slot idle while its
status' mean delay exceeds ``defer_scale`` × the expected cost of waiting (1 by default). Per
day × stock model, the scale is chosen on *selection* seeds (10 000 …; lowest miss %, then
lowest mean wait), and the chosen rule is paired with the default one on the *test* seeds
(20 000 …) with the 95 % CI of the difference and the paired t and Wilcoxon p values. It
answers whether a learner's win over the default rule (the surge day under fresh stock, the
[leaderboard](../../docs/leaderboard.md)) is within reach of the rule itself.

    python -m studies diagnose defer-scale --days surge --stocks fresh --out docs/figures/defer_scale.md
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

RULE = "spt_rescue_defer_exp"
SELECT0, TEST0 = 10_000, 20_000
SCALES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def days_of(day: str, stock: str, seeds: range, scales: Sequence[float], workers: int) -> pd.DataFrame:
    """One row per scale × seed: mean wait [min] and miss [%] of the rule with that ``defer_scale``."""
    from gpu_sched_env.cgrsp.batch import run_grid
    from gpu_sched_env.cgrsp.stock import stock_params

    fan = {"executor": "process" if workers > 1 else "serial", "workers": workers, "progress": False}
    parts = [
        run_grid([RULE], seeds, day=day, params={**stock_params(stock), "defer_scale": s}, **fan).assign(scale=s)
        for s in scales
    ]
    return pd.concat(parts, ignore_index=True)


def pick(sel: pd.DataFrame) -> float:
    """The scale with the lowest mean miss %, then the lowest mean wait, on the selection days.

    Ties go to the scale nearest the default 1 (a factor off: ``|log scale|``), so a knob that
    changes nothing on the selection days is left at its default.
    """
    m = sel.groupby("scale")[["miss_pct", "mean_wait_min"]].mean().round(9)
    return float(min(m.index, key=lambda s: (m.loc[s, "miss_pct"], m.loc[s, "mean_wait_min"], abs(math.log(s)))))


def row(day: str, stock: str, n_sel: int, n_test: int, scales: Sequence[float], workers: int) -> dict:
    """The chosen scale and its test-day comparison with the default (1.0)."""
    from gpu_sched_env.core.stats import mean_ci, paired_compare

    sel = days_of(day, stock, range(SELECT0, SELECT0 + n_sel), scales, workers)
    best = pick(sel)
    test = days_of(day, stock, range(TEST0, TEST0 + n_test), sorted({best, 1.0}), workers)
    a = test[test.scale == best].set_index("seed").sort_index()
    b = test[test.scale == 1.0].set_index("seed").sort_index()
    d = mean_ci((a.mean_wait_min - b.mean_wait_min).to_numpy())
    pc = paired_compare(a.mean_wait_min.to_numpy(), b.mean_wait_min.to_numpy())
    by_scale = sel.groupby("scale").mean_wait_min.mean()
    return {
        "day": day,
        "stock": stock,
        "selection": " / ".join(f"{s:g}: {w:.3f}" for s, w in by_scale.items()),
        "chosen": best,
        "test_chosen": a.mean_wait_min.mean(),
        "test_default": b.mean_wait_min.mean(),
        "diff": d.mean,
        "ci": d.half_width,
        "t_p": pc.t_p,
        "miss_chosen": a.miss_pct.mean(),
        "miss_default": b.miss_pct.mean(),
    }


def markdown(rows: list[dict], n_sel: int, n_test: int) -> str:
    """The table of :func:`row`'s results."""
    lines = [
        f"`{RULE}` with `defer_scale` chosen on {n_sel} selection seeds ({SELECT0} …), against the default "
        f"(1) on {n_test} test seeds ({TEST0} …); mean wait [min].",
        "",
        "| day | stock | selection: scale: wait | chosen | test: chosen | test: default | diff [95 % CI] | t p "
        "| miss % chosen / default |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['day']} | {r['stock']} | {r['selection']} | {r['chosen']:g} | {r['test_chosen']:.3f} | "
            f"{r['test_default']:.3f} | {r['diff']:+.3f} ± {r['ci']:.3f} | {r['t_p']:.1e} | "
            f"{r['miss_chosen']:.3f} / {r['miss_default']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Per day × stock model: the scale picked on selection seeds, paired with the default on test seeds."""
    from gpu_sched_env.core.io import atomic_write_text

    ap = argparse.ArgumentParser(prog="python -m studies diagnose defer-scale", description=__doc__.split("\n")[0])
    ap.add_argument("--days", nargs="+", default=["surge", "hectic"])
    ap.add_argument("--stocks", nargs="+", default=["fresh", "900"])
    ap.add_argument("--scales", type=float, nargs="+", default=list(SCALES))
    ap.add_argument("--select-seeds", type=int, default=100)
    ap.add_argument("--test-seeds", type=int, default=100)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="write the table here too (.md)")
    args = ap.parse_args(argv)
    if any(not s > 0 for s in args.scales):
        ap.error(f"--scales = {args.scales}: every scale must be > 0")
    if min(args.select_seeds, args.test_seeds) < 2:
        ap.error("--select-seeds and --test-seeds: at least 2 (confidence intervals)")
    rows = [
        row(d, s, args.select_seeds, args.test_seeds, args.scales, args.workers) for d in args.days for s in args.stocks
    ]
    text = markdown(rows, args.select_seeds, args.test_seeds)
    if args.out:
        atomic_write_text(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
