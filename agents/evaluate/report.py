"""report.json (:data:`SCHEMA`), report.md and report.png of one evaluation.

report.json (``schema`` = :data:`SCHEMA`) holds:

* ``policy``: ``spec`` (as given), ``kind`` (rule, run, sb3, npz, object), ``label``, ``algo``, ``model``;
* ``protocol``: the protocol's name (standard, quick, custom), ``seeds``, ``regimes``, ``month_reps``,
  ``jax_days``, ``seed0``, the deferring rules, the bounds and how CIs and tests are made;
* ``scopes``: per regime and ``month``: ``unit`` (day or replication), ``n``, ``policy``, ``rules``
  and ``bounds`` (each ``mean_wait_min``, ``miss_pct``, their ``_ci`` half-widths and
  ``objective_min``), ``best_rule``, ``vs_best_rule`` (per metric: ``policy``, ``rule``, ``diff``,
  ``ci_low``, ``ci_high``, ``t_p``, ``t_p_holm``, ``wilcoxon_p``, ``wilcoxon_p_holm``,
  ``cohens_d``), ``verdict`` and ``at_parity``;
* ``jax``: per regime (JAX policies; else null): ``n``, ``rule`` and per metric ``policy``,
  ``rule``, ``diff``, ``ci_low``, ``ci_high``, ``t_p``, ``wilcoxon_p``, ``t_p_holm``;
* ``score``: ``objective_min``, ``best_rule_objective_min``, ``definition``;
* ``command`` (the command line) and ``wall_s``.

Wait in minutes, miss in % of the day's jobs; NaN is written as null.

A report of another scenario (``gpu-sched evaluate --scenario S``, :mod:`gpu_sched_agents.evaluate.bench`)
has the same schema and top keys plus ``scenario``: ``scopes`` are its regimes (each ``n``, ``params``,
``exact``, ``policy`` and ``rules`` with ``mean`` and ``ci`` per metric, ``best_rule``, ``vs_best_rule`` per
judged metric as above, ``bound`` with ``status`` (optimum, bound only, no bound) and the policy's and best
rule's gaps, ``verdict``, ``at_parity``), ``jax`` is null and ``score`` holds ``objective_ratio``.
:func:`write` renders either kind.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from gpu_sched_agents.evaluate.protocol import BOUNDS, METRICS, MONTH, REGIMES
from gpu_sched_env.core.criteria import BETTER, PARITY_MARGIN, WORSE
from gpu_sched_env.core.io import atomic_write_json, atomic_write_text
from gpu_sched_env.core.stats import ALPHA

SCHEMA = "gpu_sched_env/evaluate-report/1"
TOP_KEYS = ("schema", "policy", "protocol", "scopes", "jax", "score", "command", "wall_s")


def ratio_text(score: dict[str, Any]) -> str:
    """The score's ratio as a report prints it: ``1.234``; ``1.234 (2 of 5)`` over the regimes kept; ``–`` for none."""
    r, left = score["objective_ratio"], score.get("left_out", [])
    if r is None:
        return "–"
    n = score.get("regimes")
    return f"{r:.3f}" if not left else f"{r:.3f} ({n - len(left)} of {n})"


def ratio_key(score: dict[str, Any]) -> tuple[int, float]:
    """The score for ranking: fewer regimes left out first, then the ratio (none: last).

    Each regime left out is one where the best rule reached 0 and the policy did not.
    """
    r = score["objective_ratio"]
    return len(score.get("left_out", [])), math.inf if r is None else float(r)


def clean(x: Any) -> Any:
    """``x`` with NumPy scalars as Python numbers and NaN/inf as None (strict JSON)."""
    if isinstance(x, dict):
        return {str(k): clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def ordered(scopes: dict[str, Any]) -> dict[str, Any]:
    """``scopes`` in the protocol's order (report.json's keys are sorted): the regimes, then the month."""
    return {k: scopes[k] for k in (*REGIMES, MONTH) if k in scopes}


def _pm(s: dict[str, Any], m: str, nd: int = 2) -> str:
    ci = s.get(f"{m}_ci")
    return f"{s[m]:.{nd}f} ± {ci:.{nd}f}" if ci is not None and ci == ci else f"{s[m]:.{nd}f}"


def _p(x: float | None) -> str:
    return "–" if x is None or x != x else f"{x:.2g}"


def markdown(report: dict[str, Any]) -> str:
    """report.md: the verdict per scope, the means beside the best rule and the bounds, the JAX section."""
    pol, proto = report["policy"], report["protocol"]
    label = pol["label"]
    lines = [
        f"# {label}: the standard verdict" if proto["name"] == "standard" else f"# {label}: {proto['name']} protocol",
        "",
        f"`{report['command']}` ({report['wall_s']:.0f} s). Protocol `{proto['name']}`: {proto['seeds']} test seeds "
        f"from {proto['seed0']} per regime, month {proto['month_reps']} replications; paired against the best "
        "deferring rule re-chosen per scope; 95 % CIs; Holm over every scope × metric.",
        "",
        "| scope | n | policy wait (min) | miss % | best rule | rule wait | rule miss % | Δ wait [95 % CI] "
        "| Holm p | Δ miss | Holm p | verdict | parity |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in ordered(report["scopes"]).items():
        w, x, r = s["vs_best_rule"]["mean_wait_min"], s["vs_best_rule"]["miss_pct"], s["rules"][s["best_rule"]]
        lines.append(
            f"| {name} | {s['n']} | {_pm(s['policy'], 'mean_wait_min')} | {_pm(s['policy'], 'miss_pct', 3)} "
            f"| {s['best_rule']} | {_pm(r, 'mean_wait_min')} | {_pm(r, 'miss_pct', 3)} "
            f"| {w['diff']:+.2f} [{w['ci_low']:+.2f}, {w['ci_high']:+.2f}] | {_p(w['t_p_holm'])} "
            f"| {x['diff']:+.3f} | {_p(x['t_p_holm'])} | {s['verdict']} | {'yes' if s['at_parity'] else 'no'} |"
        )
    lines += [
        "",
        "Bounds (headroom map; `spt_rescue_defer_exp` in the relaxed worlds, SRPT a lower bound on any policy's "
        "wait with no miss bound):",
        "",
        "| scope | "
        + " | ".join(f"{b} wait" for b in BOUNDS)
        + " | "
        + " | ".join(f"{b} miss %" for b in BOUNDS[:2])
        + " |",
        "|---|" + "---|" * (len(BOUNDS) + 2),
    ]
    for name, s in ordered(report["scopes"]).items():
        b = s["bounds"]
        lines.append(
            f"| {name} | "
            + " | ".join(_pm(b[k], "mean_wait_min") for k in BOUNDS)
            + " | "
            + " | ".join(_pm(b[k], "miss_pct", 3) for k in BOUNDS[:2])
            + " |"
        )
    if report.get("jax"):
        lines += [
            "",
            f"In JAX, on {proto['jax_days']} native days per regime (keys {proto['seed0']} …), paired with the JAX "
            "`spt_rescue_defer_exp` (Δ = policy − rule, 95 % CI; Holm over these tests):",
            "",
            "| regime | policy wait | rule wait | Δ wait [95 % CI] | Holm p | Δ miss [95 % CI] | Holm p |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, j in ordered(report["jax"]).items():
            w, x = j["mean_wait_min"], j["miss_pct"]
            lines.append(
                f"| {name} | {w['policy']:.2f} | {w['rule']:.2f} | {w['diff']:+.2f} [{w['ci_low']:+.2f}, "
                f"{w['ci_high']:+.2f}] | {_p(w['t_p_holm'])} | {x['diff']:+.4f} [{x['ci_low']:+.4f}, "
                f"{x['ci_high']:+.4f}] | {_p(x['t_p_holm'])} |"
            )
    sc = report["score"]
    lines += [
        "",
        f"Score (lower is better; {sc['definition']}): **{sc['objective_min']:.2f}** against the best rules' "
        f"{sc['best_rule_objective_min']:.2f}.",
        "",
        f"Verdict: `{BETTER}` = wait lower (Holm p < {ALPHA:g}) and miss not higher; `{WORSE}` = wait or miss higher "
        f"(Holm p < {ALPHA:g}); parity = the parity study's criterion (upper 95 % bound of Δ wait ≤ "
        f"max({PARITY_MARGIN[0] * 100:g} % of the rule's wait, {PARITY_MARGIN[1]:g} min), miss not higher).",
        "",
    ]
    return "\n".join(lines)


def figure(report: dict[str, Any], path: Path) -> Path:
    """Per scope: mean wait and miss % with 95 % CIs of the policy, the best rule and the bounds (PNG)."""
    from gpu_sched_env.core.plotting import plt, save

    scopes = ordered(report["scopes"])
    fig, axes = plt.subplots(2, len(scopes), figsize=(max(3.2 * len(scopes) + 1, 6.0), 6.4), squeeze=False)
    colors = {"policy": "#ff7f0e", "rule": "#1f77b4", "bound": "#7f7f7f"}
    for j, (name, s) in enumerate(scopes.items()):
        bars = [
            (report["policy"]["label"], s["policy"], "policy"),
            (s["best_rule"], s["rules"][s["best_rule"]], "rule"),
        ]
        bars += [(b, s["bounds"][b], "bound") for b in BOUNDS if b in s["bounds"]]
        for i, m in enumerate(METRICS):
            ax = axes[i][j]
            shown = [b for b in bars if not (m == "miss_pct" and b[0] == "srpt")]  # SRPT bounds the wait only
            ax.bar(
                range(len(shown)),
                [b[1][m] for b in shown],
                yerr=[b[1][f"{m}_ci"] or 0.0 for b in shown],
                color=[colors[b[2]] for b in shown],
                capsize=3,
            )
            ax.set_xticks(range(len(shown)))
            ax.set_xticklabels([b[0] for b in shown], rotation=40, ha="right", fontsize=7)
            ax.grid(axis="y", alpha=0.3)
            ax.set_ylim(bottom=0)
            if j == 0:
                ax.set_ylabel("mean wait [min]" if m == "mean_wait_min" else "deadline miss [%]")
            if i == 0:
                ax.set_title(f"{name} (n = {s['n']})", fontsize=9)
    fig.suptitle(f"{report['policy']['label']}\nvs the best deferring rule and the bounds (95 % CI)", fontsize=10)
    fig.tight_layout()
    return save(fig, path)


def bench_markdown(report: dict[str, Any]) -> str:
    """report.md of a scenario other than CGRSP: the verdict per regime, every rule's mean, the bound's gap."""
    pol, proto = report["policy"], report["protocol"]
    obj, unit = proto["objective"], proto["unit"]
    scopes = {r: report["scopes"][r] for r in proto["regimes"] if r in report["scopes"]}
    head = f"# {pol['label']} on {report['scenario']}: the {proto['name']} protocol"
    lines = [
        head,
        "",
        f"`{report['command']}` ({report['wall_s']:.0f} s). {proto['seeds']} test seeds from {proto['seed0']} per "
        f"regime; objective `{obj}` [{unit}], lower is better; paired against the best rule re-chosen per regime "
        "(the lowest mean objective); 95 % CIs; Holm over every regime × judged metric.",
        "",
        f"| regime | n | policy {obj} | best rule | rule {obj} | Δ [95 % CI] | t Holm p | Wilcoxon Holm p "
        "| verdict | parity | gap to bound |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in scopes.items():
        d, r = s["vs_best_rule"][obj], s["rules"][s["best_rule"]][obj]
        lines.append(
            f"| {name} | {s['n']} | {_pm(s['policy'][obj], 'mean')} | {s['best_rule']} | {_pm(r, 'mean')} "
            f"| {d['diff']:+.2f} [{d['ci_low']:+.2f}, {d['ci_high']:+.2f}] | {_p(d['t_p_holm'])} "
            f"| {_p(d['wilcoxon_p_holm'])} | {s['verdict']} | {'yes' if s['at_parity'] else 'no'} "
            f"| {gap_cell(s['bound'], 'policy_gap')} |"
        )
    rules = list(next(iter(scopes.values()))["rules"]) if scopes else []
    lines += ["", f"Every rule's mean {obj} (± 95 % CI) and the bound:", ""]
    lines += ["| rule | " + " | ".join(scopes) + " |", "|---|" + "---|" * len(scopes)]
    for rule in rules:
        lines.append(f"| {rule} | " + " | ".join(_pm(s["rules"][rule][obj], "mean") for s in scopes.values()) + " |")
    lines.append(
        "| *bound* | "
        + " | ".join(_pm(s["bound"], "mean") if "mean" in s["bound"] else "–" for s in scopes.values())
        + " |"
    )
    lines += [
        "",
        "Gap to bound: the policy's mean gap in % of the bound (± 95 % CI); *optimum* where the exact solver "
        "proved every instance optimal, *bound only* (a lower bound: the gap overstates the room) where it did not "
        f"finish on some (their count after the slash). Bound: {proto['bound']}.",
    ]
    if proto["excluded"]:
        lines += ["", "Registered but not rules: " + "; ".join(f"`{k}`: {v}" for k, v in proto["excluded"].items())]
    lines += [
        "",
        f"Score (lower is better; {report['score']['definition']}): **{ratio_text(report['score'])}**.",
        "",
        f"Verdict (`gpu_sched_env.core.criteria`): `{BETTER}` / `{WORSE}` = the objective significantly lower / "
        f"higher (Holm p < {ALPHA:g}); parity = the upper 95 % bound of Δ ≤ max({PARITY_MARGIN[0] * 100:g} % of "
        f"the rule's mean, {PARITY_MARGIN[1]:g}).",
        "",
    ]
    return "\n".join(lines)


def gap_cell(b: dict[str, Any], which: str) -> str:
    """A regime's gap to the bound as one cell: ``12.3 ± 1.0 % (optimum)`` or ``… (bound only, 4/20 lower)``."""
    if b["status"] == "no bound":
        return "no bound"
    g = b[which]
    n = g["n_optimum"] + g["n_lower_bound"]
    val = "–" if g["mean_pct"] is None else f"{g['mean_pct']:.1f} ± {g['ci_pct'] or 0.0:.1f} %"
    if b["status"] == "optimum":
        return f"{val} (optimum, {g['n_optimum']}/{n})"
    return f"≥ {val} (bound only, {g['n_lower_bound']}/{n} lower)"


def bench_figure(report: dict[str, Any], path: Path) -> Path:
    """Per regime: the mean objective with 95 % CI of the policy, the best rule and the bound (PNG)."""
    from gpu_sched_env.core.plotting import plt, save

    proto = report["protocol"]
    obj = proto["objective"]
    scopes = {r: report["scopes"][r] for r in proto["regimes"] if r in report["scopes"]}
    fig, axes = plt.subplots(1, len(scopes), figsize=(max(3.0 * len(scopes) + 1, 6.0), 3.8), squeeze=False)
    for ax, (name, s) in zip(axes[0], scopes.items()):
        bars = [
            (report["policy"]["label"], s["policy"][obj], "#ff7f0e"),
            (s["best_rule"], s["rules"][s["best_rule"]][obj], "#1f77b4"),
        ]
        if "mean" in s["bound"]:
            bars.append((f"bound ({s['bound']['status']})", s["bound"], "#7f7f7f"))
        ax.bar(
            range(len(bars)),
            [b[1]["mean"] for b in bars],
            yerr=[b[1]["mean_ci"] or 0.0 for b in bars],
            color=[b[2] for b in bars],
            capsize=3,
        )
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels([b[0] for b in bars], rotation=30, ha="right", fontsize=7)
        ax.set_title(f"{name} (n = {s['n']})", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel(f"{obj} [{proto['unit']}]")
    fig.suptitle(
        f"{report['policy']['label']} on {report['scenario']}: vs the best rule and the bound (95 % CI)", fontsize=10
    )
    fig.tight_layout()
    return save(fig, path)


def write(report: dict[str, Any], out: Path) -> list[Path]:
    """report.md, report.png, then report.json (last: its presence marks a finished report), each atomically."""
    report = clean(report)
    out.mkdir(parents=True, exist_ok=True)
    other = report.get("scenario", "cgrsp") != "cgrsp"
    md = atomic_write_text(out / "report.md", bench_markdown(report) if other else markdown(report))
    png = (bench_figure if other else figure)(report, out / "report.png")
    js = atomic_write_json(out / "report.json", report)
    return [md, png, js]


__all__ = ["SCHEMA", "TOP_KEYS", "bench_figure", "bench_markdown", "clean", "figure", "gap_cell", "markdown", "write"]
