r"""Which design item mattered, per regime: the shipped design and each item switched, from ablation folders.

    python -m studies ablation --part items --from runs/ablation_fresh12m_recheck runs/ablation_off_fresh12m \
        --seeds 0 1 2 3 --out docs/figures/ablation_items.md

Reads the ``rows.csv`` and ``settings.json`` of ``python -m studies ablation`` output folders
(nothing is trained or judged here) and writes one line per (regime, row, budget, pick, folder): the
items it has against the design they are measured from (:data:`DESIGN`: the clock, the SPT
charge and held deferrals, items 1 + 2 + 3, ``hold_excess1_time_aware``), so a line reads "the
design without item 1" or "with item 4 on", with the per-seed JAX and CGRSP-v0 wait differences
against the rule and the parity counts both ways:

* **the miss bound**: the upper 95 % bound of the paired wait difference within the tolerance
  (max(1 % of the rule's wait, 0.05 min)) in JAX and on CGRSP-v0, the upper 95 % bound of the
  JAX miss difference ≤ 0.01 pp, and no mean miss more on CGRSP-v0;
* **stricter** (the ablation's ``parity`` column): also no mean miss more in JAX.

A folder without the CGRSP-v0 confirmation (``--confirm-days 0``) counts at parity on neither.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from gpu_sched_env.core.criteria import MISS_BOUND_PP, PARITY_MARGIN, within
from studies.cgrsp.learning.parity import LATER_SETTINGS

DESIGN = frozenset({"1", "2", "3"})  # hold_excess1_time_aware: the clock, the SPT charge, held deferrals
ITEM_NAMES = {"1": "clock", "2": "SPT charge", "3": "holds", "4": "miss constraint"}


def switched(item: str) -> str:
    """``item`` (``"1+2+3+4"``; ``"-"``: none) against :data:`DESIGN`: ``"design"``, ``"−1 (clock)"``, ``"+4 (…)"``."""
    have = frozenset() if item == "-" else frozenset(item.split("+"))
    if not have <= DESIGN | ITEM_NAMES.keys():
        return f"other design ({item})"
    if not have:
        return "none of 1–3"
    off = [f"−{i} ({ITEM_NAMES[i]})" for i in sorted(DESIGN - have)]
    on = [f"+{i} ({ITEM_NAMES[i]})" for i in sorted(have - DESIGN)]
    return ", ".join(off + on) or "design"


def read_folder(folder: Path) -> pd.DataFrame:
    """The ``ok`` rows of one ablation folder, with its pick (``one stage`` or ``two stages``) and the folder."""
    from gpu_sched_env.core.errors import ConfigError

    path = folder / "rows.csv"
    if not path.is_file():
        raise ConfigError(f"--from {folder}: no rows.csv there (an output folder of python -m studies ablation)")
    rows = pd.read_csv(path)
    settings = folder / "settings.json"
    recheck = {**LATER_SETTINGS, **(json.loads(settings.read_text()) if settings.is_file() else {})}["recheck_days"]
    pick = f"two stages ({recheck} days)" if recheck else "one stage"
    return rows[rows.status == "ok"].assign(pick=pick, folder=str(folder))


def verdicts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per seed: ``bound`` (the miss bound) and ``strict`` (also no mean miss more in JAX).

    Both judges by :func:`~gpu_sched_env.core.criteria.within` under the parity margin: in JAX with the
    miss difference's upper bound at most :data:`~gpu_sched_env.core.criteria.MISS_BOUND_PP`, on
    CGRSP-v0 with no mean miss more; a NaN (a judge not run) is not at parity.
    """
    if "v0_wait_ci_high" not in rows:
        return rows.assign(bound=False, strict=False)
    jax = zip(rows.wait_ci_high, rows.rule_wait, rows.miss_ci_high, rows.miss_diff)
    v0 = zip(rows.v0_wait_ci_high, rows.v0_rule_wait, rows.v0_miss_diff)
    bound, strict = [], []
    for (h, w, m_high, m), (vh, vw, vm) in zip(jax, v0):
        bound.append(
            within(h, w, m_high, PARITY_MARGIN, guard_bound=MISS_BOUND_PP) and within(vh, vw, vm, PARITY_MARGIN)
        )
        strict.append(bound[-1] and within(h, w, m, PARITY_MARGIN))  # also no mean miss more in JAX
    return rows.assign(bound=pd.Series(bound, rows.index, bool), strict=pd.Series(strict, rows.index, bool))


def per_seed(values: pd.Series) -> str:
    """``−0.26 / −0.53`` (2 decimals; 3 below 0.1 min in size, the surge day's scale)."""
    digits = 3 if values.abs().max() < 0.1 else 2
    return " / ".join(f"{v:+.{digits}f}".replace("-", "−") for v in values)


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per (regime, row, budget, pick, folder), the design's lines first in each regime."""
    rows = verdicts(rows).sort_values("seed")
    out = []
    keys = ["regime", "row", "budget", "pick", "folder"]
    for (regime, row, budget, pick, folder), g in rows.groupby(keys, sort=False):
        has_v0 = "v0_wait_diff" in g and g.v0_wait_diff.notna().all()
        out.append(
            {
                "regime": regime,
                "row": row,
                "items": switched(str(g["item"].iloc[0])),
                "budget": f"{budget / 1e6:g}M",
                "pick": pick,
                "folder": folder,
                "seeds": " ".join(str(s) for s in g.seed),
                "train_s": " + ".join(f"{t:.0f}" for t in g.train_s.drop_duplicates()),
                "jax_wait_diff": per_seed(g.wait_diff),
                "jax_mean": g.wait_diff.mean(),
                "v0_wait_diff": per_seed(g.v0_wait_diff) if has_v0 else "–",
                "bound": f"{int(g.bound.sum())} of {len(g)}",
                "strict": f"{int(g.strict.sum())} of {len(g)}",
            }
        )
    table = pd.DataFrame(out)
    first = table.assign(other=table["items"] != "design")
    return first.sort_values(["regime", "other"], kind="stable").drop(columns="other").reset_index(drop=True)


def cell(line: pd.Series) -> str:
    """One line of :func:`summary` in a matrix cell: parity counts and the mean JAX wait difference."""
    n = line.bound.split(" of ")[1]
    digits = 3 if abs(line.jax_mean) < 0.1 else 2  # the surge day's scale
    mean = f"{line.jax_mean:+.{digits}f}".replace("-", "−")
    return f"{line.bound.split()[0]} / {line.strict.split()[0]} of {n}, {mean}"


def matrix(table: pd.DataFrame) -> str:
    """Regime × item switched: each line's parity counts (the miss bound / stricter) and mean JAX wait difference.

    A cell with several lines (one per pick or folder) lists them all, each line whose pick is not the regime's
    first design line's labelled with its pick.
    """
    first = ["design", *(switched("+".join(sorted(DESIGN - {i}))) for i in sorted(DESIGN)), switched("1+2+3+4")]
    cols = [c for c in first if c in set(table["items"])] + [c for c in dict.fromkeys(table["items"]) if c not in first]
    lines = ["| regime (budget) | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for regime, g in table.groupby("regime", sort=False):
        home = g.pick.iloc[0]
        cells = []
        for c in cols:
            here = g[g["items"] == c]
            cells.append(
                "<br>".join(cell(r) + ("" if r.pick == home else f" ({r.pick})") for _, r in here.iterrows()) or "–"
            )
        lines.append(f"| {regime} ({', '.join(dict.fromkeys(g.budget))}; {home}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def markdown(table: pd.DataFrame, seeds: Sequence[int] | None) -> str:
    """The table as Markdown, with what its columns mean."""
    which = f"seeds {' '.join(map(str, seeds))}" if seeds else "every seed in the folders"
    lines = [
        f"The design items switched one at a time against the design (items 1 + 2 + 3, `hold_excess1_time_aware`), "
        f"{which}. Wait differences: learned − rule [min] per seed, on 1000 JAX test days against "
        "`spt_rescue_defer_exp` and on 100 CGRSP-v0 test seeds against the deferring rule re-chosen there. "
        "At parity by the miss bound (wait within max(1 %, 0.05 min) in both judges, JAX miss bound ≤ 0.01 pp, "
        "no mean miss more on CGRSP-v0) / stricter (also no mean miss more in JAX). train_s: the row's seeds "
        "trained side by side on the 2-core machine (one figure per folder).",
        "",
        "Per regime and item switched: seeds at parity by the miss bound / stricter, and the mean JAX wait "
        "difference [min].",
        "",
        matrix(table),
        "Per row and seed:",
        "",
        "| regime | items | row | budget | pick | seeds | train_s | JAX wait diff | CGRSP-v0 wait diff "
        "| at parity: miss bound | stricter | folder |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.itertuples():
        lines.append(
            f"| {r.regime} | {r.items} | `{r.row}` | {r.budget} | {r.pick} | {r.seeds} | {r.train_s} | "
            f"{r.jax_wait_diff} | {r.v0_wait_diff} | {r.bound} | {r.strict} | `{r.folder}` |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Read the folders, print the table (and write it to ``--out``)."""
    from gpu_sched_env.core.io import print_and_write, replace_doc_section

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="folders", type=Path, nargs="+", required=True, help="ablation --out folders")
    ap.add_argument("--seeds", type=int, nargs="+", default=None, help="only these training seeds (default: all)")
    ap.add_argument("--rows", nargs="+", default=None, help="only these rows (default: all)")
    ap.add_argument("--out", type=Path, default=None, help="write the table here too (.md)")
    ap.add_argument(
        "--update-docs",
        type=Path,
        default=None,
        help="put the regime × item matrix between <!-- ablation-items:start/end --> in this page "
        "(docs/results_ablation.md)",
    )
    args = ap.parse_args(argv)
    rows = pd.concat([read_folder(f) for f in args.folders], ignore_index=True)
    if args.seeds is not None:
        rows = rows[rows.seed.isin(args.seeds)]
    if args.rows is not None:
        rows = rows[rows.row.isin(args.rows)]
    if rows.empty:
        ap.error(f"no rows left in {[str(f) for f in args.folders]} for --seeds {args.seeds} --rows {args.rows}")
    table = summary(rows)
    if args.update_docs:
        replace_doc_section(args.update_docs, "ablation-items", matrix(table))
    print_and_write(markdown(table, args.seeds), args.out)
    return 0
