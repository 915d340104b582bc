"""The leaderboard page: every stored report, ranked by its score, one table per protocol.

    gpu-sched evaluate POLICY --add-to docs/leaderboard      # evaluate and store the compact report.json
    gpu-sched evaluate --leaderboard docs/leaderboard         # rebuild docs/leaderboard.md from DIR/*.json

A stored report is report.json with ``rules`` cut to the best rule of each scope
(:func:`compact`). Reports played on different protocols are never ranked together: each protocol
(its name, seeds, regimes, month replications) gets its own table, headed by what it played.

Every other scenario has a page of its own (:func:`build_scenario`): its reports are stored in
``DIR/<scenario>/`` (:func:`store` reads the report's ``scenario``) and its page is ``DIR_<scenario>.md``
(``docs/leaderboard_hgsp.md`` …), ranked by the score of :func:`gpu_sched_agents.evaluate.bench.score`.

    gpu-sched evaluate --scenario hgsp fifo --add-to docs/leaderboard     # docs/leaderboard/hgsp/fifo.json
    gpu-sched evaluate --scenario hgsp --leaderboard docs/leaderboard     # docs/leaderboard_hgsp.md
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpu_sched_agents.evaluate.protocol import MONTH, REGIMES
from gpu_sched_agents.evaluate.report import SCHEMA, TOP_KEYS, ordered, ratio_key, ratio_text
from gpu_sched_env.core.criteria import BETTER, NO_DIFFERENCE, WORSE
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_text, check_output_file
from gpu_sched_env.core.stats import ALPHA

SCOPES = (*REGIMES, MONTH)
MARK = {BETTER: "▲", WORSE: "▼", NO_DIFFERENCE: "="}  # a scope's stored verdict (criteria.verdict) as a mark


def compact(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with each scope's ``rules`` cut to its best rule (what the page shows), and no wall time."""
    out = json.loads(json.dumps(report))
    for s in out["scopes"].values():
        s["rules"] = {s["best_rule"]: s["rules"][s["best_rule"]]}
    out["wall_s"] = None  # the page is rebuilt from these files: no machine-dependent number in them
    return out


def store(report: dict[str, Any], folder: Path) -> Path:
    """Write the compact ``report`` to ``folder/<label>.json`` (``<label>.<protocol>.json`` off the standard one).

    A report of another scenario than CGRSP goes to ``folder/<scenario>/``.
    """
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in report["policy"]["label"])
    proto = report["protocol"]["name"]
    if report.get("scenario", "cgrsp") != "cgrsp":
        folder = Path(folder) / report["scenario"]
    return _write_small(Path(folder) / f"{name}{'' if proto == 'standard' else '.' + proto}.json", compact(report))


def _write_small(path: Path, obj: dict[str, Any]) -> Path:
    """One JSON line, keys sorted: a stored report stays a few kB."""
    return atomic_write_text(path, json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n")


def load(folder: Path) -> list[dict[str, Any]]:
    """Every stored report in ``folder`` (sorted by file name), checked against the schema."""
    files = sorted(Path(folder).glob("*.json"))
    if not files:
        raise ConfigError(f"--leaderboard {str(folder)!r}: no report .json files there")
    reports = []
    for f in files:
        try:
            r = json.loads(f.read_text())
        except (OSError, ValueError) as e:  # a UnicodeDecodeError is a ValueError
            raise ConfigError(f"--leaderboard {str(folder)!r}: {f.name} is not readable JSON ({e})") from None
        if not isinstance(r, dict):
            raise ConfigError(f"{f}: not a report of schema {SCHEMA} (a JSON {type(r).__name__}, not an object)")
        missing = [k for k in TOP_KEYS if k not in r]
        if r.get("schema") != SCHEMA or missing:
            raise ConfigError(f"{f}: not a report of schema {SCHEMA} (schema {r.get('schema')!r}, missing {missing})")
        reports.append(r)
    return reports


def _group_key(r: dict[str, Any]) -> tuple:
    p = r["protocol"]
    return (p["name"] != "standard", p["seeds"], tuple(sorted(p["regimes"])), p["month_reps"], p["name"])


def _heading(p: dict[str, Any]) -> str:
    what = f"{p['seeds']} test seeds per regime ({', '.join(k for k in REGIMES if k in p['regimes'])}), " + (
        f"the month × {p['month_reps']} replications" if p["month_reps"] else "no month"
    )
    if p["name"] == "standard":
        return f"## The standard protocol: {what}"
    return f"## Reduced protocol ({p['name']}): {what}"


def _cell(s: dict[str, Any] | None) -> str:
    if s is None:
        return "–"
    pol = s["policy"]
    return f"{pol['mean_wait_min']:.2f} ({pol['miss_pct']:.2f} %) {MARK[s['verdict']]}"


def table(reports: list[dict[str, Any]]) -> list[str]:
    """One protocol's table: ranked by score, then label."""
    ranked = sorted(reports, key=lambda r: (r["score"]["objective_min"], r["policy"]["label"]))
    scopes = [s for s in SCOPES if any(s in r["scopes"] for r in reports)]
    lines = [
        "| # | policy | kind | score | " + " | ".join(scopes) + " |",
        "|---|---|---|---|" + "---|" * len(scopes),
    ]
    for i, r in enumerate(ranked, 1):
        cells = [_cell(r["scopes"].get(s)) for s in scopes]
        lines.append(
            f"| {i} | {r['policy']['label']} | {r['policy']['kind']} | {r['score']['objective_min']:.2f} | "
            + " | ".join(cells)
            + " |"
        )
    first = ordered(ranked[0]["scopes"])
    for b in ("srpt", "all_high", "no_delay"):
        cells = [
            f"{first[s]['bounds'][b]['mean_wait_min']:.2f}" if s in first and b in first[s]["bounds"] else "–"
            for s in scopes
        ]
        lines.append(f"| | *bound: {b}* | bound | | " + " | ".join(cells) + " |")
    return lines


def page(reports: list[dict[str, Any]]) -> str:
    """The whole page (deterministic: a function of the reports only)."""
    lines = [
        "# Leaderboard",
        "",
        "Every shipped rule and heuristic, the rollout planner and the shipped learners, scored by `gpu-sched "
        "evaluate` (the standard protocol: [CGRSP, evaluating a policy](cgrsp.md#evaluating-a-policy)). Generated "
        "from the stored reports in `docs/leaderboard/*.json` by `gpu-sched evaluate --leaderboard "
        "docs/leaderboard`; a test rebuilds it. Do not edit by hand.",
        "",
        "Each cell: mean wait [min] (miss %) of the policy, and its paired verdict against the best deferring rule "
        f"re-chosen in that scope: {MARK[BETTER]} {BETTER} (wait lower, Holm p < {ALPHA:g}, miss not higher), "
        f"{MARK[WORSE]} {WORSE} (wait or miss higher, Holm p < {ALPHA:g}), {MARK[NO_DIFFERENCE]} {NO_DIFFERENCE}. "
        "Score: the mean over the scopes of wait + 60 min × "
        "miss % / 100 (a miss priced as one job-hour), lower is better. Bounds (spt_rescue_defer_exp with every "
        "status High, with no provisioning delay; SRPT, a lower bound on any policy's wait) are the headroom map's.",
        "",
        "Policies too slow for the standard protocol here (the rollout planner: minutes per day on this 2-core "
        "machine; its report holds its wall time) are scored on a reduced protocol, named in its table's "
        "heading, beside `spt_rescue_defer_exp` on the same days; tables of different protocols are never ranked "
        "together. A learner's row is the run its command trains, seed 0, trained on the hectic day under fresh "
        "stock unless said and judged everywhere: `ppo_jax` is `python train.py algo=ppo_jax day=hectic` (when to "
        "dispatch, on `spt_rescue_defer_exp`'s order, 64×64), `ppo_jax_when` `python train.py "
        "experiment=ppo_jax_when day=hectic` (the same design, 128×128), `ppo_jax_when_markov` `python train.py "
        "experiment=ppo_jax_when_markov day=hectic` (the same design trained under persistent stock, D = 900 s), "
        "`ppo_jax_joint` `python train.py experiment=ppo_jax_joint day=hectic` (every job–slot pair chosen, from "
        "scratch), `ppo_jax_generalist` seed 0 of `python -m studies generalist --budget 10000000 --select-every "
        "500000 --out runs/gen_10m_sel` (`algo=ppo_jax`'s design trained on the month's day mix × fresh, D = 300, "
        "900, 3600 s; the checkpoint whose worst regime is best: `experiment=generalist`), "
        "`maskable_ppo` the Quickstart's `python train.py algo=ppo day=hectic` (MaskablePPO, 100k steps).",
    ]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in reports:
        groups.setdefault(_group_key(r), []).append(r)
    for key in sorted(groups):
        g = groups[key]
        lines += ["", _heading(g[0]["protocol"]), ""]
        lines += table(g)
    return "\n".join(lines) + "\n"


def build(folder: Path, page_path: Path | None = None) -> Path:
    """Rebuild the page from ``folder``'s reports; the page defaults to ``<folder>.md``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"--leaderboard {str(folder)!r}: not a folder of report .json files")
    target = check_output_file("--page", page_path or folder.with_suffix(".md"), (".md",))
    return atomic_write_text(target, page(load(folder)))


def _bench_cell(s: dict[str, Any] | None, objective: str) -> str:
    if s is None:
        return "–"
    return f"{s['policy'][objective]['mean']:.2f} {MARK[s['verdict']]}"


def _bench_heading(p: dict[str, Any]) -> str:
    what = f"{p['seeds']} test seeds per regime from {p['seed0']} ({', '.join(p['regimes'])})"
    if p["name"] == "standard":
        return f"## The standard protocol: {what}"
    return f"## Reduced protocol ({p['name']}): {what}"


def scenario_table(reports: list[dict[str, Any]]) -> list[str]:
    """One protocol's table of a scenario's page: ranked by score, then label; the bound and its status below."""
    from gpu_sched_agents.evaluate.report import gap_cell

    ranked = sorted(reports, key=lambda r: (ratio_key(r["score"]), r["policy"]["label"]))
    p = ranked[0]["protocol"]
    obj, regimes = p["objective"], list(p["regimes"])
    lines = [
        "| # | policy | kind | score | " + " | ".join(regimes) + " |",
        "|---|---|---|---|" + "---|" * len(regimes),
    ]
    for i, r in enumerate(ranked, 1):
        cells = [_bench_cell(r["scopes"].get(g), obj) for g in regimes]
        lines.append(
            f"| {i} | {r['policy']['label']} | {r['policy']['kind']} | {ratio_text(r['score'])} | "
            + " | ".join(cells)
            + " |"
        )
    first = ranked[0]["scopes"]
    bound = [
        f"{first[g]['bound']['mean']:.2f} ({first[g]['bound']['status']})"
        if g in first and "mean" in first[g]["bound"]
        else "no bound"
        for g in regimes
    ]
    lines.append("| | *bound* | bound | | " + " | ".join(bound) + " |")
    best = ranked[0]
    gaps = [gap_cell(best["scopes"][g]["bound"], "policy_gap") if g in best["scopes"] else "–" for g in regimes]
    lines.append("| | *gap of #1 to the bound* | | | " + " | ".join(gaps) + " |")
    return lines


def scenario_page(scenario: str, reports: list[dict[str, Any]]) -> str:
    """A scenario's whole page (deterministic: a function of the reports only)."""
    p = reports[0]["protocol"]
    excluded = "; ".join(f"`{k}`: {v}" for k, v in p["excluded"].items()) or "none"
    lines = [
        f"# Leaderboard: {scenario}",
        "",
        f"Every registered {scenario} rule scored by `gpu-sched evaluate --scenario {scenario}` (the protocol: "
        f"[{scenario}, the benchmark]({'hgsp' if scenario == 'llm' else scenario}.md#the-benchmark)). Generated from "
        f"the stored reports in `docs/leaderboard/{scenario}/*.json` by `gpu-sched evaluate --scenario {scenario} "
        "--leaderboard docs/leaderboard`; a test rebuilds it. Do not edit by hand.",
        "",
        f"Each cell: the policy's mean `{p['objective']}` [{p['unit']}] (lower is better) over the regime's "
        "instances and its paired verdict against the best rule re-chosen in that regime (the lowest mean): "
        f"{MARK[BETTER]} {BETTER}, {MARK[WORSE]} {WORSE} (Holm p < {ALPHA:g}), {MARK[NO_DIFFERENCE]} "
        "no significant difference. Score: the mean over the regimes of the policy's mean over the best rule's "
        "(1 = the best rule everywhere); a regime where the best rule's mean is 0 and the policy's is not gives no "
        "ratio: the score is then over the others, '(k of n)', and ranks below every score over all n. "
        "The bound row: the mean bound and whether the exact solver proved every instance optimal (*optimum*) "
        "or gave a lower bound on some (*bound only*). "
        f"Registered but not rules: {excluded}. Bound: {p['bound']}.",
    ]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in reports:
        q = r["protocol"]
        groups.setdefault((q["name"] != "standard", q["seeds"], tuple(q["regimes"]), q["name"]), []).append(r)
    for key in sorted(groups):
        lines += ["", _bench_heading(groups[key][0]["protocol"]), ""]
        lines += scenario_table(groups[key])
    return "\n".join(lines) + "\n"


def build_scenario(folder: Path, scenario: str, page_path: Path | None = None) -> Path:
    """Rebuild ``scenario``'s page from ``folder/<scenario>/*.json``; the page defaults to ``<folder>_<scenario>.md``.

    (``docs/leaderboard`` -> ``docs/leaderboard_hgsp.md``.)
    """
    folder = Path(folder)
    sub = folder / scenario
    if not sub.is_dir():
        raise ConfigError(f"--leaderboard {str(folder)!r}: no folder {scenario}/ of {scenario} report .json files")
    reports = load(sub)
    wrong = [r["policy"]["label"] for r in reports if r.get("scenario", "cgrsp") != scenario]
    if wrong:
        raise ConfigError(f"--leaderboard {str(sub)!r}: reports of another scenario than {scenario}: {wrong}")
    default = folder.with_name(f"{folder.name}_{scenario}.md")
    target = check_output_file("--page", page_path or default, (".md",))
    return atomic_write_text(target, scenario_page(scenario, reports))


__all__ = ["build", "build_scenario", "compact", "load", "page", "scenario_page", "store"]
