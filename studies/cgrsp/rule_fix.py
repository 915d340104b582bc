"""Before/after table of the deferring rule's two corrections, paired on held-out seeds.

``python -m studies strong-rules --part rule-fix``. ``spt_rescue_defer_exp`` as published before (``defer_gap="busy"``,
``slot_score="rule"``), with each correction alone (the two variants: the guarded
end-of-day deferral and the least expected delay + W̄ slot) and with both (the rule now).
The corrections were designed on seeds 0-19; this reports seeds 20000.. (the test seeds).

    python -m studies strong-rules --part rule-fix --seeds 100 --out docs/figures/rule_fix.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from gpu_sched_env.core.stats import mean_ci

SEED0 = 20000
VARIANTS: dict[str, dict[str, str]] = {
    "published": {"defer_gap": "busy", "slot_score": "rule"},
    "end-of-day fix only": {"defer_gap": "plan", "slot_score": "rule"},
    "slot fix only": {"defer_gap": "busy", "slot_score": "delay"},
    "both (the rule now)": {"defer_gap": "plan", "slot_score": "delay"},
}


def measure(
    days: list[str], stocks: list[str], seeds: range, rule: str = "spt_rescue_defer_exp", **params
) -> pd.DataFrame:
    """One row per variant × day × stock × seed: mean wait [min] and miss [%].

    ``params``: further simulator overrides.
    """
    from gpu_sched_env.cgrsp import simulate
    from gpu_sched_env.cgrsp.stock import stock_params

    rows = []
    for day in days:
        for stock in stocks:
            for v, knobs in VARIANTS.items():
                for seed in seeds:
                    s = simulate(rule, day, seed, **stock_params(stock), **params, **knobs).summary()
                    rows.append(
                        {
                            "variant": v,
                            "day": day,
                            "stock": stock,
                            "seed": seed,
                            "mean_wait_min": s["mean_wait_min"],
                            "miss_pct": s["miss_pct"],
                        }
                    )
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    """Per day × stock × variant: mean wait, miss and the paired difference to the published rule.

    The difference comes with its 95 % CI and the days better/worse.
    """
    lines = [
        "| day | stock | variant | n | mean wait min | miss % | − published, wait (paired) | days better / worse |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (day, stock), g in df.groupby(["day", "stock"], sort=False):
        base = g[g.variant == "published"].set_index("seed")
        for v, h in g.groupby("variant", sort=False):
            h = h.set_index("seed")
            d = (h.mean_wait_min - base.mean_wait_min.loc[h.index]).to_numpy()
            w, dc = mean_ci(h.mean_wait_min.to_numpy()), mean_ci(d)
            diff = "—" if v == "published" else f"{dc.mean:+.3f} ± {dc.half_width:.3f}"
            bw = "—" if v == "published" else f"{int(np.sum(d < -1e-9))} / {int(np.sum(d > 1e-9))}"
            lines.append(
                f"| {day} | {stock} | {v} | {len(h)} | {w.mean:.2f} | {h.miss_pct.mean():.2f} | {diff} | {bw} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m studies strong-rules --part rule-fix`` (see the module doc)."""
    from gpu_sched_env.core.io import atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100, help=f"days per cell (seeds {SEED0}..)")
    ap.add_argument("--days", nargs="+", default=["hectic", "surge"])
    ap.add_argument("--stocks", nargs="+", default=["fresh", "900"])
    ap.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="simulator parameter (e.g. c_max=3)"
    )
    ap.add_argument("--out", default=None, help="write the table here too (.md)")
    args = ap.parse_args(argv)
    from gpu_sched_env.core.cliargs import parse_params

    params = parse_params(args.param, "a simulator parameter")
    text = markdown(measure(args.days, args.stocks, range(SEED0, SEED0 + args.seeds), **params))
    if args.out:
        atomic_write_text(Path(args.out), text)
    print(text)
    return 0


__all__ = ["VARIANTS", "main", "markdown", "measure"]
