"""Does a one-knob change of the deferring rule match what a learner finds? ``defer_scale`` tuned per regime.

``python -m studies strong-rules --part defer-scale``. ``spt_rescue_defer_exp`` leaves a slot idle while its
status' mean delay exceeds ``defer_scale`` × the expected cost of waiting (1 by default). Per
day × stock model, the scale is chosen on *selection* seeds (10 000 …; lowest miss %, then
lowest mean wait), and the chosen rule is paired with the default one on the *test* seeds
(20 000 …) with the 95 % CI of the difference and the paired t and Wilcoxon p values. It
answers whether a learner's win over the default rule (the surge day under fresh stock, the
[leaderboard](../../docs/leaderboard.md)) is within reach of the rule itself.

    python -m studies strong-rules --part defer-scale --days surge --stocks fresh --out docs/figures/defer_scale.md

``--rule`` tunes another deferring rule's knob the same way (``cadr_defer_exp``: the rule the
learners' CGRSP-v0 confirmation re-chooses on the hectic day under fresh stock). ``--learned
DIR`` (an ablation row's folder, ``<out>/<regime>_<row>_b<budget>``, one day and stock model)
pairs each of its exported actors with the chosen rule on the same test seeds: is what was
learned more than the rule with its one knob tuned?

    python -m studies strong-rules --part defer-scale --rule cadr_defer_exp --days hectic --stocks fresh --workers 2 \
        --learned runs/ablation_fresh12m_recheck/hectic_fresh_hold_excess1_time_aware_b12000000
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


def days_of(
    day: str, stock: str, seeds: range, scales: Sequence[float], workers: int, rule: str = RULE
) -> pd.DataFrame:
    """One row per scale × seed: mean wait [min] and miss [%] of the rule with that ``defer_scale``."""
    from gpu_sched_env.cgrsp.batch import run_grid
    from gpu_sched_env.cgrsp.stock import stock_params

    fan = {"executor": "process" if workers > 1 else "serial", "workers": workers, "progress": False}
    parts = [
        run_grid([rule], seeds, day=day, params={**stock_params(stock), "defer_scale": s}, **fan).assign(scale=s)
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


def row(day: str, stock: str, n_sel: int, n_test: int, scales: Sequence[float], workers: int, rule: str = RULE) -> dict:
    """The chosen scale and its test-day comparison with the default (1.0)."""
    from gpu_sched_env.core.stats import mean_ci, paired_compare

    sel = days_of(day, stock, range(SELECT0, SELECT0 + n_sel), scales, workers, rule)
    best = pick(sel)
    test = days_of(day, stock, range(TEST0, TEST0 + n_test), sorted({best, 1.0}), workers, rule)
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
        "chosen_days": a.reset_index()[["seed", "mean_wait_min", "miss_pct"]],
    }


def learned_config(folder: Path, day: str, stock: str):
    """The env config an ablation row's actors in ``folder`` were trained on; it must be ``day`` under ``stock``."""
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.stock import stock_params
    from gpu_sched_env.core.errors import ConfigError
    from studies.cgrsp.learning.parity import regime_config

    rows = pd.read_csv(folder.parent / "rows.csv") if (folder.parent / "rows.csv").is_file() else pd.DataFrame()
    names = [f"{r.regime}_{r.row}_b{r.budget}" for r in rows.itertuples()]
    mine = rows[[n == folder.name for n in names]] if len(rows) else rows
    if mine.empty or not list(folder.glob("seed*.npz")):
        raise ConfigError(f"--learned {folder}: not an ablation row's folder with exported actors (seed<k>.npz)")
    r = mine.iloc[0]
    over = str(r.overrides).split() if isinstance(r.overrides, str) else []
    config = env_config(regime_config(r.regime, int(r.budget), extra=over))
    stock_of = {k: config.params.get(k) for k in ("stock_process", "stock_dwell_s") if k in config.params}
    if config.day != day or stock_of != stock_params(stock):
        raise ConfigError(f"--learned {folder}: trained on {r.regime}, not day {day!r} under stock {stock!r}")
    return config


def learned_vs_rule(folder: Path, day: str, stock: str, rule_days: pd.DataFrame, workers: int) -> list[dict]:
    """Each actor in ``folder`` on ``rule_days``' seeds, paired with them: learned − rule wait (95 % CI), miss."""
    from studies.cgrsp.learning.parity import paired_on_v0

    config = learned_config(folder, day, stock)
    paths = sorted(folder.glob("seed*.npz"), key=lambda p: int(p.stem[4:]))
    return [{"actor": p.stem, **paired_on_v0(p, config, rule_days, workers)} for p in paths]


def learned_markdown(pairs: list[dict], folder: Path, rule: str, chosen: float) -> str:
    """The actors of ``folder`` against ``rule`` at ``defer_scale`` ``chosen``, paired on the test seeds."""
    lines = [
        f"Actors of `{folder}` against `{rule}` with `defer_scale` {chosen:g}, paired on the same test seeds.",
        "",
        "| actor | learned wait | rule wait | diff [95 % CI] | miss diff pp |",
        "|---|---|---|---|---|",
    ]
    for p in pairs:
        half = p["wait_ci_high"] - p["wait_diff"]
        lines.append(
            f"| {p['actor']} | {p['learned_wait']:.3f} | {p['rule_wait']:.3f} | {p['wait_diff']:+.3f} ± {half:.3f} | "
            f"{p['miss_diff']:+.4f} |"
        )
    return "\n".join(lines) + "\n"


def markdown(rows: list[dict], n_sel: int, n_test: int, rule: str = RULE) -> str:
    """The table of :func:`row`'s results."""
    lines = [
        f"`{rule}` with `defer_scale` chosen on {n_sel} selection seeds ({SELECT0} …), against the default "
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
    from gpu_sched_env.core.io import print_and_write

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rule", default=RULE, help=f"a deferring rule with the expected deferral (default {RULE})")
    ap.add_argument("--days", nargs="+", default=["surge", "hectic"])
    ap.add_argument("--stocks", nargs="+", default=["fresh", "900"])
    ap.add_argument("--scales", type=float, nargs="+", default=list(SCALES))
    ap.add_argument("--select-seeds", type=int, default=100)
    ap.add_argument("--test-seeds", type=int, default=100)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="write the table here too (.md)")
    ap.add_argument(
        "--learned", type=Path, default=None, help="an ablation row's folder: its actors vs the chosen rule"
    )
    args = ap.parse_args(argv)
    if args.learned and (len(args.days), len(args.stocks)) != (1, 1):
        ap.error(f"--learned needs one --days and one --stocks (got {args.days}, {args.stocks})")
    if any(not s > 0 for s in args.scales):
        ap.error(f"--scales = {args.scales}: every scale must be > 0")
    from gpu_sched_env.cgrsp.policies import policy_names

    exp_rules = [p for p in policy_names(published_only=False) if p.endswith("_defer_exp")]
    if args.rule not in exp_rules:
        ap.error(f"--rule = {args.rule!r}: defer_scale acts on the expected deferral; allowed: {', '.join(exp_rules)}")
    if min(args.select_seeds, args.test_seeds) < 2:
        ap.error("--select-seeds and --test-seeds: at least 2 (confidence intervals)")
    rows = [
        row(d, s, args.select_seeds, args.test_seeds, args.scales, args.workers, args.rule)
        for d in args.days
        for s in args.stocks
    ]
    text = markdown(rows, args.select_seeds, args.test_seeds, args.rule)
    if args.learned:
        r = rows[0]
        pairs = learned_vs_rule(args.learned, r["day"], r["stock"], r["chosen_days"], args.workers)
        text += "\n" + learned_markdown(pairs, args.learned, args.rule, r["chosen"])
    print_and_write(text, args.out)
    return 0
