"""The headroom map: how far the strongest rule is from what any policy could reach, cell by cell.

``python -m studies headroom`` (this module's :func:`main`). Two layers on the one resume
store (:class:`gpu_sched_env.core.store.CellStore`, one row per simulated day):

* **(a)** the rule (``spt_rescue_defer_exp``) against its bounds (:mod:`gpu_sched_env.cgrsp.bounds`:
  every status High, no provisioning delay, the clairvoyant SRPT bound) on the grid day ×
  stock × C_max × tight fraction (:data:`GRID`);
* **(b)** the rollout planner over the rule (:mod:`gpu_sched_agents.heuristics.cgrsp.planner`,
  its default knobs or ``--budget``) against the rule, paired on the same days, on
  :data:`LAYER_B` (or the cells given).

Per cell: mean wait [min], miss [%] and the composite objective α1·wait + α2·miss per job
(C_QoS / N in seconds, spec §4: α1 = 1 per second, α2 = 10 per miss), n days and 95 % CIs;
layer (b) adds the paired difference planner − rule. Every cell value is checked before
anything runs. Days run in processes (``--workers``), each finished day goes to the store, a
rerun skips what is stored (resumable), and ``--max-seconds`` stops taking results at a wall
deadline (in-flight days are dropped, finished ones kept), so a time-limited command returns
partial results that the next run completes.

    python -m studies headroom --layer a --seeds 20 --workers 2
    python -m studies headroom --layer b --seeds 4 --workers 16 --max-seconds 450
    python -m studies headroom --render docs/figures/headroom   # tables and figure from the store
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.bounds import relaxed_params, srpt_wait_bound
from gpu_sched_env.cgrsp.stock import stock_params
from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.store import CellStore
from studies.cgrsp.programme.runner import SIM_SOURCES

RULE = "spt_rescue_defer_exp"
SEED0 = 20000  # test seeds (the rule's fixes were designed on seeds 0-19)
GRID: dict[str, tuple[str, ...]] = {
    "day": ("normal", "surge", "hectic"),
    "stock": ("fresh", "60", "300", "900", "3600"),
    "c_max": ("3", "5", "7"),
    "tight": ("0.2", "0.5"),
}
LABELS_A = ("rule", "all_high", "no_delay", "srpt")
LABELS_B = ("rule", "planner")
# (day, stock, c_max, tight): {surge, hectic} × {fresh, 300, 900, 3600} at C_max 5, tight 0.2,
# plus hectic × {fresh, 900} × {C_max 3 (tight 0.2), tight 0.5 (C_max 5)}
LAYER_B: tuple[tuple[str, str, str, str], ...] = tuple(
    [(d, s, "5", "0.2") for d in ("surge", "hectic") for s in ("fresh", "300", "900", "3600")]
    + [("hectic", s, c, t) for s in ("fresh", "900") for c, t in (("3", "0.2"), ("5", "0.5"))]
)
SOURCES = (*SIM_SOURCES, "gpu_sched_env/cgrsp/fork.py", "gpu_sched_env/cgrsp/bounds.py")
COLS = [
    "label",
    "day",
    "stock",
    "c_max",
    "tight",
    "seed",
    "mean_wait_min",
    "miss_pct",
    "objective_s",
    "wall_s",
    "n_planned",
    "n_deviated",
]


def parse_budget(text: str) -> dict[str, Any]:
    """``n_rollouts=16,portfolio=[cadr_defer_exp,spt_defer_exp]`` -> planner knobs (validated by name and value)."""
    from gpu_sched_agents.heuristics.cgrsp.config import RolloutKnobs
    from gpu_sched_env.core.cliargs import parse_params, split_top

    names = "one of " + ", ".join(RolloutKnobs.names())
    knobs = parse_params([p for p in split_top(text) if p], names, flag="--budget")
    if not knobs:
        raise ConfigError(f"--budget {text!r}: names no knob; expected NAME=VALUE[,NAME=VALUE...] with NAME {names}")
    knobs = {k: tuple(v) if isinstance(v, list) else v for k, v in knobs.items()}
    from gpu_sched_agents.heuristics.cgrsp import make_policy
    from gpu_sched_env.cgrsp.params import make_params

    make_policy("rollout", make_params("hectic"), **knobs)  # a bad knob or rule name refuses before anything runs
    return knobs


def parse_extra(items: list[str]) -> dict[str, Any]:
    """``--param NAME=VALUE`` simulator overrides, validated (a cell's own parameters may not be overridden)."""
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.core.cliargs import parse_params

    extra = parse_params(items, "a simulator parameter", flag="--param") if items else {}
    clash = sorted(set(extra) & {"c_max", "tight_fraction", "stock_process", "stock_dwell_s"})
    if clash:
        raise ConfigError(f"--param {clash[0]}: a cell value; use --c-max, --tight or --stock")
    make_params("hectic", **extra)  # a bad name or value refuses before anything runs
    return extra


def cell_params(stock: str, c_max: str, tight: str) -> dict[str, Any]:
    """Simulator overrides of a grid cell."""
    return {**stock_params(stock), "c_max": int(c_max), "tight_fraction": float(tight)}


def day_row(
    label: str,
    day: str,
    stock: str,
    c_max: str,
    tight: str,
    seed: int,
    budget: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One simulated day of one label in one cell (top-level: picklable); ``extra``: further simulator overrides."""
    from gpu_sched_agents.heuristics.cgrsp import make_policy
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.sim import Simulator, run
    from gpu_sched_env.core.rng import stream

    t0 = time.perf_counter()
    params = {**cell_params(stock, c_max, tight), **(extra or {})}
    row: dict[str, Any] = {
        "label": label,
        "day": day,
        "stock": stock,
        "c_max": c_max,
        "tight": tight,
        "seed": seed,
        "n_planned": np.nan,
        "n_deviated": np.nan,
    }
    p = make_params(day, **params)
    if label == "srpt":
        row.update(mean_wait_min=srpt_wait_bound(day, seed, **params), miss_pct=0.0)
    else:
        if label in ("all_high", "no_delay"):
            p = make_params(day, **relaxed_params(label, day, **params))
        name, knobs = ("rollout", {"base_rule": RULE, **budget}) if label == "planner" else (RULE, {})
        pol = make_policy(name, p, **knobs)
        sim = Simulator(p, seed)
        pol.reset(sim.view, stream(seed, "cgrsp/policy"))
        s = run(sim, pol).result(policy=name, day=day).summary()
        row.update(mean_wait_min=s["mean_wait_min"], miss_pct=s["miss_pct"])
        if label == "planner":
            row.update(n_planned=pol.n_planned, n_deviated=pol.n_deviated)
    # composite objective per job [s]: α1·mean wait + α2·miss fraction (C_QoS / N)
    row["objective_s"] = p.alpha1 * row["mean_wait_min"] * 60.0 + p.alpha2 * row["miss_pct"] / 100.0
    row["wall_s"] = time.perf_counter() - t0
    return row


def check_cells(values: dict[str, list[str]]) -> None:
    """Refuse an unknown cell value (before anything runs)."""
    for k, vs in values.items():
        for v in vs:
            check_choice(f"--{k.replace('_', '-')}", v, GRID[k])


def work(
    layer: str,
    cells: list[tuple[str, str, str, str]],
    seeds: range,
    budget: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The day rows to compute, seed-major (a run cut short leaves whole seeds), cheap labels first."""
    labels = LABELS_A if layer == "a" else LABELS_B
    out = [
        dict(
            label=lab,
            day=d,
            stock=s,
            c_max=c,
            tight=t,
            seed=int(seed),
            budget=budget if lab == "planner" else {},
            **({"extra": extra} if extra else {}),
        )
        for seed in seeds
        for lab in labels
        for d, s, c, t in cells
    ]
    return sorted(out, key=lambda w: (w["label"] == "planner", w["seed"]))


def label_of(knobs: dict[str, Any]) -> str:
    """``NAME=VALUE,...`` of a budget or of extra parameters (sorted; "" for none): a row's tag."""
    return ",".join(f"{k}={knobs[k]}" for k in sorted(knobs))


def current_rows(store: CellStore, budget: str = "", extra: str = "") -> pd.DataFrame:
    """The stored rows of this code version, planner rows of ``budget`` only, rows of ``extra`` parameters only.

    Rows written before the rows carried their version are recognised by their key (default budget).
    """
    df = store.load()
    if df.empty or "label" not in df:
        return df
    for col in ("code_version", "budget", "extra"):
        df[col] = df[col].astype(object) if col in df else pd.Series(None, index=df.index, dtype=object)
    legacy = df.code_version.isna().to_numpy()
    ok = (df.code_version == store.version).to_numpy().copy()
    if legacy.any():
        recomputed = [
            key_of(
                store,
                dict(
                    label=r.label, day=r.day, stock=r.stock, c_max=r.c_max, tight=r.tight, seed=int(r.seed), budget={}
                ),
            )
            for r in df[legacy].itertuples()
        ]
        ok[legacy] = df.loc[legacy, "key"].to_numpy() == np.asarray(recomputed)
    tag_budget = df.budget.where(~legacy, "").fillna("")
    tag_extra = df.extra.where(~legacy, "").fillna("")
    ok &= ((tag_extra == extra) & ((df.label != "planner") | (tag_budget == budget))).to_numpy()
    return df[ok]


def key_of(store: CellStore, w: dict[str, Any]) -> str:
    return store.key({k: (dict(sorted(v.items())) if isinstance(v, dict) else v) for k, v in w.items()})


def run(
    store: CellStore, todo: list[dict[str, Any]], workers: int, max_seconds: float | None, progress: bool = True
) -> int:
    """Compute the rows of ``todo`` not in ``store``; returns how many finished.

    It stops taking results at ``max_seconds``. The counts (to run, finished, left) go to stderr; ``progress`` adds a
    line at every 5 % of the days.
    """
    have = store.keys()
    todo = [w for w in todo if key_of(store, w) not in have]
    deadline = time.monotonic() + max_seconds if max_seconds else float("inf")
    print(f"headroom: {len(todo)} days to run ({len(have)} stored rows), {workers} workers", file=sys.stderr)
    done = 0

    def finished(w: dict[str, Any], row: dict[str, Any]) -> None:
        nonlocal done
        # the store keeps rows of every code version: render() selects this version's and one budget's
        out.add(
            key_of(store, w),
            [
                {
                    **row,
                    "code_version": store.version,
                    "budget": label_of(w.get("budget", {})),
                    "extra": label_of(w.get("extra", {})),
                }
            ],
        )
        done += 1
        if progress and done % max(1, len(todo) // 20) == 0:
            print(f"headroom: {done}/{len(todo)} days", file=sys.stderr)

    with store.writer(flush_every=100, flush_s=10.0) as out:
        if workers <= 1:
            for w in todo:
                if time.monotonic() > deadline:
                    break
                finished(w, day_row(**w))
        else:
            ex = ProcessPoolExecutor(workers)
            try:
                pending = {ex.submit(day_row, **w): w for w in todo}
                while pending and (left := deadline - time.monotonic()) > 0:
                    for f in wait(pending, timeout=min(left, 30.0), return_when=FIRST_COMPLETED)[0]:
                        finished(pending.pop(f), f.result())
            finally:
                # in-flight days are dropped at the deadline (lost, never half-stored); the executor has no
                # public way to stop a running task, so its worker processes are terminated
                for proc in list((getattr(ex, "_processes", None) or {}).values()):
                    proc.terminate()
                ex.shutdown(wait=False, cancel_futures=True)
    print(f"headroom: {done} days finished, {len(todo) - done} left", file=sys.stderr)
    return done


def table(df: pd.DataFrame, layer: str) -> pd.DataFrame:
    """Per cell: n, mean ± 95 % CI of every label; layer (b): paired planner − rule (on the seeds both ran)."""
    from gpu_sched_env.core.stats import mean_ci

    cell = ["day", "stock", "c_max", "tight"]
    rows = []
    for key, g in df.groupby(cell, sort=False):
        row = dict(zip(cell, key))
        by = {lab: h.set_index("seed") for lab, h in g.groupby("label")}
        for lab in LABELS_A if layer == "a" else LABELS_B:
            if lab not in by:
                continue
            h = by[lab]
            row[f"{lab}_n"] = len(h)
            for m in ("mean_wait_min", "miss_pct", "objective_s"):
                ci = mean_ci(h[m].to_numpy())
                row[f"{lab}_{m}"], row[f"{lab}_{m}_ci"] = ci.mean, ci.half_width
        if layer == "b" and {"rule", "planner"} <= set(by):
            common = by["planner"].index.intersection(by["rule"].index)
            row["paired_n"] = len(common)
            for lab in ("rule", "planner"):  # means on the paired days only
                row[f"{lab}_paired_mean_wait_min"] = (
                    float(by[lab].loc[common, "mean_wait_min"].mean()) if len(common) else np.nan
                )
            for m in ("mean_wait_min", "miss_pct", "objective_s"):
                d = by["planner"].loc[common, m].to_numpy() - by["rule"].loc[common, m].to_numpy()
                ci = mean_ci(d) if len(d) else None
                row[f"diff_{m}"], row[f"diff_{m}_ci"] = (ci.mean, ci.half_width) if ci else (np.nan, np.nan)
            row["deviations_per_day"] = float(by["planner"].loc[common, "n_deviated"].mean()) if len(common) else np.nan
        rows.append(row)
    out = pd.DataFrame(rows)
    if len(out):  # grid order, not the order the days finished in
        rank = [out[k].map({v: i for i, v in enumerate(GRID[k])}) for k in cell]
        out = out.iloc[np.lexsort(rank[::-1])].reset_index(drop=True)
    return out


def _pm(m: float, ci: float, nd: int = 2) -> str:
    return f"{m:.{nd}f}" if not np.isfinite(ci) else f"{m:.{nd}f} ± {ci:.{nd}f}"


def markdown(t: pd.DataFrame, layer: str) -> str:
    """The layer's table as Markdown (mean wait min, miss %, objective s/job; ± 95 % CI)."""
    if layer == "a":
        head = (
            "| day | stock | C_max | tight | n | rule wait min | rule miss % | rule objective s | all-High wait "
            "| no-delay wait | SRPT bound wait |"
        )
        lines = [head, "|" + "---|" * 11]
        for r in t.itertuples():
            lines.append(
                f"| {r.day} | {r.stock} | {r.c_max} | {r.tight} | {r.rule_n} | "
                f"{_pm(r.rule_mean_wait_min, r.rule_mean_wait_min_ci)} "
                f"| {_pm(r.rule_miss_pct, r.rule_miss_pct_ci)} | {_pm(r.rule_objective_s, r.rule_objective_s_ci, 0)} "
                f"| {_pm(r.all_high_mean_wait_min, r.all_high_mean_wait_min_ci)} | "
                f"{_pm(r.no_delay_mean_wait_min, r.no_delay_mean_wait_min_ci)} "
                f"| {r.srpt_mean_wait_min:.2f} |"
            )
        return "\n".join(lines) + "\n"
    head = (
        "| day | stock | C_max | tight | n paired | rule wait min | planner wait min | planner − rule wait (paired) "
        "| planner − rule miss % | planner − rule objective s | plans changed per day |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in t.itertuples():
        if "paired_n" not in t.columns or not np.isfinite(getattr(r, "paired_n", np.nan)):
            continue
        lines.append(
            f"| {r.day} | {r.stock} | {r.c_max} | {r.tight} | {int(r.paired_n)} | {r.rule_paired_mean_wait_min:.2f} "
            f"| {r.planner_paired_mean_wait_min:.2f} | {_pm(r.diff_mean_wait_min, r.diff_mean_wait_min_ci, 3)} "
            f"| {_pm(r.diff_miss_pct, r.diff_miss_pct_ci, 3)} | {_pm(r.diff_objective_s, r.diff_objective_s_ci, 1)} "
            f"| {r.deviations_per_day:.1f} |"
        )
    return "\n".join(lines) + "\n"


def figure(ta: pd.DataFrame, tb: pd.DataFrame, path: Path) -> Path:
    """Two panels: (a) the rule's map, (b) the planner against the rule.

    (a) a map of the rule's wait and its gap to the all-High bound per cell (tight 0.2); (b) paired planner − rule per
    layer-(b) cell.
    """
    from matplotlib.colors import LogNorm

    from gpu_sched_env.core.plotting import plt, save

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [1.1, 1]})
    a = ta[ta.tight == "0.2"] if len(ta) else ta
    rows = [(d, c) for d in GRID["day"] for c in GRID["c_max"]]
    gap = np.full((len(rows), len(GRID["stock"])), np.nan)
    txt = [["" for _ in GRID["stock"]] for _ in rows]
    for r in a.itertuples():
        i, j = rows.index((r.day, r.c_max)), GRID["stock"].index(r.stock)
        gap[i, j] = max(r.rule_mean_wait_min - r.all_high_mean_wait_min, 1e-2)
        txt[i][j] = f"{r.rule_mean_wait_min:.1f}\n({r.all_high_mean_wait_min:.1f})"
    im = ax.imshow(
        gap,
        cmap="Reds",
        norm=LogNorm(vmin=1e-2, vmax=max(np.nanmax(gap), 1.0)) if np.isfinite(gap).any() else None,
        aspect="auto",
    )
    for i in range(len(rows)):
        for j in range(len(GRID["stock"])):
            ax.text(j, i, txt[i][j], ha="center", va="center", fontsize=7, color="white" if gap[i, j] > 10 else "black")
    ax.set_xticks(range(len(GRID["stock"])), [s if s == "fresh" else f"D={s}" for s in GRID["stock"]])
    ax.set_yticks(range(len(rows)), [f"{d} C={c}" for d, c in rows])
    ax.set_title("(a) rule wait min (all-High bound), tight 0.2;\ncolour: rule − all-High [min]")
    fig.colorbar(im, ax=ax, fraction=0.04)
    if "paired_n" in tb:
        b = tb.dropna(subset=["paired_n"]).reset_index(drop=True)
        y = np.arange(len(b))
        bx.errorbar(b.diff_mean_wait_min, y, xerr=b.diff_mean_wait_min_ci.fillna(0.0), fmt="o", capsize=3)
        bx.set_yticks(y, [f"{r.day} {r.stock} C{r.c_max} t{r.tight} (n={int(r.paired_n)})" for r in b.itertuples()])
    bx.axvline(0.0, color="grey", lw=1)
    bx.set(xlabel="planner − rule mean wait [min] (paired, 95 % CI)", title="(b) planner over the rule, paired days")
    fig.tight_layout()
    return save(fig, path)


def render(store: CellStore, stem: Path, budget: str = "", extra: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables (``<stem>_a.md/.csv``, ``<stem>_b.md/.csv``) and figure (``<stem>.png``) from this code version's rows."""
    df = current_rows(store, budget, extra)
    if df.empty or "label" not in df:
        raise ConfigError(f"--render: the store {store.root} holds no rows of this code version; run a layer first")
    df = df[COLS]
    tables = []
    for layer, labels in (("a", LABELS_A), ("b", LABELS_B)):
        sub = df[df.label.isin(labels)]
        if layer == "a":  # a cell of layer (a) needs every bound
            sub = sub.groupby(["day", "stock", "c_max", "tight"]).filter(lambda g: set(g.label) >= set(LABELS_A))
        else:
            sub = sub.groupby(["day", "stock", "c_max", "tight"]).filter(lambda g: "planner" in set(g.label))
        t = table(sub, layer) if len(sub) else pd.DataFrame()
        stem.parent.mkdir(parents=True, exist_ok=True)
        t.to_csv(f"{stem}_{layer}.csv", index=False)
        Path(f"{stem}_{layer}.md").write_text(markdown(t, layer) if len(t) else "(no rows)\n")
        tables.append(t)
    figure(tables[0], tables[1], stem.with_suffix(".png"))
    return tables[0], tables[1]


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--layer",
        choices=("a", "b"),
        help="(a) rule vs bounds on the grid; (b) planner vs rule on LAYER_B or the cells given",
    )
    for k, vs in GRID.items():
        ap.add_argument(
            f"--{k.replace('_', '-')}", nargs="+", metavar="V", help=f"cell values (default all: {' '.join(vs)})"
        )
    ap.add_argument("--seeds", type=int, default=20, help=f"days per cell: seeds {SEED0}.. (default 20)")
    ap.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="further simulator parameter for every day (e.g. n_jobs=60 for a smoke run; part of the stored key)",
    )
    ap.add_argument(
        "--budget", default="", help="planner knobs NAME=VALUE[,...] (layer b; default: the planner's defaults)"
    )
    ap.add_argument("--workers", type=int, default=1, help="processes (days run in parallel)")
    ap.add_argument(
        "--max-seconds", type=float, default=None, help="stop taking results after this wall time [s] (resume later)"
    )
    ap.add_argument("--store", default="runs/headroom", help="the resume store folder (default runs/headroom)")
    ap.add_argument(
        "--render",
        metavar="STEM",
        help="write tables and figure from the store to STEM_{a,b}.{md,csv}, STEM.png (the rows of --budget and "
        "--param)",
    )
    ap.add_argument("--no-progress", action="store_true")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """``python -m studies headroom`` (see the module doc)."""
    args = parse(argv)
    try:
        given = {k: getattr(args, k) for k in GRID if getattr(args, k) is not None}
        check_cells(given)
        if args.seeds < 1 or args.workers < 1 or (args.max_seconds is not None and args.max_seconds <= 0):
            raise ConfigError("--seeds and --workers must be >= 1 and --max-seconds > 0")
        budget = parse_budget(args.budget) if args.budget else {}
        extra = parse_extra(args.param)
        store = CellStore(args.store, SOURCES)
        if args.layer:
            # the cells given (a dimension not given: all its grid values); layer (b) without any: LAYER_B
            cells = (
                list(LAYER_B)
                if args.layer == "b" and not given
                else list(itertools.product(*[given.get(k, list(vs)) for k, vs in GRID.items()]))
            )
            run(
                store,
                work(args.layer, cells, range(SEED0, SEED0 + args.seeds), budget, extra),
                args.workers,
                args.max_seconds,
                not args.no_progress,
            )
        if args.render:
            ta, tb = render(store, Path(args.render), label_of(budget), label_of(extra))
            print(markdown(ta, "a") if len(ta) else "", markdown(tb, "b") if len(tb) else "", sep="\n")
        if not (args.layer or args.render):
            raise ConfigError("nothing to do: give --layer a|b and/or --render STEM")
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


__all__ = ["GRID", "LAYER_B", "day_row", "main", "markdown", "parse_budget", "render", "run", "table", "work"]
