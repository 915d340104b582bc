"""Published reference results (spec §4) and the calibration contract (spec §6)."""

from __future__ import annotations

import math

import pandas as pd

# hectic day, C_max = 5, 30 seeds: mean wait [min], miss [%], mean tardiness [min], cost [$]
PUBLISHED_HECTIC = pd.DataFrame(
    [
        ("rh", 128.83, 7.54, 20.30, 6.09),
        ("cadr", 132.81, 7.88, 6.08, 6.13),
        ("spt_rescue", 135.21, 12.40, 5.96, 6.10),
        ("adaptive", 154.77, 9.28, 2.70, 6.15),
        ("spt", 129.41, 13.85, 14.48, 6.06),
        ("edf", 158.17, 11.82, 3.42, 6.12),
        ("lcf", 157.19, 22.30, 23.07, 6.13),
        ("balanced", 153.94, 20.73, 22.16, 6.11),
        ("fifo", 158.77, 23.01, 23.67, 6.15),
        ("random", 155.87, 20.99, 29.34, 6.14),
        ("cadr_oo", 134.48, 7.84, 6.02, math.nan),
    ],
    columns=["policy", "mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd"],
).set_index("policy")

# §6: policies under the contract and its tolerances
CONTRACT_POLICIES = ("fifo", "spt", "edf", "spt_rescue", "adaptive", "rh", "cadr")
WAIT_REL_TOL = 0.15  # ±15 % of the published mean wait
MISS_ABS_TOL = 3.0  # ±3 percentage points of the published miss rate
COST_REL_SPREAD = 0.05  # "costs within a few percent of each other"


def check_contract(means: pd.DataFrame) -> pd.DataFrame:
    """One row per check of §6 with the measured value and whether it holds.

    ``means`` is indexed by policy with columns mean_wait_min, miss_pct, cost_usd.
    """
    rows = []
    for pol in CONTRACT_POLICIES:
        if pol not in means.index:
            continue
        pw, pm = PUBLISHED_HECTIC.loc[pol, "mean_wait_min"], PUBLISHED_HECTIC.loc[pol, "miss_pct"]
        w, m = means.loc[pol, "mean_wait_min"], means.loc[pol, "miss_pct"]
        rows.append(
            (
                f"{pol} wait within ±15 %",
                f"{w:.1f} vs {pw:.1f} ({100 * (w / pw - 1):+.1f} %)",
                abs(w / pw - 1) <= WAIT_REL_TOL,
            )
        )
        rows.append(
            (f"{pol} miss within ±3 pp", f"{m:.2f} vs {pm:.2f} ({m - pm:+.2f} pp)", abs(m - pm) <= MISS_ABS_TOL)
        )
    miss = means["miss_pct"]
    others = [p for p in miss.index if p not in ("rh", "cadr", "cadr_oo")]
    for best in ("rh", "cadr"):
        if best in miss.index and others:
            rows.append(
                (
                    f"{best} miss below every other policy (CADR-OO excepted)",
                    f"{miss[best]:.2f} < min {miss[others].min():.2f}",
                    bool(miss[best] < miss[others].min()),
                )
            )
    wait = means["mean_wait_min"]
    if {"spt", "rh"} <= set(wait.index):
        low2 = set(wait.drop(labels=[p for p in ("cadr_oo",) if p in wait.index]).nsmallest(2).index)
        rows.append(("SPT and RH lowest wait", f"two lowest: {sorted(low2)}", low2 == {"spt", "rh"}))
    if {"fifo", "lcf", "balanced"} <= set(miss.index):
        top3 = set(miss.drop(labels=[p for p in ("random",) if p in miss.index]).nlargest(3).index)
        rows.append(
            (
                "FIFO/LCF/Balanced highest miss (Random aside)",
                f"three highest: {sorted(top3)}",
                top3 == {"fifo", "lcf", "balanced"},
            )
        )
    cost = means["cost_usd"]
    spread = cost.max() / cost.min() - 1
    rows.append(("costs within a few percent", f"spread {100 * spread:.1f} %", bool(spread <= COST_REL_SPREAD)))
    return pd.DataFrame(rows, columns=["check", "measured", "holds"])
