"""Learners at parity, with power: ``algo=ppo_jax`` per regime against the strongest rule.

    python -m studies parity --budget 2000000 --out runs/ppo_jax_parity
    python -m studies parity --from RUN [RUN ...] --out DIR     # judge trained run folders, train nothing

Four regimes (hectic / surge × fresh stock / Markov stock with D = 900 s), training seeds 0-3
from scratch (no teacher). Per regime ``train.py``'s multi-seed mode (``train.seeds``: one jitted
update ``jax.vmap``-ped over the seeds' keys, or the seeds in turn with ``--in-turn``; a run folder
per seed under ``<out>/<regime>_b<budget>/runs/``) trains the seeds, ``experiment=ppo_jax_joint``'s
settings (every job–slot pair, from scratch; ``--override`` changes them) with ``--budget`` steps per
seed; the final (or selected) network of each seed is exported (``<out>/<regime>_b<budget>/seed<k>.npz``)
and judged two ways:

* in JAX, paired on ``--jax-days`` native days (keys 20 000 …): learned − rule, 95 % CI of the
  mean wait difference and the miss difference, against the JAX rule (``spt_rescue_defer_exp``);
* through CGRSP-v0 on ``--confirm-days`` test seeds (20 000 …): the NumPy policy against every
  deferring rule on the same seeds; the strongest is re-chosen per regime there (lowest miss %,
  then lowest wait, as ``compare.versus_rules``), and the paired 95 % CI is taken against it.

Parity (:mod:`gpu_sched_env.core.criteria`): the upper 95 % bound of (learned − rule) mean wait ≤
max(1 % of the rule's wait, 0.05 min) and the learned mean miss % not above the rule's; a seed
reaches it when both the JAX test and the CGRSP-v0 confirmation say so. Rows are appended to
``<out>/rows.csv`` per (regime, seed, budget) and skipped when present (resumable; trained
networks are reused); ``<out>/table.md`` is rewritten after each regime. Tuning belongs on the
selection seeds (10 000 …), never on these test seeds.

With ``--from`` the judge reads ``train.py algo=ppo_jax`` run folders (a ``train.seeds`` run's
seeds each): every seed's ``best_model.npz`` judged the same two ways on the regime and design it
was trained on (``<out>/judged.{csv,md}``); a folder that is not such a run is refused naming it.

The generalist (the day mix × D ∈ {fresh, 300, 900, 3600}, one mixed batch) is judged by the
sibling study :mod:`studies.cgrsp.learning.generalist` (``python -m studies generalist``), which
reuses this module's training and per-regime judging.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from gpu_sched_agents.evaluate.protocol import REGIMES as PROTOCOL_REGIMES
from gpu_sched_agents.evaluate.protocol import RULE_KEYS
from gpu_sched_agents.rl.ppo_jax.constraint import RECHECK_TOP
from gpu_sched_agents.rl.ppo_jax.selector import JAX_RULE
from gpu_sched_env.core.criteria import PARITY_MARGIN, best_rule, tolerance, within
from gpu_sched_env.core.io import atomic_write_table, atomic_write_text

# The standard protocol's regimes (gpu-sched evaluate's), as env params: name -> (day, params)
REGIMES: dict[str, tuple[str, dict[str, Any]]] = {
    name: (day, {} if stock == "fresh" else {"stock_process": "markov", "stock_dwell_s": int(stock)})
    for name, (day, stock) in PROTOCOL_REGIMES.items()
}
TEST_SEED0 = 20_000


def regime_config(
    regime: str,
    budget: int,
    n_envs: int | None = None,
    n_steps: int | None = None,
    extra: Sequence[str] = (),
    base: str = "experiment=ppo_jax_joint",
) -> Any:
    """The config of ``regime``, ``budget`` steps per seed: ``base`` (default: the joint design), then ``extra``."""
    from studies.conf import compose_config

    day, params = REGIMES[regime]
    over = [f"+env.params.{k}={v}" for k, v in params.items()]
    over += [f"train.n_envs={n_envs}"] if n_envs else []
    over += [f"algo.n_steps={n_steps}"] if n_steps else []
    cfg = compose_config(
        base,
        f"day={day}",
        "run_dir=/tmp/unused",
        f"train.total_timesteps={budget}",
        *over,
        *extra,
    )
    if n_envs or n_steps:  # other rollout sizes: four minibatches per epoch (or one when 4 does not divide it)
        rollout = int(cfg.train.n_envs) * int(cfg.algo.n_steps)
        cfg.algo.batch_size = rollout // 4 if rollout % 4 == 0 else rollout
    return cfg


def train_seeds(
    cfg: Any,
    seeds: Sequence[int],
    out: Path,
    together: bool = True,
    select_every: int = 0,
    select_days: int = 100,
    select_by: str = "objective",
    select_regimes: Sequence[str] = (),
    recheck_days: int = 0,
    recheck_top: int = RECHECK_TOP,
) -> tuple[dict[int, Path], float]:
    """Train ``seeds`` of one regime through ``train.py``'s multi-seed mode; export each actor. Paths and seconds.

    The one trainer (:mod:`gpu_sched_agents.rl.multiseed`, ``train.seeds``) writes a run folder
    per seed under ``out/runs/``; each seed's judged actor is copied to ``out/seed<k>.npz`` and its
    selection table to ``out/seed<k>_select.csv``. ``together``: the seeds train side by side
    (one jitted update ``jax.vmap``-ped over their keys); otherwise one after another (batches of
    one). Either way each seed's network is the one it would get alone (to float rounding;
    ``tests/rl/test_ppo_jax_vmap.py``). A seed whose ``seed<k>.npz`` exists is not trained again;
    a group stopped after its final checkpoint resumes there, one stopped before trains again.

    With ``select_every`` > 0 every seed's actor is evaluated every ``select_every`` steps
    (rounded down to whole updates, at least one: :func:`whole_updates`) on ``select_days``
    native *selection* days (keys 10 000 …) and the one ranked first by ``select_by`` is exported
    (``algo.select_by``: ``objective``, the lowest
    :func:`~gpu_sched_agents.rl.ppo_jax.jax_eval.selection_objective`; ``lexicographic``: no more
    misses than the JAX rule on the same days, then the lowest wait); 0 exports the final network.
    ``select_regimes`` (regime names, ``algo.select_regimes``; the generalist's): each regime's
    selection days are played and the checkpoint whose worst regime is best is exported, by the
    generalist criterion's margin. ``recheck_days`` > 0 (``lexicographic`` or regimes): the
    second stage against the winner's curse of picking the lowest wait among many checkpoints on
    few days: the ``recheck_top`` best evaluations are replayed on ``recheck_days`` further
    selection days and the pick is made on both stages' days pooled
    (:meth:`~gpu_sched_agents.rl.ppo_jax.selector.Selector.recheck`).
    """
    import shutil

    from gpu_sched_agents.rl.entry import train
    from gpu_sched_agents.rl.train import latest_checkpoint

    paths = {s: out / f"seed{s}.npz" for s in seeds}
    todo = [s for s in seeds if not paths[s].exists()]
    if not todo:
        return paths, 0.0
    check_recheck(select_every, select_days, select_by, select_regimes, recheck_days, recheck_top)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for group in [todo] if together else [[s] for s in todo]:
        run = out / "runs" / ("seeds" + "_".join(str(s) for s in group))
        if run.exists() and not all(latest_checkpoint(run / f"seed{s}") for s in group):
            print(f"{run}: stopped before its checkpoint; training it again from the start", flush=True)
            shutil.rmtree(run)  # the study's own run folder, nothing in it kept (no checkpoint to resume from)
        selection = dict(select_days=select_days, select_by=select_by, select_regimes=list(select_regimes))
        train(seeds_config(cfg, group, run, select_every, recheck_days, recheck_top, **selection))
        for s in group:
            _export(run / f"seed{s}", paths[s], selected=select_every > 0)
    return paths, time.perf_counter() - t0


def seeds_config(
    cfg: Any,
    seeds: Sequence[int],
    run: Path,
    select_every: int,
    recheck_days: int,
    recheck_top: int,
    select_days: int,
    select_by: str,
    select_regimes: list[str],
) -> Any:
    """``cfg`` as a ``train.seeds`` run into ``run`` (resumed when it exists), selecting as :func:`train_seeds` asks.

    What the studies judge themselves is off: no final tables, no in-JAX evaluation; CGRSP-v0's
    evaluation (on one selection seed) only at the end. One checkpoint, at the end (a runner holds
    every env's state: one per selection would cost megabytes each, for every seed and row); a
    group stopped before it trains again from the start.
    """
    import copy

    from omegaconf import open_dict

    out = copy.deepcopy(cfg)
    budget = int(cfg.train.total_timesteps)
    with open_dict(out):
        out.run_dir, out.seed = str(run), 0
        out.resume, out.resume_from = False, (str(run) if (run / "seeds.json").is_file() else None)
        out.train.seeds = [int(s) for s in seeds]
        out.train.final_eval_seeds, out.train.eval_seeds, out.train.eval_freq = 0, [10_000], budget
        out.train.checkpoint_freq, out.train.progress_bar = budget, False  # one checkpoint, at the end
        out.algo.jax_eval_seeds = 0
        out.algo.select_days = select_days if select_every > 0 else 0
        out.algo.select_every = whole_updates(cfg, select_every) if select_every > 0 else None
        out.algo.select_by = ("worst_regime" if select_regimes else select_by) if select_every > 0 else None
        out.algo.select_regimes = list(select_regimes) if select_every > 0 else []
        out.algo.recheck_days, out.algo.recheck_top = recheck_days, recheck_top
    return out


def whole_updates(cfg: Any, every: int) -> int:
    """``every`` steps of ``cfg``'s training rounded down to whole updates (at least one), in steps.

    The studies evaluate (and tune checkpoints) every ⌊every / (train.n_envs × algo.n_steps)⌋
    updates, as their tables were made; ``train.py``'s ``algo.select_every`` and
    ``train.checkpoint_freq`` act at the first update that reaches each multiple of their value,
    so a multiple of the update is the same schedule.
    """
    from gpu_sched_agents.rl.ppo_jax.config import hyper

    per_update = hyper(cfg).steps_per_update
    return max(1, every // per_update) * per_update


def check_recheck(
    select_every: int,
    select_days: int,
    select_by: str,
    select_regimes: Sequence[str] | Mapping[str, Any] | None,
    recheck_days: int,
    recheck_top: int,
) -> None:
    """ConfigError unless :func:`train_seeds`' second stage is off or can run (``constraint.check_recheck``)."""
    from gpu_sched_agents.rl.ppo_jax.constraint import check_recheck as check

    how = None
    if select_every <= 0 or (select_by != "lexicographic" and not select_regimes):
        how = (
            f"select_every = {select_every}, select_by = {select_by!r}, select_regimes = {sorted(select_regimes or [])}"
        )
    check("", recheck_days, recheck_top, select_days, how)


def _export(folder: Path, path: Path, selected: bool) -> None:
    """A seed's judged actor (its run's ``best_model``, or without a selection its final network) and table.

    ``seed<k>_select.csv`` beside ``path``: the run's ``select_candidates.csv`` (every evaluation on
    the selection days, the rule's numbers beside, the second stage's columns, the pick marked).
    """
    import shutil

    if selected:
        shutil.copyfile(folder / "select_candidates.csv", path.parent / f"{path.stem}_select.csv")
    tmp = path.with_name(path.name + ".tmp.npz")
    shutil.copyfile(folder / ("best_model.npz" if selected else "final_model.npz"), tmp)
    tmp.replace(path)  # last: its presence marks the seed done


def _v0_day(policy: str, config: Any, seed: int) -> dict[str, Any]:
    """One CGRSP-v0 day of an exported policy (a top-level function: process pools pickle it)."""
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_env.cgrsp.evaluation import evaluate

    row = evaluate(NumpyPolicy.load(policy), config, [seed]).iloc[0].to_dict()
    return {"seed": seed, "mean_wait_min": row["mean_wait_min"], "miss_pct": row["miss_pct"]}


def paired(a: pd.DataFrame, b: pd.DataFrame, key: str) -> dict[str, float]:
    """Learned ``a`` − rule ``b`` on their common ``key`` values: means, wait CI, miss difference and its upper bound.

    ``miss_ci_high``: the upper 95 % bound of the paired miss difference [pp], the miss bound (≤ 0.01,
    ``criteria.MISS_BOUND_PP``).
    """
    from gpu_sched_env.core.stats import mean_ci

    a, b = a.set_index(key).sort_index(), b.set_index(key).sort_index()
    common = a.index.intersection(b.index)
    ci = mean_ci(a.loc[common, "mean_wait_min"].to_numpy() - b.loc[common, "mean_wait_min"].to_numpy())
    miss = mean_ci(a.loc[common, "miss_pct"].to_numpy() - b.loc[common, "miss_pct"].to_numpy())
    return {
        "n": len(common),
        "learned_wait": a.loc[common, "mean_wait_min"].mean(),
        "rule_wait": b.loc[common, "mean_wait_min"].mean(),
        "wait_diff": ci.mean,
        "wait_ci_high": ci.mean + ci.half_width,
        "wait_ci_low": ci.mean - ci.half_width,
        "miss_diff": a.loc[common, "miss_pct"].mean() - b.loc[common, "miss_pct"].mean(),
        "miss_ci_high": miss.mean + miss.half_width,
    }


def at_parity(p: dict[str, float]) -> bool:
    """The parity criterion on :func:`paired`'s row (:func:`~gpu_sched_env.core.criteria.within`, ``PARITY_MARGIN``)."""
    return within(p["wait_ci_high"], p["rule_wait"], p["miss_diff"], PARITY_MARGIN)


def evaluate_regime(
    regime: str, cfg: Any, paths: dict[int, Path], jax_days: int, confirm_days: int, workers: int, out: Path
) -> list[dict[str, Any]]:
    """One row per seed: the JAX paired test and the CGRSP-v0 confirmation against the re-chosen rule."""
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
    from gpu_sched_agents.rl.ppo_jax.jax_eval import learned_rule, per_day, test_keys
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP

    env = JaxCGRSP.from_config(env_config(cfg), records=False)
    keys = test_keys(jax_days)
    rule_file = out / f"jax_{JAX_RULE}_{jax_days}.csv"
    if rule_file.exists():
        rule_days = pd.read_csv(rule_file)
    else:
        rule_days = per_day(env, {JAX_RULE: RULES[JAX_RULE]}, keys)
        atomic_write_table(rule_file, rule_days)
    v0 = confirm_v0(cfg, paths, confirm_days, workers, out)
    rows = []
    for s, path in paths.items():
        learned_days = per_day(env, {"ppo_jax": learned_rule(env, NumpyPolicy.load(path))}, keys)
        pj = paired(learned_days, rule_days, "day_index")
        rows.append(
            {
                "regime": regime,
                "seed": s,
                "jax_rule": JAX_RULE,
                **{f"jax_{k}": v for k, v in pj.items()},
                "jax_parity": at_parity(pj),
                **v0[s],
                "parity": at_parity(pj) and v0[s]["v0_parity"],
                "tolerance_min": tolerance(v0[s]["v0_rule_wait"], PARITY_MARGIN),
            }
        )
    return rows


def confirm_v0(cfg: Any, paths: dict[int, Path], confirm_days: int, workers: int, out: Path) -> dict[int, dict]:
    """Per seed, the CGRSP-v0 confirmation: ``v0_*`` columns (paired) and ``v0_parity``.

    The NumPy policy plays ``confirm_days`` test seeds against the deferring rule re-chosen there
    (lowest miss %, then wait; the rules' days kept in ``out``).
    """
    from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.cgrsp.batch import run_grid

    config = env_config(cfg)
    seeds = list(range(TEST_SEED0, TEST_SEED0 + confirm_days))
    executor = "process" if workers > 1 else "serial"
    heur_file = out / f"v0_rules_{confirm_days}.csv"
    if heur_file.exists():
        heur = pd.read_csv(heur_file)
    else:
        heur = run_grid(
            list(EXTENSIONS), seeds, day=config.day, params=dict(config.params), executor=executor, workers=workers,
            progress=False,
        )  # fmt: skip
        atomic_write_table(heur_file, heur)
    means = heur.groupby("policy")[["miss_pct", "mean_wait_min"]].mean()
    best = best_rule(means, list(means.index), RULE_KEYS)
    out_rows = {}
    for s, path in paths.items():
        pv = paired_on_v0(path, config, heur[heur.policy == best], workers)
        out_rows[s] = {"v0_rule": best, **{f"v0_{k}": v for k, v in pv.items()}, "v0_parity": at_parity(pv)}
    return out_rows


def paired_on_v0(path: Path, config: Any, rule_days: pd.DataFrame, workers: int) -> dict[str, float]:
    """The exported actor at ``path`` on ``rule_days``' CGRSP-v0 seeds, paired with them (:func:`paired`)."""
    from gpu_sched_env.core.fanout import map_cells

    cells = [{"policy": str(path), "config": config, "seed": int(d)} for d in rule_days.seed]
    executor = "process" if workers > 1 else "serial"
    days = pd.DataFrame(map_cells(_v0_day, cells, executor=executor, workers=workers, progress=False))
    return paired(days, rule_days, "seed")


def steps_text(budget: float) -> str:
    """A step budget with thin groups of three: 3000000 → "3 000 000"."""
    return f"{int(budget):,}".replace(",", " ")


def wait_text(x: float, rule_wait: float) -> str:
    """A wait [min] to 2 decimals where the rule waits 10 min or more, else to 3 (the surge day's ~0.3 min)."""
    return f"{x:.2f}" if abs(rule_wait) >= 10 else f"{x:.3f}"


def page_table(rows: pd.DataFrame) -> str:
    """Markdown: per regime and seed, learned / rule and learned − rule (its upper 95 % bound) in JAX and on CGRSP-v0.

    Then the miss differences [pp] (with their upper bounds where the rows hold them), the tolerance
    (max(1 % of the rule's wait, 0.05 min)), the verdict, and a line per regime with its count at parity.
    """
    bounds = "jax_miss_ci_high" in rows and "v0_miss_ci_high" in rows
    head = ["regime", "seed", "steps", "JAX learned / rule", "JAX diff (≤)", "JAX miss pp", "CGRSP-v0 rule"]
    head += ["CGRSP-v0 learned / rule", "CGRSP-v0 diff (≤)", "CGRSP-v0 miss pp", "tolerance", "at parity"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows.itertuples(index=False):
        jw, vw = r.jax_rule_wait, r.v0_rule_wait
        jm = f"{r.jax_miss_diff:+.3f}" + (f" ({r.jax_miss_ci_high:.3f})" if bounds else "")
        vm = f"{r.v0_miss_diff:+.3f}" + (f" ({r.v0_miss_ci_high:.3f})" if bounds else "")
        cells = [
            r.regime,
            str(r.seed),
            steps_text(r.budget),
            f"{wait_text(r.jax_learned_wait, jw)} / {wait_text(jw, jw)}",
            f"{r.jax_wait_diff:+.3f} ({r.jax_wait_ci_high:.3f})",
            jm,
            f"`{r.v0_rule}`",
            f"{wait_text(r.v0_learned_wait, vw)} / {wait_text(vw, vw)}",
            f"{r.v0_wait_diff:+.3f} ({r.v0_wait_ci_high:.3f})",
            vm,
            f"{r.tolerance_min:.2f}",
            "**yes**" if r.parity else "no",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    counts = rows.groupby("regime", sort=False).parity.agg(["sum", "count"])
    lines.append("")
    lines += [f"- {r}: {int(c['sum'])} of {int(c['count'])} seeds at parity" for r, c in counts.iterrows()]
    return "\n".join(lines) + "\n"


def table_text(rows: pd.DataFrame) -> str:
    """``table.md``: :func:`page_table` under a heading and the columns' meaning."""
    return (
        "# ppo_jax vs the strongest rule, per regime\n\n"
        "Wait in minutes; diff = learned − rule, paired over the days (in brackets its upper 95 % bound); miss pp = "
        "learned − rule miss in percentage points (in brackets its upper 95 % bound, the miss bound ≤ 0.01); at "
        "parity = the wait bound within the tolerance and the miss not higher, in JAX and on CGRSP-v0.\n\n"
        + page_table(rows)
    )


def judged_runs(runs: Sequence[Path]) -> list[tuple[str, Any, int, Path]]:
    """``(regime, config, seed, actor)`` of each ``train.py algo=ppo_jax`` run folder (``train.seeds``: per seed).

    The actor is the run's ``best_model.npz``; the regime is read off its config (day, stock model)
    and must be one of the protocol's. A folder that is not such a run is a ConfigError naming it.
    """
    from omegaconf import OmegaConf

    from gpu_sched_agents.rl.best import seed_folders
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_env.core.errors import ConfigError

    out = []
    for run in runs:
        for folder in list(seed_folders(run).values()) or [Path(run)]:
            path = folder / "config.yaml"
            if not path.is_file():
                raise ConfigError(
                    f"--from {folder}: no config.yaml; expected a train.py run folder (or a train.seeds one)"
                )
            cfg = OmegaConf.load(path)
            scenario, algo = OmegaConf.select(cfg, "scenario.name"), OmegaConf.select(cfg, "algo.name")
            if scenario not in (None, "cgrsp") or algo != "ppo_jax":
                raise ConfigError(
                    f"--from {folder}: a run of scenario={scenario}, algo={algo}; parity judges CGRSP ppo_jax actors "
                    "(scenario=cgrsp, algo=ppo_jax)"
                )
            if not (folder / "best_model.npz").is_file():
                raise ConfigError(f"--from {folder}: no best_model.npz (its training did not finish)")
            out.append((regime_of(cfg, env_config(cfg), folder), cfg, int(cfg.seed), folder / "best_model.npz"))
    return out


def regime_of(cfg: Any, config: Any, folder: Path) -> str:
    """The protocol regime a run trained on (its day and stock model); ConfigError for a day or stock it lacks."""
    from gpu_sched_env.core.errors import ConfigError

    p = config.sim_params()
    name = f"{cfg.day.name}_" + ("fresh" if p.stock_process == "fresh" else f"D{p.stock_dwell_s:g}")
    if name not in REGIMES:
        raise ConfigError(
            f"--from {folder}: trained on {name} (day {cfg.day.name}, stock {p.stock_process}); parity judges the "
            f"protocol's regimes, allowed: {', '.join(REGIMES)}"
        )
    return name


def judge(runs: Sequence[Path], out: Path, jax_days: int, confirm_days: int, workers: int) -> pd.DataFrame:
    """Judge trained run folders as the study judges its own seeds; one row per seed, ``run`` naming its folder.

    Each folder's rule days are played on its own design (``<out>/judged/<k>/`` keeps them, k its
    place in ``runs``' order), so two designs never share a cached number.
    """
    rows = []
    for k, (regime, cfg, seed, actor) in enumerate(judged_runs(runs)):
        cache = out / "judged" / str(k)
        cache.mkdir(parents=True, exist_ok=True)
        for row in evaluate_regime(regime, cfg, {seed: actor}, jax_days, confirm_days, workers, cache):
            rows.append({**row, "run": str(actor.parent), "budget": int(cfg.train.total_timesteps)})
    return pd.DataFrame(rows)


SETTINGS = ("n_envs", "n_steps", "override", "select_every", "select_days")  # what trains a seed, beside the budget
LATER_SETTINGS = {"recheck_days": 0, "recheck_top": RECHECK_TOP}  # settings added later: their value before them


def check_settings(out: Path, args: argparse.Namespace, keys: Sequence[str] = SETTINGS) -> None:
    """Refuse to resume ``out`` under other training settings (its networks and rows would be reused as theirs)."""
    import json

    from gpu_sched_env.core.errors import ConfigError
    from gpu_sched_env.core.io import atomic_write_json

    path = out / "settings.json"
    mine = {k: getattr(args, k) for k in keys}
    if path.exists():
        saved = {**LATER_SETTINGS, **json.loads(path.read_text())}  # a folder from before a setting had its default
        diff = {k: (saved.get(k), mine[k]) for k in keys if saved.get(k) != mine[k]}
        if diff:
            said = ", ".join(f"{k}: {a!r} there, {b!r} now" for k, (a, b) in diff.items())
            raise ConfigError(
                f"--out {out}: trained under other settings ({said}); use another --out, or the same settings to resume"
            )
    else:
        atomic_write_json(path, mine)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The study's command line, checked (argparse exits with a message naming the option)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, help="training steps per seed (required unless --from)")
    ap.add_argument(
        "--from",
        dest="runs",
        type=Path,
        nargs="+",
        default=None,
        help="judge these train.py algo=ppo_jax run folders (train.seeds ones too) instead of training",
    )
    ap.add_argument("--out", type=Path, required=True, help="output folder (rows.csv, table.md, exported networks)")
    ap.add_argument("--regimes", nargs="+", default=list(REGIMES), choices=list(REGIMES))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--jax-days", type=int, default=1000, help="native JAX test days of the paired test")
    ap.add_argument("--confirm-days", type=int, default=100, help="CGRSP-v0 test seeds of the confirmation")
    ap.add_argument("--n-envs", type=int, default=None, help="envs per seed (default: the shipped train.n_envs)")
    ap.add_argument(
        "--n-steps", type=int, default=None, help="steps per env per update (default: the shipped algo.n_steps)"
    )
    ap.add_argument("--workers", type=int, default=1, help="processes for the CGRSP-v0 days")
    ap.add_argument(
        "--in-turn",
        action="store_true",
        help="train a regime's seeds one after another (default: side by side, jax.vmap over the seeds' keys)",
    )
    ap.add_argument(
        "--select-every",
        type=int,
        default=0,
        help="steps between selection evaluations (native days 10 000 …); the best actor is judged. 0: the final one",
    )
    ap.add_argument("--select-days", type=int, default=100, help="native selection days per selection evaluation")
    ap.add_argument(
        "--override",
        nargs="*",
        default=[],
        help="extra Hydra overrides of the experiment=ppo_jax_joint config (tuned on selection seeds)",
    )
    args = ap.parse_args(argv)
    if args.runs is None and args.budget is None:
        ap.error("--budget is required (or --from RUN ... to judge trained run folders)")
    if args.runs is not None:
        args.budget = args.budget or 1  # judged runs carry their own budget
    if args.select_every < 0:
        ap.error(f"--select-every = {args.select_every}: must be ≥ 0 (0: no selection, the final network)")
    for name in ("budget", "jax_days", "confirm_days", "workers", "select_days"):
        if getattr(args, name) < (2 if name.endswith("days") else 1):
            ap.error(f"--{name.replace('_', '-')} = {getattr(args, name)}: too small (days ≥ 2 for a CI, others ≥ 1)")
    return args


def main_judge(args: argparse.Namespace) -> int:
    """``--from RUN ...``: judge the run folders (nothing trains); ``<out>/judged.csv`` and ``judged.md``."""
    rows = judge(args.runs, args.out, args.jax_days, args.confirm_days, args.workers)
    atomic_write_table(args.out / "judged.csv", rows)
    text = table_text(rows)
    atomic_write_text(args.out / "judged.md", text)
    print(text)
    print(f"written {args.out / 'judged.csv'} and {args.out / 'judged.md'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Train, judge and tabulate (resumable); or with ``--from`` judge trained run folders; the exit status."""
    from studies.provenance import checkout, record

    args = parse_args(argv)
    checkout()  # the code this process runs, read before it trains
    if args.runs is not None:
        judged_runs(args.runs)  # a folder it cannot judge is refused before anything is written
        args.out.mkdir(parents=True, exist_ok=True)
        main_judge(args)
        record(args.out, "parity", argv)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    check_settings(args.out, args)
    rows_path = args.out / "rows.csv"
    done = pd.read_csv(rows_path) if rows_path.exists() else pd.DataFrame(columns=["regime", "seed", "budget"])
    for regime in args.regimes:
        seeds = [
            s
            for s in args.seeds
            if not ((done.regime == regime) & (done.seed == s) & (done.budget == args.budget)).any()
        ]
        if not seeds:
            continue
        cfg = regime_config(regime, args.budget, args.n_envs, args.n_steps, args.override)
        folder = args.out / f"{regime}_b{args.budget}"
        paths, seconds = train_seeds(cfg, seeds, folder, not args.in_turn, args.select_every, args.select_days)
        print(f"{regime}: {len(seeds)} seed(s) × {args.budget} steps trained in {seconds:.0f} s", flush=True)
        rows = evaluate_regime(
            regime, cfg, {s: paths[s] for s in seeds}, args.jax_days, args.confirm_days, args.workers, folder
        )
        new = pd.DataFrame(rows).assign(budget=args.budget, train_s=seconds)
        done = pd.concat([done, new], ignore_index=True) if len(done) else new
        atomic_write_table(rows_path, done)
        record(args.out, "parity", argv)  # a command that added rows, not one that found them all there
        atomic_write_text(args.out / "table.md", table_text(done))
        print(table_text(new), flush=True)
    print(f"written {rows_path} and {args.out / 'table.md'}")
    return 0
