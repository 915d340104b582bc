"""Markdown reports: one per experiment, and the results page (docs/results.md) with every one.

Each section is rendered from the experiment's tidy table: tables in the study's shapes,
figures saved as PNG next to the Markdown, a few computed sentences of reading, and the
command that reproduces it. The prose lives in Markdown templates under ``templates/``
(:func:`paragraphs`): each experiment's reading in ``notes/<name>.md``, the departures from the
published figures (backed by the diagnostics tables) in ``departures.md``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from string import Template

import pandas as pd

from gpu_sched_env.cgrsp.reference import PUBLISHED_HECTIC, check_contract
from gpu_sched_env.core.io import atomic_write_text
from studies.cgrsp.programme import figures as F
from studies.cgrsp.programme import tables as T
from studies.cgrsp.programme.grids import MONTH_SEED_BASE, Experiment

CLI = "python -m studies experiments"
Figure = Callable[[str], str]  # file name -> Markdown link


def _seeds(exp: Experiment) -> str:
    s = sorted(exp.seeds)
    return f"{s[0]}–{s[-1]}" if len(s) > 2 and s == list(range(s[0], s[-1] + 1)) else ", ".join(map(str, s))


def _header(exp: Experiment, df: pd.DataFrame, level: int) -> list[str]:
    h = "#" * level
    what = f"policies {', '.join(exp.policies)}; {'replication' if exp.kind == 'month' else 'run'} seeds {_seeds(exp)}"
    if exp.kind == "sweep" and exp.param:
        what += f"; {exp.param} ∈ {{{', '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in exp.values)}}}"
    if exp.kind != "month":
        what += f"; day{'s' if len(exp.days) > 1 else ''} {', '.join(exp.days)}"
    if exp.params:
        what += f"; fixed {', '.join(f'{k}={v}' for k, v in exp.params.items())}"
    return [f"{h} {exp.title}", "", f"Command: `{CLI} {exp.name}` — {what} ({len(df)} simulated days).", ""]


def _extreme(s: pd.Series, unit: str = "", lowest: bool = True, digits: int = 2) -> str:
    p = s.idxmin() if lowest else s.idxmax()
    return f"{p} ({s[p]:.{digits}f}{unit})"


def _beside_published(tab: pd.DataFrame, df: pd.DataFrame) -> None:
    """Add the published hectic-day values (spec §4) and our differences to the policy table ``tab``."""
    means = T.cell_means(df, ("policy",), T.MAIN_METRICS)
    for m, lab in (
        ("mean_wait_min", "pub wait"),
        ("miss_pct", "pub miss %"),
        ("mean_tardiness_min", "pub tardiness"),
        ("cost_usd", "pub cost $"),
    ):
        tab[lab] = [PUBLISHED_HECTIC.loc[p, m] if p in PUBLISHED_HECTIC.index else float("nan") for p in tab.index]
    tab["Δwait %"] = [
        f"{100 * (means.loc[p, 'mean_wait_min'] / PUBLISHED_HECTIC.loc[p, 'mean_wait_min'] - 1):+.1f}"
        if p in PUBLISHED_HECTIC.index
        else "—"
        for p in tab.index
    ]
    tab["Δmiss pp"] = [
        f"{means.loc[p, 'miss_pct'] - PUBLISHED_HECTIC.loc[p, 'miss_pct']:+.2f}" if p in PUBLISHED_HECTIC.index else "—"
        for p in tab.index
    ]


def _gantt_lines(exp: Experiment, fig: Figure) -> list[str]:
    """The ``single`` experiment's Gantt charts (RH and FIFO, or its first policy) with a line of reading each."""
    from gpu_sched_env.cgrsp.api import simulate

    L: list[str] = []
    for pol in [p for p in ("rh", "fifo") if p in exp.policies] or [exp.policies[0]]:
        res = simulate(pol, day=exp.days[0], seed=exp.seeds[0], **exp.params)
        j = res.jobs
        prov = (j["start"] - j["dispatch"]) / 60.0
        low = j["stock_at_dispatch"] == "Low"
        L += [
            fig(F.gantt_figure(res, fig.dir / f"{exp.name}_gantt_{pol}.png").name),
            "",
            f"Gantt chart of {pol}: execution bars green (on time) or red (missed), tight jobs hatched, "
            f"provisioning delay grey. {int(low.sum())} dispatches went to Low-stock slots "
            f"({prov[low].sum() / 60:.1f} slot-hours of provisioning); longest provisioning delay {prov.max():.0f} "
            "min.",
            "",
        ]
    return L


def _policies_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    L: list[str] = []
    tab = T.policy_table(df)
    pub = exp.days == ("hectic",) and not exp.params
    if pub:
        _beside_published(tab, df)
    L += [
        "Per policy, mean ± 95 % t-interval half-width over seeds"
        + (" (one seed: no interval)" if len(exp.seeds) == 1 else "")
        + (", beside the published values (spec §4)." if pub else "."),
        "",
        T.md_table(tab),
        "",
    ]
    m = T.cell_means(df, ("policy",), T.MAIN_METRICS)
    L += [
        f"Reading: lowest miss {_extreme(m['miss_pct'], ' %')}, lowest wait {_extreme(m['mean_wait_min'], ' min')}, "
        f"lowest tardiness {_extreme(m['mean_tardiness_min'], ' min')}, highest miss "
        f"{_extreme(m['miss_pct'], ' %', lowest=False)}; "
        f"cost spread {100 * (m['cost_usd'].max() / m['cost_usd'].min() - 1):.1f} % "
        f"({m['cost_usd'].min():.2f}–{m['cost_usd'].max():.2f} $).",
        "",
    ]
    if exp.name == "single":
        L += _gantt_lines(exp, fig)
    L += [fig(F.policy_bars(df, fig.dir / f"{exp.name}_bars.png", PUBLISHED_HECTIC if pub else None).name), ""]
    if len(exp.seeds) > 1:
        L += [
            fig(
                F.miss_tardiness_scatter(
                    df, fig.dir / f"{exp.name}_scatter.png", PUBLISHED_HECTIC if pub else None
                ).name
            ),
            "",
        ]
        t = T.paired_tests(df)
        if len(t):
            if fig.save_data:
                t.to_csv(fig.dir / f"{exp.name}_tests.csv", index=False)
            L += [
                "Paired comparisons on matched seeds (a − b; RH and CADR against every other policy): paired t-test "
                "and Wilcoxon signed-rank, p-values Holm–Bonferroni-adjusted over the whole table (one family), "
                "Cohen's d = mean/sd of the paired differences; 'significant' at family-wise α = 0.05.",
                "",
                T.md_table(T.tests_md(t), index=False),
                "",
            ]
    if pub and len(exp.seeds) > 1:
        c = check_contract(T.cell_means(df, ("policy",), T.MAIN_METRICS))
        L += [
            "Calibration contract (spec §6, `reference.check_contract`): "
            f"{int(c['holds'].sum())} of {len(c)} checks hold.",
            "",
            T.md_table(c, index=False),
            "",
        ]
    return L


def _sweep_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    L: list[str] = []
    col = exp.param or "day"
    metrics = {
        "tight": ("miss_pct", "tight_miss_pct", "mean_wait_min"),
        "cmax": ("mean_wait_min", "miss_pct", "cost_usd"),
        "daytype": ("mean_wait_min", "miss_pct"),
    }.get(exp.name, ("miss_pct", "mean_wait_min", "mean_tardiness_min"))
    if col != "day" and len(exp.days) > 1:  # one table per day
        for day in exp.days:
            d = df[df["day"] == day]
            for m in metrics[:2]:
                L += [f"{T.LABELS[m]} on the {day} day:", "", T.md_table(T.sweep_table(d, col, m)), ""]
            L += [
                fig(
                    F.sweep_lines(
                        d, col, fig.dir / f"{exp.name}_{day}.png", metrics, title=f"{exp.title}: {day} day"
                    ).name
                ),
                "",
            ]
    else:
        for m in metrics:
            L += [f"{T.LABELS[m]} (mean ± 95 % CI):", "", T.md_table(T.sweep_table(df, col, m)), ""]
        if col == "day":
            L += [fig(F.daytype_bars(df, fig.dir / f"{exp.name}_bars.png").name), ""]
        else:
            logx = exp.param in ("theta", "cr_star")
            L += [
                fig(
                    F.sweep_lines(df, col, fig.dir / f"{exp.name}_lines.png", metrics, title=exp.title, logx=logx).name
                ),
                "",
            ]
    best = []
    for key, g in df.groupby(["day"] if col == "day" else ["day", col], sort=False):
        day, v = (key[0], key[0]) if col == "day" else key
        mm = g.groupby("policy")["miss_pct"].mean()
        ww = g.groupby("policy")["mean_wait_min"].mean()
        tag = f"{day}" if col == "day" else (f"{v}" if len(exp.days) == 1 else f"{day}, {v}")
        best.append(
            f"{tag}: miss {_extreme(mm, ' %')}, wait {_extreme(ww, ' min', digits=1)}"
            if len(mm) > 1
            else f"{tag}: {mm.iloc[0]:.2f} % miss, {ww.iloc[0]:.1f} min wait"
        )
    L += ["Reading (lowest miss and lowest wait per cell): " + "; ".join(best) + ".", ""]
    if exp.name in ("daytype", "cmax", "tight") and "rh" in set(df["policy"]) and df["policy"].nunique() > 2:
        lo, hi = T.RH_PACK_BOUNDS
        L += [
            f"RH's mean wait against the pack (spec §6: within {lo:g}–{hi:g}× the median policy's), against the median "
            "of the other ten published policies and of the seven contract policies (RH included):",
            "",
            T.md_table(T.rh_in_pack(df, ["day"] if col == "day" else ["day", col])),
            "",
        ]
    return L


DAY_COLORS = {"quiet": "tab:green", "normal": "tab:blue", "surge": "tab:orange", "hectic": "tab:red"}
RESERVATION_METRICS = ("mean_wait_min", "tight_miss_pct", "loose_miss_pct", "miss_pct")


def _reservation_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    """RH's ρ_res sweep: per day its offered load against the gate, then wait and miss by ρ_res."""
    from gpu_sched_env.cgrsp.fleet import Fleet
    from gpu_sched_env.cgrsp.params import make_params
    from gpu_sched_env.cgrsp.policies import POLICIES

    col, gate = exp.param or "rho_res", float(exp.params.get("rho_gate", POLICIES.entry("rh").knobs["rho_gate"]))
    sim_params = {k: v for k, v in exp.params.items() if k not in POLICIES.entry("rh").knobs}
    L: list[str] = []
    reading = []
    for day in exp.days:
        d = df[df["day"] == day]
        rho = Fleet.from_params(make_params(day, **sim_params)).offered_load
        on = rho < gate
        L += [
            f"{day} day: offered load ρ = λ·W̄_mean/C_max = {rho:.3f} {'<' if on else '≥'} gate {gate:g}, so the "
            f"reservation is {'on' if on else 'off (identical rows)'} (mean ± 95 % CI over seeds):",
            "",
            T.md_table(T.metric_sweep_table(d, col, RESERVATION_METRICS)),
            "",
        ]
        m = T.cell_means(d, (col,), RESERVATION_METRICS)
        lo, hi = m.index.min(), m.index.max()
        reading.append(
            f"{day}: wait {m.loc[lo, 'mean_wait_min']:.1f} → {m.loc[hi, 'mean_wait_min']:.1f} min, tight miss "
            f"{m.loc[lo, 'tight_miss_pct']:.2f} → {m.loc[hi, 'tight_miss_pct']:.2f} %, loose miss "
            f"{m.loc[lo, 'loose_miss_pct']:.2f} → {m.loc[hi, 'loose_miss_pct']:.2f} %"
        )
    L += [
        f"Reading (ρ_res = {lo} → {hi}): " + "; ".join(reading) + ".",
        "",
        fig(
            F.sweep_lines(
                df.assign(policy=df["day"]),
                col,
                fig.dir / f"{exp.name}_lines.png",
                RESERVATION_METRICS[:3],
                title=exp.title,
                colors=DAY_COLORS,
            ).name
        ),
        "",
    ]
    return L


def _stock_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    col = exp.param or "stock"
    L = [
        "Columns: `fresh` (a new stock draw at every decision point, the calibrated default) and the persistent "
        "Markov stock process (`stock_process=markov`) with mean dwell `stock_dwell_s` = D seconds.",
        "",
    ]
    for day in exp.days:
        d = df[df["day"] == day]
        for m in ("miss_pct", "mean_wait_min"):
            L += [f"{T.LABELS[m]} on the {day} day:", "", T.md_table(T.sweep_table(d, col, m)), ""]
        if d["policy"].nunique() > 2:
            rel = T.relative_to_pack(d, col)
            L += [
                f"Wait relative to the median of the published policies (RH included) on the {day} day "
                "(below 1: waits less than the typical policy):",
                "",
                T.md_table(rel),
                "",
            ]
    if df["policy"].nunique() > 1:
        L += [fig(F.stock_lines(df, fig.dir / f"{exp.name}_lines.png", col).name), ""]
    return L


def _objective_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    L = [
        "Composite = w_cost·N(cost) + (1 − w_cost)·N(QoS), N = min–max over the policies' 30-seed mean totals, "
        "lower is better. Published objective: QoS = α1·Σwait[s] + α2·#misses (α1 = 1). Tardiness re-scoring: "
        "QoS = α1·Σwait[s] + α2·Σtardiness[s], so α2/α1 prices a second late against a second waited.",
        "",
    ]
    for basis, name in (("miss", "published objective (per miss)"), ("tardiness", "tardiness re-scoring")):
        sc = T.composite_scores(df, exp.w_cost, exp.ratios, basis)
        if fig.save_data:
            sc.to_csv(fig.dir / f"{exp.name}_{basis}_scores.csv", index=False)
        best = T.best_policy_grid(sc)
        L += [
            f"Best policy per weight, {name}:",
            "",
            T.md_table(best),
            "",
            f"Mean rank over the grid ({name}):",
            "",
            T.md_table(T.mean_rank_table(sc)),
            "",
            fig(F.objective_heatmap(best, sc, fig.dir / f"{exp.name}_{basis}.png", f"best policy, {name}").name),
            "",
        ]
    tot = T.run_totals(df).groupby("policy")[["wait_s", "misses", "tardiness_s"]].mean()
    L += [
        f"Reading: per run, Σwait is {tot['wait_s'].median() / 1e6:.1f}·10⁶ s (median over policies) against "
        f"{tot['misses'].median():.0f} misses, so with α2/α1 ≤ {max(exp.ratios):g} the miss term moves QoS by at most "
        f"{100 * max(exp.ratios) * (tot['misses'].max() - tot['misses'].min()) / tot['wait_s'].median():.2f} % and the "
        "published objective ranks by wait; tardiness (Σ ≈ "
        f"{tot['tardiness_s'].median() / 1e6:.2f}·10⁶ s) is on the wait's scale, so the re-scoring changes the winner "
        "as α2/α1 grows.",
        "",
    ]
    return L


def _month_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    mix = ", ".join(f"{v:g} {k}" for k, v in exp.mix)
    jobs = df.groupby("rep")["n_jobs"].sum() / df["policy"].nunique()
    L = [
        f"Day-type mix ({exp.mix_mode}): {mix} over {exp.n_days} days (spec §1's back-calculated default), order "
        f"shuffled per replication (`workload.month_plan(rep)`); day d of replication r uses run seed "
        f"{MONTH_SEED_BASE:,} + 1000·r + d. Jobs per month: {jobs.mean():.0f} on average.",
        "",
        "Monthly totals per policy (mean ± 95 % CI over replications; wait, miss and tardiness job-weighted):",
        "",
        T.md_table(T.month_table(df)),
        "",
        "Miss rate by day type (all replications pooled, job-weighted):",
        "",
        T.md_table(T.month_by_daytype(df)),
        "",
        fig(F.month_daily(df, fig.dir / f"{exp.name}_daily.png").name),
        "",
    ]
    m = T.month_totals(df).groupby("policy")[["miss_pct", "cost_usd"]].mean()
    L += [
        f"Reading: lowest monthly miss {_extreme(m['miss_pct'], ' %')}, highest "
        f"{_extreme(m['miss_pct'], ' %', lowest=False)}; "
        f"monthly cost {m['cost_usd'].min():.2f}–{m['cost_usd'].max():.2f} $. Misses come almost only from hectic and "
        "surge days.",
        "",
    ]
    return L


RENDERERS = {
    "policies": _policies_section,
    "sweep": _sweep_section,
    "objective": _objective_section,
    "month": _month_section,
}


class _Fig:
    """Figure linker: figures go to ``dir``; links are ``prefix + name``; CSVs only if ``save_data``."""

    def __init__(self, dir: Path, prefix: str, save_data: bool = True) -> None:
        self.dir, self.prefix, self.save_data = dir, prefix, save_data

    def __call__(self, name: str) -> str:
        return f"![{name}]({self.prefix}{name})"


def render_section(
    exp: Experiment,
    df: pd.DataFrame,
    fig_dir: str | os.PathLike,
    link_prefix: str = "",
    level: int = 2,
    save_data: bool = True,
) -> str:
    """Markdown for one experiment; its figures (and CSV side tables if ``save_data``) go to ``fig_dir``."""
    fig = _Fig(Path(fig_dir), link_prefix, save_data)
    fig.dir.mkdir(parents=True, exist_ok=True)
    render = (
        _stock_section
        if exp.param == "stock"
        else _reservation_section
        if exp.param == "rho_res"
        else RENDERERS[exp.kind]
    )
    lines = _header(exp, df, level) + render(exp, df, fig)
    reading = note(exp.name)
    return "\n".join(lines + ([reading, ""] if reading else []))


def write_experiment_report(exp: Experiment, df: pd.DataFrame, out: str | os.PathLike) -> Path:
    """``<out>/<name>/report.md`` with its figures beside it."""
    d = Path(out) / exp.name
    return atomic_write_text(d / "report.md", render_section(exp, df, d, "", level=1) + "\n")


TEMPLATES = Path(__file__).with_name("templates")  # the prose of the reports, Markdown read at run time


def paragraphs(name: str, **values: object) -> list[str]:
    """The paragraphs of ``templates/<name>.md``, each on one line, ``${name}`` filled from ``values``.

    A paragraph's lines are joined by single spaces (the files are wrapped for reading; the
    pages keep one line per paragraph); without ``values`` nothing is substituted, so a ``$``
    in prose stays as written.
    """
    text = (TEMPLATES / f"{name}.md").read_text(encoding="utf-8")
    paras = [" ".join(line.strip() for line in p.splitlines()) for p in text.strip().split("\n\n")]
    return [Template(p).substitute(values) for p in paras] if values else paras


def note(name: str) -> str | None:
    """The reading of experiment ``name`` (``templates/notes/<name>.md``), or ``None`` if it has none."""
    return " ".join(paragraphs(f"notes/{name}")) if (TEMPLATES / "notes" / f"{name}.md").is_file() else None


# ---------------------------------------------------------------------------- results page
def departures_section(exp: Experiment, validation: pd.DataFrame, fig_seeds: int = 10) -> list[str]:
    """Where and why the simulator departs from the published figures (spec §4/§6)."""
    from studies.cgrsp.programme.diagnostics import (
        idle_slots_at_decisions,
        slot_time_breakdown,
    )

    means = T.cell_means(validation, ("policy",), T.MAIN_METRICS)
    c = check_contract(means)
    seeds = sorted(validation["seed"].unique())[:fig_seeds]
    pols = T.order_policies(list(validation["policy"].unique()))
    idle = idle_slots_at_decisions(pols, seeds, **exp.params)
    brk = slot_time_breakdown(
        [p for p in ("fifo", "spt", "edf", "cadr", "rh") if p in pols] or pols[:3], seeds, **exp.params
    )
    pub = PUBLISHED_HECTIC
    gap = {
        p: means.loc[p, "miss_pct"] - pub.loc[p, "miss_pct"]
        for p in ("cadr", "adaptive", "rh", "spt", "edf", "fifo")
        if p in means.index
    }
    cost = means["cost_usd"]
    pub_pack = T.published_rh_pack()
    # RH's readings need RH among the run's policies (``--policies`` may leave it out)
    rh = "rh" in means.index
    ours = {k: f"{float(v.iloc[0]):.2f}" for k, v in T.pack_readings(means[["mean_wait_min"]].T).items()} if rh else {}
    not_run = "n/a (RH not run)"
    values = {
        "first_seed": seeds[0],
        "last_seed": max(validation["seed"]),
        "holds": int(c["holds"].sum()),
        "n_checks": len(c),
        "contract_table": T.md_table(c, index=False),
        "n_seeds": len(seeds),
        "idle_table": T.md_table(idle, floatfmt=".1f"),
        "cost_min": f"{cost.min():.2f}",
        "cost_max": f"{cost.max():.2f}",
        "cost_spread": f"{100 * (cost.max() / cost.min() - 1):.1f}",
        "cost_max_policy": cost.idxmax(),
        "breakdown_table": T.md_table(brk, floatfmt=".1f"),
        "rh_miss": f"{means.loc['rh', 'miss_pct']:.2f}" if rh else not_run,
        "ours_other10": ours.get("other 10", not_run),
        "pub_other10": f"{pub_pack['other 10']:.2f}",
        "ours_contract7": ours.get("contract 7", not_run),
        "pub_contract7": f"{pub_pack['contract 7']:.2f}",
        "miss_gaps": ", ".join(
            f"{p}: {means.loc[p, 'miss_pct']:.2f} % vs {pub.loc[p, 'miss_pct']:.2f} % ({g:+.2f} pp)"
            for p, g in gap.items()
        ),
        "cadr_low": (
            f"provisions onto Low stock as often as FIFO ({brk.loc['cadr', 'Low dispatches']:.1f} vs "
            f"{brk.loc['fifo', 'Low dispatches']:.1f} Low dispatches per run) "
            if {"cadr", "fifo"} <= set(brk.index)
            else ""
        ),
        "adaptive_vs_edf": (
            f"{means.loc['adaptive', 'miss_pct']:.2f} % vs EDF's {means.loc['edf', 'miss_pct']:.2f} %. "
            if {"adaptive", "edf"} <= set(means.index)
            else ""
        ),
        "tardiness_above": ", ".join(
            p
            for p in means.index
            if p in pub.index and means.loc[p, "mean_tardiness_min"] > pub.loc[p, "mean_tardiness_min"]
        ),
    }
    return [line for para in paragraphs("departures", **values) for line in (para, "")]


def timing_section(timing: pd.DataFrame | None) -> list[str]:
    """The benchmark table written by ``all`` (or a note that there is none)."""
    if timing is None or timing.empty:
        return ["## Run time", "", f"No timing table yet: run `{CLI} all`.", ""]
    total = timing.loc[timing["experiment"] == "TOTAL"]
    t = timing.loc[timing["experiment"] != "TOTAL"].set_index("experiment")
    L = [
        "## Run time of the programme",
        "",
        f"`{CLI} all` on this 2-core machine with local processes (executor `{timing['executor'].iloc[0]}`, "
        f"{int(timing['workers'].iloc[0])} workers), from an empty store. The cores were shared with other "
        "engineers' jobs during the measurement, so the times are pessimistic. Experiments share cells (e.g. "
        "`validation`, the hectic column of `daytype`, C_max = 5 and `objective` are the same simulated days), "
        "which are simulated once: 'run now' counts the cells an experiment added, 'CPU s' is the summed "
        "simulation time of all its cells whoever ran them (what it would cost alone, on one core).",
        "",
        T.md_table(t.drop(columns=["executor", "workers"]), floatfmt=".1f"),
        "",
    ]
    if len(total):
        L += [
            f"Whole programme: **{float(total['wall_s'].iloc[0]) / 60:.1f} min** wall (target ≤ 20 min), "
            f"{int(total['run now'].iloc[0])} simulated days, including the per-experiment reports and figures "
            "(rendering this page, with its diagnostic re-simulations, is not included: "
            f"`{CLI} report` prints its own time).",
            "",
        ]
    return L


def write_results_page(
    results: dict[str, tuple[Experiment, pd.DataFrame]],
    docs: str | os.PathLike,
    timing: pd.DataFrame | None = None,
) -> Path:
    """Write ``<docs>/results.md`` and its figures under ``<docs>/figures/``."""
    docs = Path(docs)
    L = [line for para in paragraphs("results_head") for line in (para, "")]
    L += ["Contents: " + ", ".join(f"[{e.title}](#{_anchor(e.title)})" for e, _ in results.values()), ""]
    L += timing_section(timing)
    if "validation" in results:
        L += departures_section(*results["validation"])
    for exp, df in results.values():
        L += [render_section(exp, df, docs / "figures", "figures/", level=2, save_data=False), ""]
    return atomic_write_text(docs / "results.md", "\n".join(L).rstrip() + "\n")


def _anchor(title: str) -> str:
    keep = "".join(ch for ch in title.lower() if ch.isalnum() or ch in " -_")
    return keep.strip().replace(" ", "-")
