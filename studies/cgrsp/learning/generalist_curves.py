r"""The generalist's selection curves: each judged regime's wait against the rule's, as training goes.

``python -m studies generalist --select-every N`` evaluates each seed every N steps on each judged
regime's selection days and writes ``DIR/generalist_b<B>_sel<N>/seed<k>_select.csv``. This reads
those of one or more study folders and draws, per regime, the learned mean wait over the rule's
on the same days (1 = the rule; the dotted line is the criterion's 2 % margin, or 0.05 min where
that is wider) against the training steps, one line per folder and seed, the picked checkpoint
marked. It trains nothing.

    python -m studies generalist --part curves --from runs/gen_scratch12m=month runs/gen_scratch12m_mix_regime=regime \\
        --out docs/figures/generalist_curves.png
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from gpu_sched_env.core.criteria import GENERALIST_MARGIN


def read_curves(folder: Path) -> pd.DataFrame:
    """Every ``seed<k>_select.csv`` under ``folder``'s ``generalist_b*_sel*`` runs, with ``seed`` and ``run`` columns.

    Raises: FileNotFoundError naming the folder when it holds none.
    """
    frames = []
    for path in sorted(folder.glob("generalist_b*_sel*/seed*_select.csv")):
        seed = int(path.stem.removeprefix("seed").removesuffix("_select"))
        frames.append(pd.read_csv(path).assign(seed=seed, run=path.parent.name))
    if not frames:
        raise FileNotFoundError(
            f"{folder}: no generalist_b*_sel*/seed*_select.csv (a `python -m studies generalist --select-every N` "
            "output folder)"
        )
    return pd.concat(frames, ignore_index=True)


def regimes_of(curves: pd.DataFrame) -> list[str]:
    """The judged regimes of a selection table: the ``<regime>_wait`` columns that have a ``<regime>_rule_wait``."""
    return [c.removesuffix("_rule_wait") for c in curves.columns if c.endswith("_rule_wait")]


def ratios(curves: pd.DataFrame) -> pd.DataFrame:
    """``steps``, ``seed``, ``run``, ``picked`` and per regime the learned / rule wait (``<regime>``)."""
    out = curves[["steps", "seed", "run", "picked"]].copy()
    for r in regimes_of(curves):
        out[r] = curves[f"{r}_wait"] / curves[f"{r}_rule_wait"]
    return out


def figure(series: dict[str, pd.DataFrame], path: Path, ymax: float = 2.0) -> Path:
    """One panel per regime; ``series``: label → :func:`ratios` of a folder."""
    from gpu_sched_env.core.plotting import plt, save

    regimes = regimes_of_ratio(next(iter(series.values())))
    cols = 2
    rows = (len(regimes) + 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.4 * rows), sharex=True, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, regime in zip(axes.flat, regimes, strict=False):
        for i, (label, df) in enumerate(series.items()):
            for k, (seed, d) in enumerate(df.groupby("seed")):
                ax.plot(
                    d.steps / 1e6,
                    d[regime],
                    color=colours[i % len(colours)],
                    lw=1.2,
                    ls=("-", "--", ":", "-.")[k % 4],
                    label=f"{label}, seed {seed}",
                )
                pick = d[d.picked.astype(bool)]
                ax.plot(pick.steps / 1e6, pick[regime], "o", color=colours[i % len(colours)], ms=5)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(1.0 + GENERALIST_MARGIN[0], color="black", lw=0.8, ls=":")
        ax.set_ylim(0.9, ymax)
        ax.set_title(regime, fontsize=10)
        ax.set_ylabel("learned / rule wait")
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("training steps [M]")
    for ax in list(axes.flat)[len(regimes) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="lower center", ncol=min(len(labels), 4))
    fig.suptitle("The generalist on each regime's selection days (dots: the picked checkpoint; dotted: +2 %)")
    fig.tight_layout(rect=(0, 0.03 + 0.025 * ((len(labels) + 3) // 4), 1, 1))
    return save(fig, path)


def regimes_of_ratio(df: pd.DataFrame) -> list[str]:
    """The regime columns of a :func:`ratios` table."""
    return [c for c in df.columns if c not in ("steps", "seed", "run", "picked")]


def parse_from(entries: Sequence[str]) -> dict[str, Path]:
    """``DIR`` or ``DIR=LABEL`` entries → label → folder (the label defaults to the folder's name)."""
    out: dict[str, Path] = {}
    for e in entries:
        folder, _, label = e.partition("=")
        label = label or Path(folder).name
        if label in out:
            raise ValueError(f"--from {e!r}: label {label!r} is given twice; give each folder its own DIR=LABEL")
        out[label] = Path(folder)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m studies generalist --part curves``: the figure, and each folder's last evaluation per seed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--from", dest="sources", nargs="+", required=True, metavar="DIR[=LABEL]")
    ap.add_argument("--out", type=Path, required=True, help="the figure (.png)")
    ap.add_argument("--ymax", type=float, default=2.0, help="the panels' upper limit (learned / rule)")
    args = ap.parse_args(argv)
    if args.out.suffix != ".png":
        ap.error(f"--out = {args.out}: give a .png path")
    if args.ymax <= 1.0:
        ap.error(f"--ymax = {args.ymax}: allowed > 1 (the rule is at 1)")
    try:
        folders = parse_from(args.sources)
        series = {label: ratios(read_curves(folder)) for label, folder in folders.items()}
    except (ValueError, FileNotFoundError) as e:
        ap.error(str(e))
    regimes = {label: regimes_of_ratio(df) for label, df in series.items()}
    if len({tuple(r) for r in regimes.values()}) > 1:
        ap.error(f"--from: the folders judge different regimes ({regimes}); compare folders of one protocol")
    print(f"wrote {figure(series, args.out, args.ymax)}")
    for label, df in series.items():
        last = df.sort_values("steps").groupby("seed").tail(1)
        print(f"{label}: last evaluation (steps {int(last.steps.max())}), learned / rule per regime:")
        print(last.drop(columns=["run", "picked"]).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0
