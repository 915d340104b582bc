"""Learned policy vs the heuristics on matched seeds: table with CIs, paired tests, figure."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.batch import run_grid, summarise
from gpu_sched_env.core import criteria
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text
from gpu_sched_env.core.stats import compare_pairs

log = logging.getLogger("gpu_sched_agents.rl.train")  # the training log's name: train.log and the console show it

TABLE_METRICS = ("mean_wait_min", "miss_pct", "mean_tardiness_min", "cost_usd")
TEST_METRICS = ("miss_pct", "mean_wait_min")


def heuristic_runs(
    names: Sequence[str], seeds: Sequence[int], day: str, params: dict[str, Any], progress: bool = False
) -> pd.DataFrame:
    """Per-seed summaries of the heuristics (``simulate`` = the env driven by the heuristic agents), policy-major.

    The days are deterministic given the day, the parameters, the seed and the simulator's and
    heuristics' code, so they are kept in the user's cache (``reference_cache("heuristics")``, one cell
    per seed, keyed by all of these): a run that asks for stored seeds reads them instead of
    simulating (``GPU_SCHED_REFERENCE_CACHE=0``: always simulated).
    """
    import json

    import numpy as np

    from gpu_sched_env.cgrsp.batch import SIM_SOURCES
    from gpu_sched_env.core.store import in_grid_order, reference_cache, stored_rows

    names, seeds = list(names), [int(s) for s in seeds]
    blob = json.dumps(params, sort_keys=True, default=str)
    cells = {s: {"day": day, "params": blob, "seed": s, "policies": names, "numpy": np.__version__} for s in seeds}

    def simulate(todo: list[int]) -> pd.DataFrame:
        return run_grid(names, todo, day=day, params=params, executor="serial", progress=progress)

    return in_grid_order(stored_rows(reference_cache("heuristics", SIM_SOURCES), cells, simulate, "seed"), names, seeds)


def comparison(
    learned: pd.DataFrame,
    heuristics: pd.DataFrame,
    label: str = "learned",
    table_metrics: Sequence[str] = TABLE_METRICS,
    test_metrics: Sequence[str] = TEST_METRICS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(table, tests)``.

    ``table``: mean and 95 % CI half-width per policy (learned first). ``tests``: per
    heuristic and metric, the paired difference learned − heuristic on matched seeds, the
    paired t-test and Wilcoxon p-values, Cohen's d_z, and Holm-adjusted p-values over the
    whole family (all heuristics × metrics, t-tests and Wilcoxon separately). The metrics are
    CGRSP's unless given.
    """
    learned = learned.assign(policy=label)
    both = pd.concat([learned, heuristics], ignore_index=True)
    table = summarise(both, list(table_metrics))
    ref = learned.set_index("seed").sort_index()
    values: dict[str, Any] = {}
    pairs: list[tuple[str, str]] = []
    keys: list[tuple[str, str]] = []
    for name, g in heuristics.groupby("policy", sort=False):
        g = g.set_index("seed").sort_index()
        common = ref.index.intersection(g.index)
        for m in test_metrics:  # one family: every heuristic x metric, on its matched seeds
            a, b = f"{label}|{name}|{m}", f"{name}|{m}"
            values[a], values[b] = ref.loc[common, m].to_numpy(), g.loc[common, m].to_numpy()
            pairs.append((a, b))
            keys.append((name, m))
    if not pairs:
        return table, pd.DataFrame()
    rows = compare_pairs(values, pairs)
    tests = pd.DataFrame(
        {
            "vs": [k[0] for k in keys],
            "metric": [k[1] for k in keys],
            **{
                out: [r[col] for r in rows]
                for out, col in (
                    ("n", "n"),
                    ("mean_diff", "mean_diff"),
                    ("t_p", "t_p"),
                    ("wilcoxon_p", "w_p"),
                    ("cohens_d", "cohens_d"),
                    ("t_p_holm", "t_p_holm"),
                    ("wilcoxon_p_holm", "w_p_holm"),
                )
            },
        }
    )
    # better: significantly lower by the unadjusted paired t (the Holm-adjusted p is the column beside it)
    tests["better"] = [criteria.significance(d, p) == criteria.BETTER for d, p in zip(tests.mean_diff, tests.t_p)]
    return table, tests


def format_table(table: pd.DataFrame, metrics: Sequence[str] = TABLE_METRICS) -> str:
    """Plain-text table: mean ± CI half-width."""
    out = pd.DataFrame(index=table.index)
    for m in metrics:
        out[m] = [f"{a:8.2f} ± {b:5.2f}" for a, b in zip(table[m], table[f"{m}_ci"])]
    return out.to_string()


def figure(
    table: pd.DataFrame,
    path: str | Path,
    title: str,
    panels: Sequence[tuple[str, str]] = (("miss_pct", "deadline miss [%]"), ("mean_wait_min", "mean wait [min]")),
    learned: str | None = None,
) -> Path:
    """Bars with 95 % CIs of two metrics per policy (PNG): CGRSP's miss % and mean wait unless ``panels``.

    ``learned``: the learned policy's row (orange, every other row a heuristic); None: CGRSP's
    colours (published heuristics blue, our rules purple, the rest orange).
    """
    from gpu_sched_env.core.plotting import plt, save

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    order = table.sort_values(panels[0][0]).index
    for ax, (m, lab) in zip(axes, panels):
        t = table.loc[order]
        colors = [
            ("#ff7f0e" if p == learned else "#1f77b4")
            if learned is not None
            else ("#1f77b4" if p in POLICY_NAMES else ("#9467bd" if p in EXTENSIONS else "#ff7f0e"))
            for p in t.index
        ]  # learned: orange
        ax.bar(range(len(t)), t[m], yerr=t[f"{m}_ci"], color=colors, capsize=3)
        ax.set_xticks(range(len(t)))
        ax.set_xticklabels(t.index, rotation=45, ha="right")
        ax.set_ylabel(lab)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save(fig, path)


def versus_rules(run_dir: Path, stem: str = "final_eval", rules: Sequence[str] | None = None) -> dict[str, Any]:
    """A learned run against the strongest rule on its own test seeds (from ``<stem>_per_seed.csv`` / ``_tests.csv``).

    The strongest rule is the deferring rule (``rules``, default every extension heuristic)
    with the lowest mean miss %, then the lowest mean wait, on the run's test seeds: the bar
    is re-measured per run, never taken from another seed set. ``beats``: the verdict
    (:func:`gpu_sched_env.core.criteria.verdict`) is ``better``: wait lower with Holm p < ALPHA
    and mean miss not higher.
    """
    import yaml

    from gpu_sched_agents.evaluate.protocol import RULE_KEYS

    run_dir = Path(run_dir)
    per_seed = pd.read_csv(run_dir / f"{stem}_per_seed.csv")
    tests = pd.read_csv(run_dir / f"{stem}_tests.csv").set_index(["vs", "metric"])
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    label = cfg["algo"]["name"]
    rules = list(rules if rules is not None else EXTENSIONS)
    missing = [r for r in rules if r not in set(per_seed.policy)]
    if missing:  # a run evaluated before these rules existed: simulate them on its seeds (the learner is not re-run)
        learned = per_seed[per_seed.policy == label].drop(columns="policy")
        day = str(per_seed[per_seed.policy == label].day.iloc[0])
        extra = heuristic_runs(missing, learned.seed.tolist(), day, dict(cfg["env"].get("params") or {}))
        heur = pd.concat([per_seed[per_seed.policy != label], extra], ignore_index=True)
        _, tests = comparison(learned, heur, label=label)
        tests = tests.set_index(["vs", "metric"])
        per_seed = pd.concat([per_seed, extra], ignore_index=True)
    means = per_seed.groupby("policy")[["miss_pct", "mean_wait_min"]].mean()
    pool = [r for r in rules if r in means.index]
    best = criteria.best_rule(means, pool, RULE_KEYS)
    w, m = tests.loc[(best, "mean_wait_min")], tests.loc[(best, "miss_pct")]
    params = cfg["env"].get("params") or {}
    stock = (
        "fresh"
        if params.get("stock_process", "fresh") == "fresh"
        else f"D={float(params.get('stock_dwell_s', 900)):g}s"
    )
    return {
        "run": run_dir.name,
        "seed": cfg["seed"],
        "stock": stock,
        "n": int(w.n),
        "learned miss %": means.loc[label, "miss_pct"],
        "learned wait": means.loc[label, "mean_wait_min"],
        "best rule": best,
        "rule miss %": means.loc[best, "miss_pct"],
        "rule wait": means.loc[best, "mean_wait_min"],
        "Δ wait": float(w.mean_diff),
        "Holm p wait": float(w.t_p_holm),
        "Δ miss": float(m.mean_diff),
        "Holm p miss": float(m.t_p_holm),
        "beats": criteria.verdict(w.mean_diff, w.t_p_holm, m.mean_diff, m.t_p_holm) == criteria.BETTER,
    }


def write_comparison(
    learned: pd.DataFrame,
    heur: pd.DataFrame,
    label: str,
    out_dir: Path,
    stem: str,
    heading: str,
    title: str,
    note: str = "",
    table_metrics: tuple[str, ...] = TABLE_METRICS,
    test_metrics: tuple[str, ...] = TEST_METRICS,
    panels: tuple[tuple[str, str], ...] | None = None,
) -> pd.DataFrame:
    """Write ``<stem>.{csv,md,png}``, ``<stem>_per_seed.csv`` and ``<stem>_tests.csv``; log them; return the table.

    ``learned`` and ``heur`` are per-seed rows on the same seeds (``heur`` with a ``policy`` column).
    The metrics are CGRSP's unless given; ``panels`` (metric, axis label) switch the figure to
    learned-orange / heuristics-blue.
    """
    table, tests = comparison(learned, heur, label=label, table_metrics=table_metrics, test_metrics=test_metrics)
    atomic_write_table(
        out_dir / f"{stem}_per_seed.csv", pd.concat([learned.assign(policy=label), heur], ignore_index=True)
    )
    atomic_write_table(out_dir / f"{stem}.csv", table.reset_index())
    atomic_write_table(out_dir / f"{stem}_tests.csv", tests)
    text = (
        f"# {heading}\n\n"
        + (f"{note}\n\n" if note else "")
        + f"```\n{format_table(table, table_metrics)}\n```\n\n"
        + f"Paired tests, {label} − heuristic (negative = learned lower; Holm over the family):\n\n"
        + f"```\n{tests.to_string(index=False, float_format=lambda x: f'{x:.3g}')}\n```\n"
    )
    atomic_write_text(out_dir / f"{stem}.md", text)
    if panels is None:
        figure(table, out_dir / f"{stem}.png", title)
    else:
        figure(table, out_dir / f"{stem}.png", title, panels, learned=label)
    log.info(text)
    log.info(f"Written to {out_dir}/{stem}.*")
    return table


LABELS = {"miss_pct": "miss [%]", "mean_wait_min": "mean wait [min]", "objective": "objective (-return)"}


def verdict(out_dir: Path, stem: str = "final_eval") -> list[str]:
    """A run's last words: the learned policy against the strongest baseline of its comparison, one line per metric.

    Reads what :func:`write_comparison` wrote (``<stem>.csv``, ``<stem>_tests.csv``). The strongest
    baseline is the one lowest on the tested metrics in their order (CGRSP: the fewest misses, then
    the lowest wait; lower is better for every tested metric; :func:`~gpu_sched_env.core.criteria.best_rule`);
    each line gives both means, the paired difference and its word
    (:func:`~gpu_sched_env.core.criteria.significance`: the Holm-adjusted paired t at
    :data:`~gpu_sched_env.core.stats.ALPHA`).
    """
    table = pd.read_csv(out_dir / f"{stem}.csv").set_index("policy")
    tests = pd.read_csv(out_dir / f"{stem}_tests.csv")
    metrics = list(dict.fromkeys(tests.metric))
    learned, n = table.index[0], int(table.n.iloc[0])
    best = criteria.best_rule(table, [p for p in table.index if p != learned], metrics)
    lines = [f"{learned} against the strongest baseline on these {n} held-out seeds, {best}:"]
    for m in metrics:
        row = tests[(tests.vs == best) & (tests.metric == m)].iloc[0]
        p = float(row.t_p_holm)
        word = criteria.significance(row.mean_diff, p)
        mine, theirs = table.loc[learned, m], table.loc[best, m]
        said = f"{mine:.4g} vs {theirs:.4g} ({row.mean_diff:+.3g}): {word} (paired t, Holm p = {p:.2g})"
        lines.append(f"  {LABELS.get(m, m)}: {said}")
    return lines


def log_verdict(run_dir: Path, stem: str = "final_eval") -> None:
    """Log :func:`verdict`, where the tables are and the TensorBoard command of the run (nothing without them)."""
    run_dir = Path(run_dir)
    if not (run_dir / f"{stem}_tests.csv").is_file():
        return
    lines = verdict(run_dir, stem)
    lines.append(f"  every table: {run_dir / (stem + '.md')}")
    lines.append(f"  learning curves against every heuristic: tensorboard --logdir {run_dir / 'tb'}")
    log.info("Verdict: " + "\n".join(lines))
