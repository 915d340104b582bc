"""Markdown reports: one per experiment, and the results page (docs/results.md) with every one.

Each section is rendered from the experiment's tidy table: tables in the study's shapes,
figures saved as PNG next to the Markdown, a few computed sentences of reading, and the
command that reproduces it. Mechanism notes (why the simulator departs from the published
figures) live in :data:`NOTES` and are backed by the diagnostics tables.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

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


def _policies_section(exp: Experiment, df: pd.DataFrame, fig: Figure) -> list[str]:
    L: list[str] = []
    tab = T.policy_table(df)
    pub = exp.days == ("hectic",) and not exp.params
    if pub:
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
            f"{means.loc[p, 'miss_pct'] - PUBLISHED_HECTIC.loc[p, 'miss_pct']:+.2f}"
            if p in PUBLISHED_HECTIC.index
            else "—"
            for p in tab.index
        ]
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
        from gpu_sched_env.cgrsp.api import simulate

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
    note = NOTES.get(exp.name)
    return "\n".join(lines + ([note, ""] if note else []))


def write_experiment_report(exp: Experiment, df: pd.DataFrame, out: str | os.PathLike) -> Path:
    """``<out>/<name>/report.md`` with its figures beside it."""
    d = Path(out) / exp.name
    return atomic_write_text(d / "report.md", render_section(exp, df, d, "", level=1) + "\n")


NOTES: dict[str, str] = {
    "daytype": (
        "On the surge day (offered load ≈ 0.3) every published policy waits 128–145 min: slots are held for up "
        "to 2 h by Low-stock provisioning in the 09–18 UTC band and the queue builds behind them; EDF and "
        "Adaptive keep the miss rate lowest by serving tight jobs first. Quiet and normal days are easy for "
        "every policy except FIFO and Random, whose slot rules ignore stock status and so provision onto Low "
        "stock even when a better-stocked slot is idle. RH (no deferral, the default) waits with the fastest "
        "policies of the pack on the hectic day: 0.98× the median of the seven contract policies (the reading "
        "of spec §6 under which the published hectic table holds, 0.95×; against the other ten it is 0.83×). "
        "**On the surge day it leaves the pack below** (0.74×, 102 min against 128–145): there ρ ≈ 0.29 is "
        "under the gate, so its reservation (ρ_res = 1, spec §3.9) lets loose jobs dispatch only when "
        "two or more slots are idle, onto the better-stocked one, and the slot left idle is re-rolled at the "
        "next decision: under the fresh stock draw holding is a re-roll, not a cost (see `rho` and, under a persistent "
        "stock status, `rhomarkov`, where the "
        "same reservation costs wait). Without the reservation (ρ_res = 0) RH waits 132 min there, 0.96× (contract 7; "
        "0.95× the other ten). "
        "It is at 0.75× and 0.83× on the quiet and normal days, where a wait is just the provisioning delay of the "
        "slot a job gets and RH, "
        "like EDF and Balanced, takes the best-stocked idle slot: it ties the fastest policies (0.12 min "
        "quiet), and meeting 0.9× there would mean giving it worse slots."
    ),
    "tight": (
        "FIFO, LCF, Balanced and Random ignore deadlines, so their tight-job miss rate stays flat and the overall "
        "rate grows linearly with the tight share; the deadline-aware policies (EDF, Adaptive, SPT+Rescue, "
        "CADR) protect tight jobs while they are few and lose most of that protection once they are the "
        "majority. On the surge day (ρ ≈ 0.29 < gate) RH serves waiting tight jobs first and holds ρ_res = 1 idle "
        "slot back from loose jobs (spec §3.9); under the fresh stock draw the held slot is re-rolled, so the "
        "fewer the tight jobs, the more often a slot is held and the less RH waits: 84 min at 10 % tight "
        "(0.63× the contract median, out of the pack below), 112 min at 30 % (0.83×), back in the pack from "
        "50 % on (0.95–1.00×), where most waiting jobs are tight and may use the held slot."
    ),
    "cmax": (
        "RH waits with the fastest policies (SPT, SPT+Rescue, CADR) at every cap: 0.82–0.94× the median of the "
        "other ten, 0.94–0.99× the median of the seven contract policies (inside 0.9–2× at every cap under "
        "that reading). At C_max = 10 the offered load λ·W̄_mean/C_max ≈ 0.72 is below the gate, so RH's "
        "reservation is on even on the hectic day; it lowers RH's wait there (3.40 min, below the range of "
        "the other ten: 0.82× their median, 0.94× the contract median), as on the surge day. "
        "At C_max = 7 the deadline-aware orders reach zero misses (CADR 0.01 %) while SPT (3.1 %), RH (2.3 %) "
        "and the deadline-blind policies (4.7–5.2 %) keep some; at C_max = 10 no policy misses (Random 0.01 %). Costs "
        "follow the share of RTX 3090 slots (0.46 $/h against 0.25–0.27 $/h) in "
        "the round-robin fleet: 1/3, 2/5, 2/7, 3/10."
    ),
    "theta": (
        "Adaptive's rows are identical: on the hectic day more than P = 10 jobs wait at every decision, so "
        "θ_eff = 28 800 s replaces θ. SPT+Rescue's miss rate moves by about its CI across θ."
    ),
    "crstar": (
        "CADR and CADR-OO move together: with one idle slot per decision their slot rules rarely differ, so "
        "CR* acts through the job order only."
    ),
    "rho": (
        "RH's reservation (spec §3.9), as built: while the offered load ρ = λ·W̄_mean/C_max is below the gate "
        "(0.95) and the day's jobs are still arriving, waiting tight jobs lead RH's order (by deadline, each onto "
        "its best idle slot), and a loose job takes an idle slot only while more than ρ_res idle slots are still "
        "free at that decision; the last ρ_res are left to tight jobs, waiting or to come. Each loose job still "
        "takes its own best idle slot, so the slot held is the one loose jobs liked least. After the day's last "
        "arrival nothing is held (no tight job can come), and holding needs ρ_res < C_max idle slots, so a busy "
        "slot's completion always follows: RH cannot stall. On the hectic day ρ ≫ 1: no reservation, identical "
        "rows. On the normal day the reservation is on but a queue almost never forms, so ρ_res changes little. "
        "On the surge day it acts at every ρ_res, and it lowers the tight miss, the loose miss *and* the wait. "
        "So the study's trade (more wait for fewer tight misses below saturation) does not appear here. "
        "The reason is selection under the fresh stock draw: a loose job now dispatches only when two or more "
        "slots are idle, and it takes the best-stocked one. The one it leaves (Low stock in 22.6 % of held "
        "slots) is re-rolled at the next decision. Loose jobs provision on Low stock (600–7200 s) in 2.7 % of "
        "their dispatches at ρ_res = 1, against 4.5 % at ρ_res = 0 (surge, seeds 0–29, "
        "`python -m studies diagnose rh-reservation --seeds 30`). Holding is a re-roll, as with `rh_defer` "
        "and `edf_defer_low`. Under a persistent stock status (`rhomarkov`, D = 900 s) the trade appears as the "
        "study describes it: holding slots back raises the surge-day wait (16.8 → 35.9 → 54.4 min at ρ_res = 0, 1, 3) "
        "and lowers the tight miss, though only from ρ_res = 2 (4.80 → 4.84 → 3.76 → 2.44 %). The default "
        "stays the spec's ρ_res = 1: it takes RH out of the pack on the surge day (below it: 0.74× the "
        "contract median, see `daytype`) and barely moves the hectic row that the contract checks. "
        "Before 2026-11-25 the default `rh_plan=idle` held no slot back: ρ_res only moved tight jobs to "
        "the front (surge: 133.9 min, 4.46 % miss at every ρ_res ≥ 1). ρ_res must stay below C_max "
        "(validated)."
    ),
    "rhomarkov": (
        "The `rho` sweep under the persistent Markov stock process (mean dwell 900 s): a held slot keeps its "
        "status, so leaving it idle is no re-roll and the reservation costs loose jobs capacity. See the "
        "`rho` note for the reading."
    ),
    "rhdefer": (
        "RH may leave an idle slot for the next re-plan (a fresh stock draw) instead of provisioning it now: "
        "`never` (default: no deferral), `expected` (defer when the stock model expects an earlier start "
        "that way) or `low` (defer only Low-stock slots). Deferral cuts RH's miss rate below the published 7.5 % "
        "(2.4 % with `expected`), but only by re-rolling the stock, and it takes RH out of the pack on every "
        "cell: 0.30× the median contract policy's wait on the hectic day, 0.00× on the surge day (0.46 min "
        "against 128–145), 0.27× and 0.06× at C_max = 7 and 10 (30 seeds), and under a persistent stock "
        "process it leaves RH waiting for a re-roll that does not come (see `stockrh`). Until 2026-11-24 "
        "`expected` read a negative expected delay in the bands where p_H + p_M > 1 (7.26 %, 144 min here "
        "then); the planner now uses the level probabilities the draw realises (`Fleet.expected_delay`)."
    ),
    "rhplan": (
        "`rh_plan=idle` (default) places each candidate, in RH order, on its best *idle* slot; `timeline` is "
        "the spec's full rolling horizon: a candidate may be planned onto a busy slot's timeline (its "
        "expected free time plus the stock model's expected delay), which leaves an idle Low-stock slot "
        "idle while a busy slot frees sooner, and ρ_res idle slots are held back from loose jobs while "
        "ρ < gate. With fresh stock that is a re-roll again: on the surge day (ρ ≈ 0.3, slots free often) "
        "`timeline` waits 65.2 min (1.6 % miss) against 128–145 min for every other policy, "
        "while on the hectic day, where one slot is idle at almost every decision, the two agree within their "
        "CIs (134.4 against 136.9 min). Both hold ρ_res slots back from loose jobs below the gate (`rho`); "
        "on the surge day `idle` waits 101.7 min, itself below the pack through that reservation (`daytype`), "
        "and `timeline` 65.2 min. The default stays `idle`."
    ),
    "stock": (
        "Persistence helps every policy: a slot provisioning on Low stock is not dispatched again for 10–120 min, "
        "while a slot on High stock is refilled every ~75 s, so with a persistent status most dispatches fall "
        "into good-stock spells (at D = 900 s the hectic-day waits drop from 135–167 to 76–90 min, the surge "
        "day's from 128–145 to 17–25 min). D = 60 s is close to fresh (hectic waits 4–10 % lower, surge unchanged "
        "within the CIs); the change happens between 60 and 900 s. "
        "**Re-rolling**: `edf_defer_low`'s hectic-day lead was re-rolling: 0.56× the median wait under fresh "
        "stock, 0.92× at D = 900 s and 0.98× at 3600 s, slower than the SPT family (SPT, SPT+Rescue, CADR, "
        "RH: 0.81–0.87× at every D); its 0 % miss is matched by EDF, SPT+Rescue, Adaptive and CADR from "
        "D = 900 s on. **Survives**: on the surge day its lead shrinks but holds (0.5 min against 128–145 "
        "under fresh, 2.2 against 17–25 at D = 900 s, 1.8 against 4.5–5.3 at 3600 s): at offered load ≈ 0.3 "
        "other slots serve the queue while a Low-stock slot waits, so leaving it idle pays even when the "
        "status lasts. The published orderings survive at every D: FIFO, LCF, Balanced and Random have the "
        "highest miss, the SPT family the lowest wait, and the deadline-aware orders (EDF, SPT+Rescue, "
        "Adaptive, CADR, CADR-OO) reach ≈ 0 % miss from D = 900 s while SPT (4 %) and RH (3 %) keep some on "
        "the hectic day: with the reservation off (ρ ≫ 1) RH's normal tier is ordered by run time, like SPT's. "
        "On the surge day RH's reservation (ρ ≈ 0.29 < gate) turns with persistence: 0.74× the median wait under "
        "fresh stock (the held slot is re-rolled), 1.67× at D = 900 s and 1.53× at 3600 s (the held slot "
        "is capacity lost to loose jobs), see `rho` and `rhomarkov`."
    ),
    "stockrh": (
        "RH with `rh_defer=expected` against the `stock` experiment: on the hectic day its lead is the "
        "re-roll: 42.7 min under fresh stock (every non-deferring policy 135–167), 77 min at D = 60 s, and "
        "104–109 min from D = 300 s on with 3.3–4.1 % miss, while every non-deferring policy falls to "
        "76–90 min at D = 900 s and the deadline-aware ones to 0 % miss: it waits for a fresh draw that a "
        "persistent market does not give. On the surge day it keeps most of its lead (7.0 min at "
        "D = 900 s against 17–25), like `edf_defer_low`."
    ),
}


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
    ours = {k: float(v.iloc[0]) for k, v in T.pack_readings(means[["mean_wait_min"]].T).items()}
    L = [
        "## Calibration and departures from the published figures",
        "",
        f"Hectic day, C_max = 5, seeds {seeds[0]}–{max(validation['seed'])} (the `validation` experiment). "
        f"{int(c['holds'].sum())} of {len(c)} contract checks of spec §6 hold:",
        "",
        T.md_table(c, index=False),
        "",
        "**Slot rules rarely matter on the hectic day.** At a decision point the simulator asks the policy to fill "
        "the idle slots; in saturation a slot frees, is refilled at once, and the next decision again sees one idle "
        f"slot. Share of decision points by idle slots ({len(seeds)} seeds):",
        "",
        T.md_table(idle, floatfmt=".1f"),
        "",
        "The only choice at almost every decision is "
        "*which job*; the slot-scoring rules (SPT's, LCF's, Balanced's, CADR's cheapest-feasible non-Low slot) "
        f"almost never get a choice, and costs end up nearly equal: {cost.min():.2f}–{cost.max():.2f} $ "
        f"({100 * (cost.max() / cost.min() - 1):.1f} % spread, the highest being "
        f"{cost.idxmax()}; published 6.06–6.15 $). It is also why CADR and CADR-OO, which differ only in slot "
        "placement, give nearly the same rows.",
        "",
        "**Low-stock provisioning dominates the makespan.** Stock status is drawn afresh at every decision; in the "
        "09–18 UTC band (hours 4–13 of a day starting at 05:00 UTC) a type is Low with probability up to 50 %, and a "
        "dispatch onto a Low-stock slot holds that slot for 600–7200 s before the job starts. Slot time until the "
        "makespan, seed means:",
        "",
        T.md_table(brk, floatfmt=".1f"),
        "",
        "Every Low-stock dispatch falls in the 09–18 band (Low is unreachable elsewhere), and provisioning on Low "
        "stock occupies a larger share of slot time than execution and doubles the makespan. Waits of ~2.5 h therefore "
        "come from the stock model as much as from the backlog of ~75 s jobs (a policy that leaves Low-stock slots "
        "idle for the next fresh draw, such as RH with `rh_defer=low`, waits far less; see `rhdefer` and, for what "
        "that re-rolling is worth when the stock status persists, `stock`), which is why the published waits are "
        "only reachable with the calibrated 05:00 UTC start that runs the backlog into the 09–18 band (spec §1).",
        "",
        "**RH: faithful on the whole grid rather than on this table.** The published RH miss rate (7.54 %) is only "
        "reached if RH leaves idle slots for the next re-plan's fresh stock draw (`rh_defer=expected`: 2.41 %, "
        "or `low`: 3.11 %, see `rhdefer`). That deferral re-rolls the stock: it takes RH out of the pack on every "
        "cell (0.30× the median wait here, 0.00× on the surge day, 0.27× and 0.06× at C_max = 7 and 10), and "
        "under a persistent stock process it fails (`stockrh`). The default is therefore "
        "`never` (commit only placements that start now on an idle slot, `rh_plan=idle`): RH then waits "
        "with the fastest policies on the hectic day at every C_max (`cmax`), holds 'SPT and RH lowest wait', "
        "and misses like the deadline-aware pack on this "
        f"table ({means.loc['rh', 'miss_pct']:.2f} %, outside ±3 pp; not below CADR's and Adaptive's): the two "
        f"contract checks that fail. Its wait is {ours['other 10']:.2f}× the median of the other ten published "
        f"policies here (the published RH's own: {pub_pack['other 10']:.2f}×) and {ours['contract 7']:.2f}× the "
        f"median of the seven contract policies (published: {pub_pack['contract 7']:.2f}×); spec §6's 0.9–2× bound "
        "only holds on the published table under the second reading, so the `daytype`, `cmax` and `tight` tables "
        "show both. The reservation (ρ_res = 1 below the load gate, spec §3.9) is off on this table (ρ ≈ 1.43), "
        "so it cannot help RH's hectic miss; where it is on (the surge day, C_max = 10) it lowers RH's wait "
        "through the fresh stock draw and takes RH below the pack on the surge day (`rho`, `rhomarkov`).",
        "",
        "**CADR and Adaptive miss more than published, within the tolerance.** "
        + ", ".join(
            f"{p}: {means.loc[p, 'miss_pct']:.2f} % vs {pub.loc[p, 'miss_pct']:.2f} % ({g:+.2f} pp)"
            for p, g in gap.items()
        )
        + ". CADR's slot rule skips Low-stock slots only when another idle slot exists; with a single idle slot it "
        + (
            f"provisions onto Low stock as often as FIFO ({brk.loc['cadr', 'Low dispatches']:.1f} vs "
            f"{brk.loc['fifo', 'Low dispatches']:.1f} Low dispatches per run) "
            if {"cadr", "fifo"} <= set(brk.index)
            else ""
        )
        + "and its makespan is as long, so its deadline-tiered order alone lands it with SPT+Rescue and EDF. Adaptive "
        "switches to θ_eff = 28 800 s whenever more than P = 10 jobs wait, which on the "
        "hectic day is every decision (the `theta` sweep leaves it unchanged), so it is EDF with a hopeless tier: "
        + (
            f"{means.loc['adaptive', 'miss_pct']:.2f} % vs EDF's {means.loc['edf', 'miss_pct']:.2f} %. "
            if {"adaptive", "edf"} <= set(means.index)
            else ""
        )
        + "Both were just outside ±3 pp (+3.30 and +3.16 pp) before provisioning delays used one quantile per job "
        "(commit b02d13c, which changes only which uniform draw a dispatch's delay uses): the 30-seed means moved by "
        "−0.64 and −1.04 pp, inside their 95 % half-widths (±1.3 pp), so in or out of the contract is within draw "
        "noise. Other readings of the model the spec allows do not help: a persistent stock process (`stock`) "
        "removes nearly all misses of every deadline-aware policy but is no calibration of Table 5.2 (at D ≥ 300 s "
        "every hectic-day wait falls by a third or more), and the spec's own notes rule out a 00:00 UTC start (~85 "
        "min waits) and status holding or late slot occupation. We did not change CADR or Adaptive themselves. "
        + "Mean tardiness is reported but outside the contract (spec §6); it is above the published value for "
        + ", ".join(
            p
            for p in means.index
            if p in pub.index and means.loc[p, "mean_tardiness_min"] > pub.loc[p, "mean_tardiness_min"]
        )
        + ".",
        "",
    ]
    return L


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
            "`experiments.py report` prints its own time).",
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
    L = [
        "# CGRSP experiment results",
        "",
        "Generated by `python -m studies experiments all` (runs every experiment, resuming from "
        "`runs/experiments/cells`, then writes this page); `python -m studies experiments report` re-renders it "
        "from the stored cells. Every table is mean ± 95 % t-interval half-width over seeds unless said otherwise; "
        "tidy per-seed results are in `runs/experiments/<name>/results.parquet`. Spec: "
        "`../shared/spec/cgrsp.md` §5 (the project's `shared/` folder, beside the repository).",
        "",
    ]
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
