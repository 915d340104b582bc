r"""Which design item moves ``algo=ppo_jax`` towards the rule: each on and off, per regime.

    python -m studies ablation --budget 1000000 --out runs/ppo_jax_ablation \
        --regimes hectic_fresh --rows joint time_aware hold_excess1_time_aware

A *row* is a set of Hydra overrides of ``experiment=ppo_jax_joint``, one file each in
``conf/ablation/`` (:data:`ROWS`; ``train.py experiment=ppo_jax_joint +ablation=<row>`` trains one alone):
the joint design from scratch with design items switched on (:func:`item_of`: 1 time-aware returns,
2 the reward (``occupancy`` with ``backlog_risk`` shaping, the SPT charge ``excess_run``, …), 3 and 3w
the ``joint_hold`` and ``when`` action designs).
Per regime (hectic / surge × fresh / D = 900 s) and row the seeds train side by side (``train.py``'s
``train.seeds``, :func:`studies.cgrsp.learning.parity.train_seeds`), each seed's actor is
picked lexicographically on ``--select-days`` selection days (no more misses than the rule, then
the lowest wait; :func:`gpu_sched_agents.rl.ppo_jax.constraint.lexicographic_pick`; with
``--recheck-days`` the best ``--recheck-top`` replayed on more selection days and picked on both
stages pooled, :meth:`gpu_sched_agents.rl.ppo_jax.selector.Selector.recheck`) and judged
as the parity study judges it in JAX: paired against ``spt_rescue_defer_exp`` (the deferring JAX
rule) on ``--jax-days`` native test days (keys 20 000 …), with the 95 % CIs of the wait and the
miss differences. A row whose overrides this build cannot run (e.g. an env option not in the JAX
env yet) is recorded with the ConfigError it raised, before anything is trained.

``<out>/rows.csv`` gets one row per (regime, row, seed, budget), written atomically after each
(regime, row); present rows are skipped and trained networks reused (resumable);
``<out>/table.md`` is rewritten each time: budget, training wall time (all seeds of a row
together, selection included), and the per-row means.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.rl.ppo_jax.constraint import check_recheck
from gpu_sched_env.core.criteria import MISS_BOUND_PP
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text


def item_of(row: dict[str, Any]) -> str:
    """The design items an override set switches (``"1+2"``; ``"-"``: none), read off what it sets.

    1: time-aware returns (``algo.tau_s``); 2: the reward (``env.reward``, ``env.shaping*``,
    ``env.reward_weights``); 3: held deferrals (``env.action_mode=joint_hold``); 3w: learned timing
    on the rule's order (``env.action_mode=when``).
    """
    algo, env = row.get("algo") or {}, row.get("env") or {}
    parts = ["1"] if "tau_s" in algo else []
    parts += ["2"] if {"reward", "shaping", "shaping_gamma", "reward_weights"} & set(env) else []
    parts += {"joint_hold": ["3"], "when": ["3w"]}.get(env.get("action_mode"), [])
    return "+".join(parts) or "-"


def rows(folder: Path | None = None) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Row -> (its design items, its Hydra override): one per ``conf/ablation/<row>.yaml``.

    Each file is a set of overrides of ``experiment=ppo_jax_joint``: ``python train.py
    experiment=ppo_jax_joint +ablation=<row>`` trains the row, ``-m +ablation=a,b`` several.
    """
    import yaml

    from studies.conf import CONF

    folder = Path(CONF) / "ablation" if folder is None else folder
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        out[path.stem] = (item_of(yaml.safe_load(path.read_text()) or {}), (f"+ablation={path.stem}",))
    return out


ROWS = rows()
SETTINGS = ("n_envs", "n_steps", "select_every", "select_days", "jax_days", "recheck_days", "recheck_top")


def judge(
    regime: str, cfg, paths: dict[int, Path], jax_days: int, folder: Path, confirm_days: int = 0, workers: int = 1
) -> list[dict]:
    """Per seed: learned − rule on ``jax_days`` native test days (wait and miss, 95 % CIs), parity or not.

    ``confirm_days`` > 0: also the parity study's confirmation through CGRSP-v0
    (:func:`studies.cgrsp.learning.parity.confirm_v0`: the NumPy policy on that many test seeds
    against the deferring rule re-chosen there, paired; ``v0_*`` columns), and parity needs it too.
    The rules' days are kept per regime beside the rows (``v0_<regime>/``).
    """
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_agents.rl.ppo_jax.jax_eval import learned_rule, per_day, test_keys
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP
    from studies.cgrsp.learning.parity import JAX_RULE, at_parity, paired

    env = JaxCGRSP.from_config(env_config(cfg), records=False)
    keys = test_keys(jax_days)
    rule_file = folder.parent / f"jax_{regime}_{JAX_RULE}_{jax_days}.csv"
    if rule_file.exists():
        rule_days = pd.read_csv(rule_file)
    else:
        rule_days = per_day(env, {JAX_RULE: RULES[JAX_RULE]}, keys)
        atomic_write_table(rule_file, rule_days)
    out = []
    for s, path in paths.items():
        mine = per_day(env, {"ppo_jax": learned_rule(env, NumpyPolicy.load(path))}, keys)
        p = paired(mine, rule_days, "day_index")
        out.append({"seed": s, **p, "parity": at_parity(p) and p["miss_ci_high"] <= MISS_BOUND_PP})
    if confirm_days:
        from studies.cgrsp.learning.parity import confirm_v0

        cache = folder.parent / f"v0_{regime}"
        cache.mkdir(parents=True, exist_ok=True)
        out = with_confirmation(out, confirm_v0(cfg, paths, confirm_days, workers, cache))
    return out


def with_confirmation(rows: list[dict], v0: dict[int, dict]) -> list[dict]:
    """``rows`` (per seed, the JAX judge's) with the CGRSP-v0 confirmation's columns; parity needs both.

    ``v0``: seed → its ``v0_*`` columns and ``v0_parity`` (:func:`studies.cgrsp.learning.parity.confirm_v0`).
    """
    return [{**row, **v0[row["seed"]], "parity": bool(row["parity"] and v0[row["seed"]]["v0_parity"])} for row in rows]


def run_row(regime: str, row: str, args: argparse.Namespace) -> list[dict]:
    """Train and judge one (regime, row) for ``args.seeds``; a row this build refuses is one record with its error."""
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.config import validate_ppo_jax
    from gpu_sched_env.core.errors import ConfigError
    from studies.cgrsp.learning.parity import regime_config, train_seeds

    item, overrides = ROWS[row]
    base = {"regime": regime, "row": row, "item": item, "overrides": " ".join(overrides), "budget": args.budget}
    try:
        cfg = regime_config(regime, args.budget, args.n_envs, args.n_steps, overrides)
        validate_ppo_jax(cfg, env_config(cfg))
    except ConfigError as e:
        return [{**base, "seed": -1, "status": f"not runnable on this build: {e}"}]
    folder = args.out / f"{regime}_{row}_b{args.budget}"
    t0 = time.perf_counter()
    paths, train_s = train_seeds(
        cfg,
        args.seeds,
        folder,
        True,
        args.select_every,
        args.select_days,
        "lexicographic",
        recheck_days=args.recheck_days,
        recheck_top=args.recheck_top,
    )
    wall = time.perf_counter() - t0
    rows = judge(regime, cfg, paths, args.jax_days, folder, args.confirm_days, args.workers)
    return [{**base, **r, "status": "ok", "train_s": round(train_s, 1), "wall_s": round(wall, 1)} for r in rows]


def table_text(rows: pd.DataFrame, args: argparse.Namespace) -> str:
    """``table.md``: a dated title over :func:`page_table`."""
    return f"# ppo_jax ablation, {time.strftime('%Y-%m-%d', time.gmtime())}\n\n" + page_table(rows, vars(args))


def page_table(rows: pd.DataFrame, settings: dict[str, Any]) -> str:
    """Markdown: per regime and row, the seeds' mean learned − rule wait and miss, and parity counts.

    ``settings``: the study's ``select_every``, ``select_days`` and ``jax_days`` (its ``settings.json``);
    the budgets are the rows' own.
    """
    ok = rows[rows.status == "ok"]
    budgets = " and ".join(str(int(b)) for b in sorted(set(rows.budget)))
    lines = [
        f"Budget {budgets} steps per seed; seeds train side by side (jax.vmap); actors picked lexicographically "
        f"every {settings['select_every']} steps on {settings['select_days']} selection days; judged on "
        f"{settings['jax_days']} native JAX test days against spt_rescue_defer_exp (diff = learned − rule; ci_high "
        "= upper 95 % bound). train_s: the row's training wall time, all seeds and selection included.",
        "",
        "| regime | row | item | seeds | train_s | learned wait | rule wait | wait diff (per seed) | max ci_high | "
        "miss diff pp (per seed) | at parity |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (regime, row), g in ok.groupby(["regime", "row"], sort=False):
        diffs = " / ".join(f"{x:+.2f}" for x in g.wait_diff)
        misses = " / ".join(f"{x:+.3f}" for x in g.miss_diff)
        lines.append(
            f"| {regime} | {row} | {g.item.iloc[0]} | {len(g)} | {g.train_s.max():.0f} | {g.learned_wait.mean():.2f} | "
            f"{g.rule_wait.mean():.2f} | {diffs} | {g.wait_ci_high.max():+.2f} | {misses} | "
            f"{int(g.parity.sum())} of {len(g)} |"
        )
    for _, r in rows[rows.status != "ok"].drop_duplicates(["regime", "row"]).iterrows():
        lines.append(f"| {r.regime} | {r.row} | {r['item']} | – | – | – | – | {r.status} | – | – | – |")
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The study's command line, checked (argparse exits with a message naming the option)."""
    from studies.cgrsp.learning.parity import RECHECK_TOP, REGIMES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, required=True, help="training steps per seed")
    ap.add_argument("--out", type=Path, required=True, help="output folder (rows.csv, table.md, networks)")
    ap.add_argument("--regimes", nargs="+", default=list(REGIMES), choices=list(REGIMES))
    ap.add_argument("--rows", nargs="+", default=list(ROWS), choices=list(ROWS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--n-envs", type=int, default=None, help="envs per seed (default: the shipped train.n_envs)")
    ap.add_argument("--n-steps", type=int, default=None, help="steps per env per update (default: the shipped)")
    ap.add_argument("--select-every", type=int, default=250_000, help="steps between selection evaluations")
    ap.add_argument("--select-days", type=int, default=100, help="native selection days (keys 10 000 …)")
    ap.add_argument(
        "--recheck-days",
        type=int,
        default=0,
        help="the pick's second stage: the --recheck-top best evaluations replayed on this many further selection "
        "days, the pick made on both stages' days pooled (0: off)",
    )
    ap.add_argument("--recheck-top", type=int, default=RECHECK_TOP, help="evaluations the second stage replays")
    ap.add_argument("--jax-days", type=int, default=1000, help="native JAX test days of the paired test")
    ap.add_argument(
        "--confirm-days",
        type=int,
        default=0,
        help="CGRSP-v0 test seeds of the parity study's confirmation (0: the JAX test alone)",
    )
    ap.add_argument("--workers", type=int, default=1, help="processes for the CGRSP-v0 days")
    ap.add_argument(
        "--merge-from",
        type=Path,
        nargs="+",
        default=[],
        help="other --out folders (rows trained by parallel processes): their rows join --out's, nothing is trained",
    )
    args = ap.parse_args(argv)
    if args.confirm_days == 1 or args.confirm_days < 0:
        ap.error(f"--confirm-days = {args.confirm_days}: 0 (no confirmation) or at least 2 for a CI")
    if args.workers < 1:
        ap.error(f"--workers = {args.workers}: at least 1")
    try:
        check_recheck("--", args.recheck_days, args.recheck_top, args.select_days, None)
    except ConfigError as e:
        ap.error(str(e))
    for name in ("budget", "select_every", "select_days", "jax_days"):
        if getattr(args, name) < (2 if name.endswith("days") else 1):
            ap.error(f"--{name.replace('_', '-')} = {getattr(args, name)}: too small (days ≥ 2 for a CI, others ≥ 1)")
    return args


def check_settings_of(out: Path, argv: Sequence[str]) -> None:
    """Record (or check) ``out``'s settings as a run with ``argv`` would (``--out`` is added)."""
    from studies.cgrsp.learning.parity import check_settings

    check_settings(out, parse_args([*argv, "--out", str(out)]), SETTINGS)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, judge and tabulate every (regime, row) not yet in ``rows.csv``; returns the exit status."""
    from studies.cgrsp.learning.parity import check_settings
    from studies.provenance import checkout, merge, record

    args = parse_args(argv)
    checkout()  # the code this process runs, read before it trains
    args.out.mkdir(parents=True, exist_ok=True)
    check_settings(args.out, args, SETTINGS)
    path = args.out / "rows.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["regime", "row", "seed", "budget", "status"])
    if args.merge_from:
        for other in args.merge_from:
            check_settings(other, args, SETTINGS)  # the same training and judging settings, or a ConfigError
        parts = [done] + [pd.read_csv(d / "rows.csv") for d in args.merge_from]
        done = pd.concat([p for p in parts if len(p)], ignore_index=True)
        done = done.drop_duplicates(["regime", "row", "seed", "budget"], keep="first")
        atomic_write_table(path, done)
        record(args.out, "ablation", argv)
        merge(args.out, args.merge_from)  # the commands that trained the merged rows
        atomic_write_text(args.out / "table.md", table_text(done, args))
        print(f"merged {len(args.merge_from)} folder(s) into {path}")
        return 0
    for regime in args.regimes:
        for row in args.rows:
            at = (done.regime == regime) & (done.row == row) & (done.budget == args.budget)
            done = done[~(at & (done.status != "ok"))]  # a row refused by an earlier build is tried again
            at = (done.regime == regime) & (done.row == row) & (done.budget == args.budget)
            mine = done[at & (done.status == "ok")]
            if set(args.seeds) <= set(mine.seed):
                continue
            new = pd.DataFrame(run_row(regime, row, args))
            new = new[~new.seed.isin(mine.seed)] if len(mine) else new
            done = pd.concat([done, new], ignore_index=True) if len(done) else new
            atomic_write_table(path, done)
            record(args.out, "ablation", argv)  # a command that added rows, not one that found them all there
            atomic_write_text(args.out / "table.md", table_text(done, args))
            print(f"{regime} {row}:\n{new.drop(columns=['overrides']).to_string(index=False)}", flush=True)
    print(f"written {path} and {args.out / 'table.md'}")
    return 0
