"""The generalist: one ``algo=ppo_jax`` policy for the day mix × the stock models.

    python -m studies generalist --budget 2000000 --out runs/ppo_jax_generalist

Each training seed (default 0-3, from scratch, no teacher) trains one policy on
``experiment=generalist``: every training day's type drawn from the month's mix (4 hectic,
3 surge, 18 normal, 5 quiet of 30) and its stock model from ``--stock-mix`` (default fresh and
Markov D = 300, 900, 3600 s), in one vmapped batch (:mod:`gpu_sched_env.cgrsp.jax.mix`); by
default the final network is exported (``<out>/generalist_b<budget>/seed<k>.npz``, a NumPy
policy; with ``--select-every N`` the checkpoint whose worst regime is best on the
selection days, and with ``--recheck-days D`` that pick made again among the ``--recheck-top``
best on D further selection days per regime pooled with the first, against the winner's curse of
picking among many noisy evaluations: :func:`~gpu_sched_agents.rl.ppo_jax.constraint.pooled_regime_pick`)
and judged

* per regime (hectic / surge × fresh / D = 900 s), exactly as
  :mod:`studies.cgrsp.learning.parity` judges its per-regime learners: in JAX on ``--jax-days``
  native days paired with the JAX rule, and through CGRSP-v0 on ``--confirm-days`` test seeds
  against the deferring rule re-chosen per regime on those seeds;
* on the month protocol (:mod:`gpu_sched_agents.rl.month`, the month of ``gpu-sched evaluate``):
  ``--reps`` replications × 30 days of the mix through CGRSP-v0, under each ``--month-stocks``
  stock model, against every deferring rule on the same days; the best rule is the one with the
  lowest monthly miss, then wait; paired over replications.

The generalist criterion: within 2 % of the best rule in every regime and on the
month, read here as the upper 95 % bound of the paired (learned − rule) mean wait ≤ max(2 % of the
rule's wait, 0.05 min) with the learned miss % not above the rule's, in every regime (both judges)
and every month stock (:func:`gpu_sched_env.core.criteria.within` under its ``GENERALIST_MARGIN``).
Rows are appended to ``<out>/rows.csv`` (regimes) and ``<out>/month.csv`` (months) and skipped
when present (resumable; trained networks and the rules' days are reused); ``<out>/table.md`` is
rewritten after each step. Test seeds only judge: nothing is tuned on them.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.evaluate.protocol import RULE_KEYS
from gpu_sched_agents.rl.ppo_jax.constraint import RECHECK_TOP, check_recheck
from gpu_sched_env.core.criteria import GENERALIST_MARGIN, MISS_BOUND_PP, best_rule, within
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text
from studies.cgrsp.learning import parity as parity

MONTH_STOCKS = ("fresh", "900")
_PCT = f"{GENERALIST_MARGIN[0] * 100:g}"  # the margin's fraction as the tables print it: "2"
LABEL = "ppo_jax"


def generalist_config(
    budget: int,
    stock_mix: Sequence[str],
    n_envs: int | None,
    n_steps: int | None,
    extra: Sequence[str] = (),
    day_mix: Mapping[str, float] | None = None,
) -> Any:
    """The composed ``experiment=generalist`` config with ``budget`` steps per seed, the stock mix and the day mix.

    ``day_mix``: day type → weight of the training days (``day.day_mix``); None: the month's.
    """
    from studies.conf import compose_config

    over = [f"train.n_envs={n_envs}"] if n_envs else []
    over += [f"algo.n_steps={n_steps}"] if n_steps else []
    if day_mix is not None:
        over += ["day.day_mix={" + ",".join(f"{d}:{w:g}" for d, w in day_mix.items()) + "}"]
    mix = ",".join(f"'{s}'" for s in stock_mix)
    cfg = compose_config(
        "experiment=generalist",
        f"day.stock_mix=[{mix}]",
        "run_dir=/tmp/unused",
        f"train.total_timesteps={budget}",
        *over,
        *extra,
    )
    if n_envs or n_steps:  # as the parity study: four minibatches per epoch (or one when 4 does not divide it)
        rollout = int(cfg.train.n_envs) * int(cfg.algo.n_steps)
        cfg.algo.batch_size = rollout // 4 if rollout % 4 == 0 else rollout
    return cfg


def parse_day_mix(entries: Sequence[str]) -> dict[str, float]:
    """``["hectic=1", "surge=2"]`` → ``{"hectic": 1.0, "surge": 2.0}`` (ConfigError naming ``--day-mix``)."""
    from gpu_sched_env.cgrsp.workload import day_weights
    from gpu_sched_env.core.errors import ConfigError

    mix: dict[str, float] = {}
    for e in entries:
        name, sep, w = e.partition("=")
        try:
            weight = float(w)
        except ValueError:
            weight = None
        if not sep or weight is None or name in mix:
            raise ConfigError(f"--day-mix entry {e!r}: give each day type once as TYPE=WEIGHT, e.g. hectic=1")
        mix[name] = weight
    day_weights(mix, "--day-mix")
    return mix


def with_verdicts(regimes: pd.DataFrame, months: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The criterion's columns, computed from the stored numbers (so every table applies the current criterion).

    ``within``: :func:`~gpu_sched_env.core.criteria.within` under :data:`GENERALIST_MARGIN`, no mean miss
    more in any judge (strict). ``bound``: "no more misses" read as parity reads it, on the
    JAX judge's 1000 days the upper 95 % bound of the paired miss difference ≤
    :data:`~gpu_sched_env.core.criteria.MISS_BOUND_PP`, on CGRSP-v0 no mean miss more (the ablation's
    "the miss bound"); NaN-free only where the rows hold ``jax_miss_ci_high``.
    """
    regimes, months = regimes.copy(), months.copy()
    if len(regimes):
        for j in ("jax", "v0"):
            regimes[f"{j}_within"] = [
                within(h, w, m, GENERALIST_MARGIN)
                for h, w, m in zip(regimes[f"{j}_wait_ci_high"], regimes[f"{j}_rule_wait"], regimes[f"{j}_miss_diff"])
            ]
        regimes["v0_ratio"] = regimes.v0_learned_wait / regimes.v0_rule_wait
        regimes["within"] = regimes.jax_within & regimes.v0_within
        if "jax_miss_ci_high" in regimes:
            jax_bound = [
                within(h, w, m, GENERALIST_MARGIN, guard_bound=MISS_BOUND_PP)
                for h, w, m in zip(regimes.jax_wait_ci_high, regimes.jax_rule_wait, regimes.jax_miss_ci_high)
            ]
            regimes["bound"] = pd.Series(jax_bound, index=regimes.index) & regimes.v0_within
    if len(months):
        months["ratio"] = months.learned_wait / months.rule_wait
        months["within"] = [
            within(h, w, m, GENERALIST_MARGIN)
            for h, w, m in zip(months.wait_ci_high, months.rule_wait, months.miss_diff)
        ]
    return regimes, months


def month_rules(config: Any, reps: int, out: Path, workers: int) -> pd.DataFrame:
    """The deferring rules' month days under ``config``'s stock model (cached in ``out``)."""
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
    from gpu_sched_agents.rl.month import month_days
    from gpu_sched_env.cgrsp.batch import run_grid

    path = out / f"month_rules_{reps}reps.csv"
    if path.exists():
        return pd.read_csv(path)
    plan = month_days(range(reps))
    parts = []
    for day, g in plan.groupby("day", sort=False):
        heur = run_grid(
            list(EXTENSIONS),
            g.seed.tolist(),
            day=day,
            params=dict(config.params),
            executor="process" if workers > 1 else "serial",
            workers=workers,
            progress=False,
        )
        parts.append(heur.join(g.set_index("seed")[["rep", "day_index"]], on="seed"))
    runs = pd.concat(parts, ignore_index=True)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_table(path, runs)
    return runs


def month_row(policy: Path, config: Any, rules: pd.DataFrame, reps: int) -> dict[str, Any]:
    """The learned policy's months against the best deferring rule (lowest monthly miss, then wait)."""
    from gpu_sched_agents.rl.month import month_days, month_totals
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_env.cgrsp.evaluation import evaluate
    from gpu_sched_env.core.stats import mean_ci

    pol = NumpyPolicy.load(policy)
    plan = month_days(range(reps))
    own = []
    for day, g in plan.groupby("day", sort=False):
        seeds = g.seed.tolist()
        df = evaluate(pol, config.replace(day=day), seeds).assign(seed=seeds, policy=LABEL)
        own.append(df.join(g.set_index("seed")[["rep", "day_index"]], on="seed"))
    tot = month_totals(pd.concat([*own, rules], ignore_index=True))
    means = tot.groupby("policy")[["miss_pct", "mean_wait_min"]].mean()
    rule_names = [p for p in means.index if p != LABEL]
    best = best_rule(means, rule_names, RULE_KEYS)
    wide = tot.pivot(index="rep", columns="policy", values="mean_wait_min").sort_index()
    miss = tot.pivot(index="rep", columns="policy", values="miss_pct").sort_index()
    ci = mean_ci((wide[LABEL] - wide[best]).to_numpy())
    row = {
        "reps": reps,
        "learned_wait": wide[LABEL].mean(),
        "rule": best,
        "rule_wait": wide[best].mean(),
        "wait_diff": ci.mean,
        "wait_ci_high": ci.mean + ci.half_width,
        "miss_diff": miss[LABEL].mean() - miss[best].mean(),
    }
    return row


def regime_configs(budget: int, extra: Sequence[str] = ()) -> dict[str, Any]:
    """Regime → its config as the generalist is judged (and selected) there: ``algo=ppo_jax`` and ``extra``.

    ``extra``: the Hydra overrides the generalist was trained with (``--override``), so each
    regime's env has the trained design (the ``when`` design by default).
    """
    return {r: parity.regime_config(r, budget, extra=extra, base="algo=ppo_jax") for r in parity.REGIMES}


def judge_regimes(
    paths: dict[int, Path],
    budget: int,
    jax_days: int,
    confirm_days: int,
    workers: int,
    out: Path,
    extra: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Per seed and regime: the parity study's judgement of the generalist, with the 2 % criterion.

    Each regime's config is ``algo=ppo_jax`` (what ``experiment=generalist`` trains) with the Hydra
    overrides the generalist was trained with (``extra``, ``--override``), so each regime's env has
    the trained design (the ``when`` design by default, the joint one under ``--override env=joint_heads``).
    """
    rows = []
    for regime, cfg in regime_configs(budget, extra).items():
        folder = out / "judge" / regime  # the rules' days: shared by every seed and budget
        folder.mkdir(parents=True, exist_ok=True)
        rows += parity.evaluate_regime(regime, cfg, paths, jax_days, confirm_days, workers, folder)
    return rows


def table_text(regimes: pd.DataFrame, months: pd.DataFrame) -> str:
    """``table.md``: per seed and regime, per seed and month stock (every column), and :func:`verdicts`."""
    regimes, months = with_verdicts(regimes, months)
    parts = ["# The ppo_jax generalist vs the best rule, per regime and on the month\n"]
    parts.append(
        "Wait in minutes; diff = learned − rule (paired); ci_high = its upper 95 % bound; within = ci_high ≤ "
        f"max({_PCT} % of the rule's wait, {GENERALIST_MARGIN[1]:g} min) and miss not higher (in both judges for a "
        "regime); bound = the "
        "same with the miss bound in JAX (the upper 95 % bound of the paired miss difference ≤ "
        f"{MISS_BOUND_PP} pp, as its parity target reads 'no more misses'; CGRSP-v0: miss not higher).\n"
    )
    if len(regimes):
        cols = [
            "seed",
            "budget",
            "regime",
            "jax_learned_wait",
            "jax_rule_wait",
            "jax_wait_ci_high",
            "jax_miss_diff",
            "v0_rule",
            "v0_learned_wait",
            "v0_rule_wait",
            "v0_ratio",
            "v0_wait_ci_high",
            "v0_miss_diff",
            "within",
        ]
        if "bound" in regimes:
            cols[cols.index("jax_miss_diff") + 1 : cols.index("jax_miss_diff") + 1] = ["jax_miss_ci_high"]
            cols.append("bound")
        if "day_mix" in regimes and set(regimes.day_mix.dropna()) - {"month"}:  # what the seeds trained on
            mixes = ", ".join(sorted(set(regimes.day_mix.dropna())))
            parts.append(f"Training day mix: {mixes} (month: the month's 4 hectic, 3 surge, 18 normal, 5 quiet).\n")
        table = regimes[cols].to_string(index=False, float_format=_f)
        parts.append("## Per regime\n\n```\n" + table + "\n```\n")
    if len(months):
        cols = ["seed", "budget", "stock", "reps", "learned_wait", "rule", "rule_wait", "ratio", "wait_ci_high"]
        cols += ["miss_diff", "within"]
        table = months[cols].to_string(index=False, float_format=_f)
        parts.append("## Month protocol\n\n```\n" + table + "\n```\n")
    return "\n".join(parts) + "\n" + "\n".join(verdicts(regimes, months)) + "\n"


def verdicts(regimes: pd.DataFrame, months: pd.DataFrame) -> list[str]:
    """One line per seed and budget: its regimes and months within the criterion, and whether it is met.

    ``regimes`` and ``months`` as :func:`with_verdicts` returns them.
    """
    lines = []
    for (seed, budget), g in regimes.groupby(["seed", "budget"]) if len(regimes) else []:
        m = _months_of(months, seed, budget)
        months_ok = len(m) > 0 and bool(m.within.all())
        ok = bool(g.within.all()) and months_ok
        worst = max([*g.v0_ratio.tolist(), *(m.ratio.tolist() if len(m) else [])])
        bound = ""
        if "bound" in g:
            met = bool(g.bound.all()) and months_ok
            bound = f"; by the miss bound ({int(g.bound.sum())} of {len(g)} regimes): {_met(met)}"
        lines.append(
            f"- seed {seed}, {budget} steps: within {_PCT} % in {int(g.within.sum())} of {len(g)} regimes and "
            f"{int(m.within.sum()) if len(m) else 0} of {len(m)} months; worst learned/rule wait ratio "
            f"{worst:.3f} (point estimates): generalist criterion {_met(ok)}{bound}"
        )
    return lines


def _months_of(months: pd.DataFrame, seed: int, budget: int) -> pd.DataFrame:
    """The month rows of one seed and budget; a stock judged with several replication counts: the most decide."""
    m = months[(months.seed == seed) & (months.budget == budget)] if len(months) else months
    if len(m) and "reps" in m:
        m = m.sort_values("reps", kind="stable").groupby(m.stock.astype(str)).tail(1)
    return m


def page_table(regimes: pd.DataFrame, months: pd.DataFrame) -> str:
    """Markdown, the block a result page shows: a row per seed and budget, a column per regime and month stock.

    A regime's cell: learned / best rule mean wait on CGRSP-v0 (their ratio), then learned − rule in JAX
    (its upper 95 % bound); a month's: learned / best rule over the replications (ratio). Bold: within the
    criterion (a regime in both judges); a mean miss above the rule's is named in the cell. Then :func:`verdicts`.
    """
    regimes, months = with_verdicts(regimes, months)
    names = list(dict.fromkeys(regimes.regime)) if len(regimes) else []
    stocks = list(dict.fromkeys(months.stock.astype(str))) if len(months) else []
    head = ["seed", "steps", *[_regime_name(r) for r in names], *[f"month, {_stock_name(s)}" for s in stocks]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (seed, budget), g in regimes.groupby(["seed", "budget"]) if len(regimes) else []:
        by_regime = g.set_index("regime")
        m = _months_of(months, seed, budget)
        by_stock = m.set_index(m.stock.astype(str)) if len(m) else m
        cells = [str(seed), parity.steps_text(budget)]
        for table, keys, text in ((by_regime, names, _regime_cell), (by_stock, stocks, _month_cell)):
            for key in keys:
                r = table.loc[key] if key in table.index else None
                cells.append("" if r is None else f"**{text(r)}**" if r.within else text(r))
        lines.append("| " + " | ".join(cells) + " |")
    rules = set(regimes.v0_rule if len(regimes) else ()) | set(months.rule if len(months) else ())
    legend = (
        f"Wait [min], learned / best rule on CGRSP-v0 (the best of {_names(rules)} per regime and month), and "
        f"learned − rule in JAX against {_names(regimes.jax_rule if len(regimes) else ())} (upper 95 % bound); "
        f"**bold**: within {_PCT} % (the upper bound ≤ max({_PCT} % of the rule's wait, {GENERALIST_MARGIN[1]:g} "
        "min), no mean miss more)."
    )
    return "\n".join([*lines, "", legend, "", *verdicts(regimes, months)]) + "\n"


def _regime_cell(r: Any) -> str:
    """A regime's cell: CGRSP-v0's learned / rule (ratio), JAX's difference (its bound), a higher miss."""
    jax = f"JAX {r.jax_wait_diff:+.3f} ({r.jax_wait_ci_high:.3f})"
    return f"{_versus(r.v0_learned_wait, r.v0_rule_wait)}; {jax}" + _missed(r.jax_miss_diff, r.v0_miss_diff)


def _month_cell(r: Any) -> str:
    """A month stock's cell: learned / rule over the replications (ratio), a higher miss."""
    return _versus(r.learned_wait, r.rule_wait) + _missed(r.miss_diff)


def _names(names: Any) -> str:
    """Distinct names in backticks, sorted, comma-separated."""
    return ", ".join(f"`{n}`" for n in sorted(set(names)))


def _regime_name(regime: str) -> str:
    """``hectic_D900`` → "hectic D = 900", ``surge_fresh`` → "surge fresh"."""
    day, stock = regime.split("_", 1)
    return f"{day} {_stock_name(stock)}"


def _stock_name(stock: str) -> str:
    """A stock model as the pages name it: "fresh", or "D = 900" for a Markov dwell of 900 s."""
    dwell = stock.removeprefix("D")
    return f"D = {dwell}" if dwell.isdigit() else stock


def _versus(learned: float, rule: float) -> str:
    """The cell ``learned / rule (ratio×)``, waits to the rule's precision (:func:`.parity.wait_text`)."""
    return f"{parity.wait_text(learned, rule)} / {parity.wait_text(rule, rule)} ({learned / rule:.3f}×)"


def _missed(*diffs: float) -> str:
    """``; misses +x pp`` where a judge's mean miss difference is above 0 (the larger), else nothing."""
    worst = max(diffs)
    return f"; misses {worst:+.3f} pp" if worst > 0 else ""


def _f(x: float) -> str:
    return f"{x:.3f}"


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _same_value(stored: Any, value: Any) -> bool:
    """Whether a value read back from ``rows.csv`` is ``value`` (numbers by value: a CSV column may turn 0 into 0.0)."""
    try:
        return float(stored) == float(value)
    except (TypeError, ValueError):
        return str(stored) == str(value)


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The study's arguments, checked (an error exits naming the argument); ``args.day_mix`` parsed to a dict."""
    from gpu_sched_env.cgrsp.jax.mix import GENERALIST_STOCKS, parse_stock, regimes_of
    from gpu_sched_env.core.errors import ConfigError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, required=True, help="training steps per seed")
    ap.add_argument("--out", type=Path, required=True, help="output folder (rows.csv, month.csv, table.md, networks)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--stock-mix", nargs="+", default=list(GENERALIST_STOCKS), help="fresh and/or Markov dwells D [s]")
    ap.add_argument(
        "--day-mix",
        nargs="+",
        default=None,
        metavar="TYPE=WEIGHT",
        help="the training days' day mix, e.g. hectic=1 surge=1 normal=1 quiet=1 (default: the month's 4/3/18/5)",
    )
    ap.add_argument("--jax-days", type=int, default=1000, help="native JAX test days per regime")
    ap.add_argument("--confirm-days", type=int, default=100, help="CGRSP-v0 test seeds per regime")
    ap.add_argument("--reps", type=int, default=10, help="month replications (30 days each)")
    ap.add_argument("--month-stocks", nargs="+", default=list(MONTH_STOCKS), help="stock models of the month runs")
    ap.add_argument("--n-envs", type=int, default=None, help="envs per seed (default: the shipped train.n_envs)")
    ap.add_argument("--n-steps", type=int, default=None, help="steps per env per update (default: algo.n_steps)")
    ap.add_argument(
        "--select-every",
        type=int,
        default=0,
        help="evaluate each seed every N steps on the judged regimes' selection days and keep the checkpoint "
        "whose worst regime is best (0: the final network)",
    )
    ap.add_argument("--select-days", type=int, default=100, help="native selection days per regime per evaluation")
    ap.add_argument(
        "--recheck-days",
        type=int,
        default=0,
        help="the pick's second stage: the --recheck-top best evaluations replayed on this many further selection "
        "days per regime and picked on both stages pooled (0: off; needs --select-every)",
    )
    ap.add_argument("--recheck-top", type=int, default=RECHECK_TOP, help="evaluations the second stage replays")
    ap.add_argument("--workers", type=int, default=1, help="processes for the CGRSP-v0 days")
    ap.add_argument("--override", nargs="*", default=[], help="extra Hydra overrides (tuned on selection seeds)")
    ap.add_argument("--train-only", action="store_true", help="train and export, judge later (the same command)")
    args = ap.parse_args(argv)
    if args.select_every < 0:
        ap.error(f"--select-every = {args.select_every}: give 0 (the final network) or a number of steps > 0")
    for name in ("budget", "jax_days", "confirm_days", "reps", "workers", "select_days"):
        lo = 2 if name.endswith("days") or name == "reps" else 1
        if getattr(args, name) < lo:
            ap.error(f"--{name.replace('_', '-')} = {getattr(args, name)}: too small (days and reps ≥ 2, others ≥ 1)")
    try:
        args.day_mix = None if args.day_mix is None else parse_day_mix(args.day_mix)
        regimes_of(args.stock_mix, args.day_mix, field="--stock-mix", days_field="--day-mix")
        for s in args.month_stocks:
            parse_stock(s, "--month-stocks")
        how = f"--select-every = {args.select_every} (no selection: give N > 0)" if args.select_every <= 0 else None
        check_recheck("--", args.recheck_days, args.recheck_top, args.select_days, how)
    except ConfigError as e:
        ap.error(str(e))
    return ap, args


def judge_months(
    args: argparse.Namespace, cfg: Any, paths: dict[int, Path], done: pd.DataFrame, months: pd.DataFrame
) -> pd.DataFrame:
    """Each seed's month rows under each ``--month-stocks`` model with ``--reps`` (resumable, written per row)."""
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.jax.mix import parse_stock

    eval_config = env_config(cfg)  # the hectic day; each month day is played with config.replace(day=...)
    for stock in args.month_stocks:
        d = parse_stock(stock)
        config = eval_config.replace(
            stock_process="fresh" if d is None else "markov", **({} if d is None else {"stock_dwell_s": d})
        )
        rules = None
        for s, path in paths.items():
            have = (months.seed == s) & (months.budget == args.budget) & (months.stock.astype(str) == stock)
            have &= months.reps == args.reps if "reps" in months else False
            if len(months) and have.any():
                continue
            if rules is None:
                rules = month_rules(config, args.reps, args.out / "judge" / f"month_{stock}", args.workers)
            row = {"seed": s, "budget": args.budget, "stock": stock, **month_row(path, config, rules, args.reps)}
            months = pd.concat([months, pd.DataFrame([row])], ignore_index=True) if len(months) else pd.DataFrame([row])
            atomic_write_table(args.out / "month.csv", months)
            atomic_write_text(args.out / "table.md", table_text(done, months))
    return months


def main(argv: Sequence[str] | None = None) -> int:
    """Train, judge and tabulate (resumable); returns the exit status."""
    from gpu_sched_env.cgrsp.jax.rules import RULES  # noqa: F401  (JAX present: fail before training)
    from studies.provenance import checkout, record

    ap, args = parse_args(argv)
    checkout()  # the code this process runs, read before it trains
    args.out.mkdir(parents=True, exist_ok=True)
    rows_path, month_path = args.out / "rows.csv", args.out / "month.csv"
    done = pd.read_csv(rows_path) if rows_path.exists() else pd.DataFrame(columns=["seed", "budget"])
    months = pd.read_csv(month_path) if month_path.exists() else pd.DataFrame(columns=["seed", "budget", "stock"])
    setting = {
        "stock_mix": " ".join(args.stock_mix),
        "day_mix": "month" if args.day_mix is None else " ".join(f"{d}={w:g}" for d, w in args.day_mix.items()),
        "select_every": args.select_every,
        "recheck_days": args.recheck_days,
    }
    for col, value in setting.items():  # one training setting per folder and budget: rows are keyed by seed
        same_budget = done[done.budget == args.budget] if len(done) else done
        there = same_budget[col].dropna().tolist() if col in same_budget else []  # empty: rows older than the column
        other = [v for v in there if not _same_value(v, value)]
        if other:
            ap.error(
                f"--out {args.out} holds rows of budget {args.budget} trained with {col} = {other[0]}, not {value}; "
                "give another --out"
            )
    cfg = generalist_config(args.budget, args.stock_mix, args.n_envs, args.n_steps, args.override, args.day_mix)
    folder = args.out / (
        f"generalist_b{args.budget}"
        + (f"_sel{args.select_every}" if args.select_every else "")
        + (f"_re{args.recheck_days}" if args.recheck_days else "")
    )
    paths, seconds = parity.train_seeds(
        cfg,
        args.seeds,
        folder,
        select_every=args.select_every,
        select_days=args.select_days,
        select_regimes=list(parity.REGIMES),
        recheck_days=args.recheck_days,
        recheck_top=args.recheck_top,
    )
    print(f"generalist: {len(args.seeds)} seed(s) × {args.budget} steps ({seconds:.0f} s of training)", flush=True)
    if args.train_only:
        return 0
    todo = {s: p for s, p in paths.items() if not ((done.seed == s) & (done.budget == args.budget)).any()}
    if todo:
        new = pd.DataFrame(
            judge_regimes(todo, args.budget, args.jax_days, args.confirm_days, args.workers, args.out, args.override)
        )
        new = new.assign(budget=args.budget, **setting, train_s=seconds)
        done = pd.concat([done, new], ignore_index=True) if len(done) else new
        atomic_write_table(rows_path, done)
        atomic_write_text(args.out / "table.md", table_text(done, months))
    n_months = len(months)
    months = judge_months(args, cfg, paths, done, months)
    if todo or len(months) != n_months:  # a command that added rows, not one that found them all there
        record(args.out, "generalist", argv)
    text = table_text(done, months)
    atomic_write_text(args.out / "table.md", text)
    print(text)
    print(f"written {rows_path}, {month_path} and {args.out / 'table.md'}")
    return 0
