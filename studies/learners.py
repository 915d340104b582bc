r"""A scenario's learner over several seeds against its strongest rules: selection curves and protocol verdicts.

    python train.py -m scenario=mig algo=ppo seed=0,1,2,3 train.total_timesteps=150000 \\
        hydra.sweep.dir=runs/learners/mig                                   # one run folder per seed
    gpu-sched evaluate --scenario mig runs/learners/mig/*_seed* --add-to docs/leaderboard   # the protocol
    python -m studies learners --scenario mig --runs runs/learners/mig/*_seed* \\
        --reports runs/evaluate/mig/ppo__*/report.json --page docs/learners_mig.md

HGSP, LLM serving, MIG and the edge cluster (``train.py scenario=S``; CGRSP's learners have their
own studies). Reads, never trains: each run folder's ``learning_curve.csv`` (the selection seeds'
means after every evaluation) and ``config.yaml``, and the stored ``gpu-sched evaluate`` reports of
the same runs. Writes one page with

* a figure: the benchmark objective on the selection seeds against training steps, one line per seed
  and their mean, with every env-drivable rule's level on the same seeds (played here from the run's
  own env settings, so the lines are the rules the learner was selected against);
* a table per regime of the protocol: the best rule and its mean, each seed's mean and verdict (paired
  t, Holm, through :mod:`gpu_sched_env.core.criteria` in ``gpu-sched evaluate``), how many seeds are
  better, at parity or worse, and the bound.

Every number on the page comes from those files; the page says which command made each.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_env.core.errors import ConfigError, check_choice
from gpu_sched_env.core.io import atomic_write_text

SCENARIOS = ("hgsp", "llm", "mig", "edge")


def read_runs(scenario: str, runs: Sequence[Path]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The runs' curves (one frame, ``run`` and ``seed`` columns) and the first run's config (all must agree)."""
    from omegaconf import OmegaConf

    frames, first = [], None
    for run in runs:
        curve, cfg_path = run / "learning_curve.csv", run / "config.yaml"
        if not curve.is_file() or not cfg_path.is_file():
            raise ConfigError(
                f"--runs {str(run)!r}: no learning_curve.csv and config.yaml; allowed: a train.py run folder"
            )
        cfg = OmegaConf.to_container(OmegaConf.load(cfg_path), resolve=False)
        got = (cfg.get("scenario") or {}).get("name", "cgrsp")
        if got != scenario:
            raise ConfigError(f"--runs {str(run)!r}: a scenario={got} run; allowed: scenario={scenario} runs")
        settings = {"env": cfg["scenario"].get("env"), "algo": cfg["algo"]["name"], "eval": cfg["train"]["eval_seeds"]}
        if first is None:
            first = {"config": cfg, "settings": settings}
        elif settings != first["settings"]:
            raise ConfigError(
                f"--runs {str(run)!r}: env or algo settings differ from {str(runs[0])!r}; allowed: runs of one design"
            )
        frames.append(pd.read_csv(curve).assign(run=str(run), seed=int(cfg["seed"])))
    if first is None:
        raise ConfigError("--runs: none given; allowed: one or more train.py run folders")
    return pd.concat(frames, ignore_index=True), first["config"]


def rule_levels(scenario: str, cfg: dict[str, Any], metric: str) -> dict[str, float]:
    """Each env-drivable rule's mean ``metric`` on the run's selection seeds and env settings."""
    from gpu_sched_agents.rl.scenarios import heuristic_runs, spec_of

    spec = spec_of(scenario)
    config = spec.config_cls(**(cfg["scenario"].get("env") or {}))
    seeds = [int(s) for s in cfg["train"]["eval_seeds"]]
    df = heuristic_runs(spec, config, seeds)
    return {name: float(g[metric].mean()) for name, g in df.groupby("policy")}


def read_reports(scenario: str, paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The stored ``gpu-sched evaluate`` reports (refused when of another scenario or protocol)."""
    reports = []
    for p in paths:
        try:
            r = json.loads(p.read_text())
        except (OSError, ValueError) as e:
            raise ConfigError(f"--reports {str(p)!r}: not a readable report.json ({e})") from None
        if r.get("scenario") != scenario:
            raise ConfigError(f"--reports {str(p)!r}: scenario {r.get('scenario')!r}; allowed: {scenario}")
        if reports and r["protocol"]["regimes"] != reports[0]["protocol"]["regimes"]:
            raise ConfigError(f"--reports {str(p)!r}: other regimes than {str(paths[0])!r}; allowed: one protocol")
        reports.append(r)
    return reports


def verdict_table(reports: list[dict[str, Any]], env_rules: Sequence[str]) -> pd.DataFrame:
    """One row per regime: the best rule and the best of ``env_rules``, each report's mean and verdict, the bound.

    ``better / parity / worse`` counts the reports (the seeds) of each verdict.
    """
    from gpu_sched_agents.evaluate.leaderboard import MARK
    from gpu_sched_env.core.criteria import BETTER, WORSE

    rows = []
    objective = reports[0]["protocol"]["objective"]
    for regime in reports[0]["protocol"]["regimes"]:
        scopes = [r["scopes"][regime] for r in reports]
        best, rules = scopes[0]["best_rule"], scopes[0]["rules"]
        drivable = sorted((rules[r][objective]["mean"], r) for r in env_rules if r in rules)
        row: dict[str, Any] = {
            "regime": regime,
            "best rule": f"{best} {rules[best][objective]['mean']:.2f}",
            # a compact (leaderboard) report keeps the best rule only: "–" unless that is an env rule
            "best env rule": f"{drivable[0][1]} {drivable[0][0]:.2f}" if drivable else "–",
        }
        for r, s in zip(reports, scopes):
            row[r["policy"]["label"]] = f"{s['policy'][objective]['mean']:.2f} {MARK[s['verdict']]}"
        verdicts = [s["verdict"] for s in scopes]
        row["better / parity / worse"] = (
            f"{sum(v == BETTER for v in verdicts)} / {sum(bool(s['at_parity']) for s in scopes)} / "
            f"{sum(v == WORSE for v in verdicts)}"
        )
        b = scopes[0].get("bound") or {}
        row["bound"] = "–" if b.get("mean") is None else f"{b['mean']:.2f} ({b.get('status', '')})"
        rows.append(row)
    return pd.DataFrame(rows)


def figure(scenario: str, curves: pd.DataFrame, levels: dict[str, float], metric: str, unit: str, path: Path) -> None:
    """The selection curves of every seed, their mean, and the rules' levels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for seed, g in curves.groupby("seed"):
        ax.plot(g["timesteps"], g[metric], color="tab:blue", alpha=0.35, lw=1, label=f"seed {seed}")
    mean = curves.groupby("timesteps")[metric].mean()
    ax.plot(mean.index, mean.values, color="tab:blue", lw=2.5, label=f"mean of {curves['seed'].nunique()} seeds")
    cmap = plt.get_cmap("tab10")
    for i, (name, v) in enumerate(sorted(levels.items(), key=lambda kv: kv[1])):
        ax.axhline(v, color=cmap((i + 1) % 10), ls="--", lw=1.2, label=f"{name} {v:.3g}")
    ax.set_xlabel("training steps")
    ax.set_ylabel(f"{metric} [{unit}], selection seeds")
    ax.set_title(f"{scenario}: the learner's selection curves and the env's rules (lower is better)", fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def page(
    scenario: str, curves: pd.DataFrame, table: pd.DataFrame, protocol: dict[str, Any], fig: Path, argv: list[str]
) -> str:
    """The Markdown page; ``fig`` relative to the page."""
    from gpu_sched_env.core.tables import markdown_table

    steps = int(curves["timesteps"].max())
    regimes = ", ".join(protocol["regimes"])
    return "\n".join(
        [
            f"# Learners: {scenario}",
            "",
            f"MaskablePPO (`train.py scenario={scenario} algo=ppo`), {curves['seed'].nunique()} seeds, "
            f"{steps:,} steps each, scored by `gpu-sched evaluate --scenario {scenario}` (protocol "
            f"{protocol['name']}: {protocol['seeds']} test seeds per regime, regimes {regimes}) beside every "
            "registered rule and the bound. Generated by "
            f"`python -m studies learners {' '.join(argv)}`; do not edit by hand.",
            "",
            f"![selection curves]({fig})",
            "",
            "Each seed's cell: its mean objective on the regime's test instances and its paired verdict against "
            "the best rule of that regime (▲ better, ▼ worse, Holm p < 0.05; = no significant difference); "
            "'parity' counts, apart from the verdicts, the seeds whose upper 95 % bound of the difference is within "
            "the parity margin (a seed can be significantly worse and still within it). "
            "*best env rule*: the best of the rules that drive the env as agents, the ones training selected "
            "against (a registered rule that is no env agent, and why: `agents/rl/scenarios.py`).",
            "",
            markdown_table(table),
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Write the page and its figure; exit 2 with one line on bad input."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", required=True, help=f"one of {', '.join(SCENARIOS)}")
    ap.add_argument("--runs", type=Path, nargs="+", required=True, help="train.py run folders, one per seed")
    ap.add_argument("--reports", type=Path, nargs="+", required=True, help="their stored gpu-sched evaluate reports")
    ap.add_argument("--page", type=Path, required=True, help="the Markdown page to write (its figure beside it)")
    a = ap.parse_args(argv)
    try:
        check_choice("--scenario", a.scenario, SCENARIOS)
        if a.page.suffix != ".md":
            raise ConfigError(f"--page = {str(a.page)!r}: allowed: a .md path")
        from gpu_sched_agents.evaluate.scenarios import benchmark

        row = benchmark(a.scenario)
        curves, cfg = read_runs(a.scenario, a.runs)
        reports = read_reports(a.scenario, a.reports)
        levels = rule_levels(a.scenario, cfg, row.objective)
    except ConfigError as e:
        ap.exit(2, f"python -m studies learners: {e}\n")
    fig = a.page.parent / "figures" / f"{a.page.stem}.png"
    figure(a.scenario, curves, levels, row.objective, row.unit, fig)
    from gpu_sched_agents.rl.scenarios import spec_of

    table = verdict_table(reports, spec_of(a.scenario).heuristics)
    shown = [
        "--scenario",
        a.scenario,
        "--runs",
        *map(str, a.runs),
        "--reports",
        *map(str, a.reports),
        "--page",
        str(a.page),
    ]
    text = page(a.scenario, curves, table, reports[0]["protocol"], fig.relative_to(a.page.parent), shown)
    atomic_write_text(a.page, text)
    print(f"wrote {a.page} and {fig}")
    return 0
