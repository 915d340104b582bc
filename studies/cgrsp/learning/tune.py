r"""Tune ``algo=ppo_jax`` on the selection days only: learning curves judged in JAX against the rule.

    python -m studies tune --out runs/ppo_jax_tune --name base \
        --budget 1500000 --every 250000 --days 200 -- algo.learning_rate=3e-4 train.n_envs=64

Trains one ``experiment=ppo_jax_joint`` config (the Hydra overrides after ``--``) through ``train.py``
(``train.seeds=[--seed]``, a run folder under ``<out>/runs/<name>``, a checkpoint every ``--every``
steps) and at every checkpoint plays its actor (the NumPy weights, as ``final_eval`` plays them,
two-level mode) and the JAX rule ``spt_rescue_defer_exp`` on the same ``--days`` native JAX days drawn from
the *selection* keys ``PRNGKey(10 000 + i)`` (never the test keys 20 000 …), and appends one row
per evaluation to ``<out>/curves.csv``: steps, training seconds, learned and rule mean wait and
miss %, the paired difference with its 95 % CI. ``<name>`` labels the setting; rows already in
the file for the same name are kept and that name is skipped (resumable by setting).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from gpu_sched_env.core.io import atomic_write_table

RULE = "spt_rescue_defer_exp"


def curve(
    overrides: Sequence[str], budget: int, every: int, days: int, seed: int = 0, run: Path | None = None
) -> list[dict[str, float]]:
    """Train ``overrides`` for ``budget`` steps (``train.py``); the paired selection-day comparison every ``every``.

    The run (``train.seeds=[seed]``, a checkpoint every ``every`` steps rounded down to whole
    updates, and at the end) goes into ``run`` (default: a temporary folder; an existing one is
    resumed); each checkpoint's actor is then played on the selection days beside the rule.
    ``train_s``: the training seconds up to that checkpoint (TensorBoard's ``time/fps``, evaluations
    excluded); ``entropy``: the policy entropy of its last update.
    """
    import tempfile

    import jax

    from gpu_sched_agents.rl.entry import train
    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.config import build_trainer, validate_ppo_jax
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, per_day, play_params, selection_objective, test_keys
    from gpu_sched_agents.rl.ppo_jax.run import load_runner
    from gpu_sched_agents.rl.train import checkpoints
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP
    from gpu_sched_env.core.stats import mean_ci
    from studies.cgrsp.learning.parity import seeds_config, whole_updates
    from studies.conf import compose_config

    cfg = compose_config(
        "experiment=ppo_jax_joint", "run_dir=/tmp/unused", f"train.total_timesteps={budget}", *overrides
    )
    config = env_config(cfg)
    validate_ppo_jax(cfg, config)
    env, hp, trainer = build_trainer(cfg, config, JaxCGRSP.from_config(config, records=False))
    at = whole_updates(cfg, every)
    run = Path(tempfile.mkdtemp(prefix="tune_")) if run is None else run
    settings = seeds_config(cfg, [seed], run, 0, 0, 1, days, "lexicographic", [])  # no selection: every checkpoint
    settings.train.checkpoint_freq = at
    train(settings)
    folder = run / f"seed{seed}"
    assert checkpoints(folder), folder
    like = jax.jit(trainer.init)(jax.random.PRNGKey(seed))  # a checkpoint holds one seed's runner
    keys = test_keys(days, SELECT_SEED0)
    rule_days = per_day(env, {RULE: RULES[RULE]}, keys).set_index("day_index").sort_index()
    entropy, seconds = _update_series(folder / "tb" / "learned_1", hp.steps_per_update)
    rows = []
    for steps, ckpt in checkpoints(folder):
        params = jax.device_get(load_runner(ckpt, like).train_state.params)
        mine = play_params(env, params, keys).set_index("day_index").sort_index()
        diff = mean_ci(mine.mean_wait_min.to_numpy() - rule_days.mean_wait_min.to_numpy())
        r = {
            "steps": steps,
            "train_s": round(sum(t for s, t in seconds.items() if s <= steps), 1),
            "learned_wait": mine.mean_wait_min.mean(),
            "rule_wait": rule_days.mean_wait_min.mean(),
            "learned_miss": mine.miss_pct.mean(),
            "rule_miss": rule_days.miss_pct.mean(),
            "diff": diff.mean,
            "half_width": diff.half_width,
            "entropy": entropy[steps],
            "objective": selection_objective(mine),
        }
        rows.append(r)
        print(
            f"{r['steps']:>9} steps {r['train_s']:>6.0f} s: learned {r['learned_wait']:.2f} min "
            f"({r['learned_miss']:.2f} %) rule {r['rule_wait']:.2f} ({r['rule_miss']:.2f} %) "
            f"diff {r['diff']:+.2f} ± {r['half_width']:.2f}  entropy {r['entropy']:.3f}",
            flush=True,
        )
    return rows


def _update_series(tb: Path, per_update: int) -> tuple[dict[int, float], dict[int, float]]:
    """Per update (by its steps): the policy entropy and the update's seconds, from the run's TensorBoard scalars.

    A resumed run logs the updates after its checkpoint again: the last value of a step counts.
    """
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(tb), size_guidance={"scalars": 0})
    ea.Reload()
    entropy = {e.step: -float(e.value) for e in ea.Scalars("train/entropy_loss")}
    seconds = {e.step: per_update / float(e.value) for e in ea.Scalars("time/fps")}
    return entropy, seconds


def main(argv: Sequence[str] | None = None) -> int:
    """Run one setting and append its curve (skipped when its name is in ``curves.csv``); the exit status."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder of curves.csv")
    p.add_argument("--name", required=True, help="label of this setting in curves.csv")
    p.add_argument("--budget", type=int, default=1_500_000, help="training steps")
    p.add_argument("--every", type=int, default=250_000, help="steps between evaluations")
    p.add_argument("--days", type=int, default=200, help="native selection days per evaluation")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("overrides", nargs="*", help="Hydra overrides of the experiment=ppo_jax_joint config (after --)")
    a = p.parse_args(argv)
    for name, v in (("--budget", a.budget), ("--every", a.every), ("--days", a.days)):
        if v < 1:
            p.error(f"{name} = {v}: must be ≥ 1")
    path = a.out / "curves.csv"
    old = pd.read_csv(path) if path.exists() else pd.DataFrame()
    if len(old) and (old.name == a.name).any():
        print(f"{a.name}: already in {path}, skipped")
        return 0
    rows = curve(a.overrides, a.budget, a.every, a.days, a.seed, a.out / "runs" / a.name)
    new = pd.DataFrame(rows).assign(name=a.name, seed=a.seed, overrides=" ".join(a.overrides))
    a.out.mkdir(parents=True, exist_ok=True)
    old = pd.read_csv(path) if path.exists() else pd.DataFrame()  # again: settings may run side by side
    atomic_write_table(path, pd.concat([old, new], ignore_index=True))
    return 0
