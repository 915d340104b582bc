"""``train.py ... train.seeds=[...]``: one run folder per seed, side by side (ppo_jax) or in turn, resumable."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from gpu_sched_agents.rl.best import read_best, selection_objective
from gpu_sched_agents.rl.config import register_configs
from gpu_sched_agents.rl.entry import train
from gpu_sched_env.core.errors import ConfigError
from tests.rl.train_runs import COMMON, JAX_TINY, SB3

CONF = str(Path(__file__).resolve().parents[2] / "conf")
register_configs()
JAX = ["experiment=ppo_jax_joint", "day=quiet", *JAX_TINY, *COMMON, "algo.lr_final_frac=1.0"]
SEED_FILES = ("config.yaml", "command.txt", "final_model.npz", "best_model.npz", "best.json", "final_eval.csv")


def cfg_for(run_dir, *overrides):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=[f"run_dir={run_dir}", *overrides])


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ("train.seeds=[0,1,0]", r"train.seeds = \[0, 1, 0\]: seed\(s\) \[0\] named twice; allowed: each seed once"),
        ("train.seeds=[0,-1]", r"train.seeds\[1\] = -1 is out of range"),
        ("train.seeds=[]", r"train.seeds = \[\]: give at least one seed"),
        ("train.seeds=[1,2] seed=7", r"seed = 7 with train.seeds = \[1, 2\]: the list gives each run its seed"),
    ],
)
def test_a_bad_seeds_list_is_refused_before_anything_is_written(tmp_path, override, match):
    run = tmp_path / "run"
    with pytest.raises(ConfigError, match=match):
        train(cfg_for(run, *JAX, *override.split()))
    assert not run.exists()


def train_side_by_side(run):
    """``train.seeds=[0,3]`` on the tiny ppo_jax run: each seed's folder a whole run (asserted); the parent."""
    out = train(cfg_for(run, *JAX, "train.seeds=[0,3]"))
    assert set(out) == {"miss_pct", "mean_wait_min", "mean_tardiness_min", "cost_usd"}
    assert json.loads((run / "seeds.json").read_text()) == {"seeds": [0, 3], "folders": ["seed0", "seed3"]}
    table = pd.read_csv(run / "seeds.csv")
    assert table.seed.tolist() == [0, 3] and table.folder.tolist() == ["seed0", "seed3"]
    for s in (0, 3):
        for f in SEED_FILES:
            assert (run / f"seed{s}" / f).exists(), (s, f)
        saved = OmegaConf.load(run / f"seed{s}" / "config.yaml")
        assert saved.seed == s and list(saved.train.seeds) == [0, 3] and saved.run_dir == str(run / f"seed{s}")
        assert pd.read_csv(run / f"seed{s}" / "learning_curve.csv").timesteps.tolist() == [128, 256]
    assert selection_objective(run) == pytest.approx(table.objective.mean())
    assert table.objective.tolist() == [read_best(run / f"seed{s}")["objective"] for s in (0, 3)]
    a, b = np.load(run / "seed0" / "final_model.npz"), np.load(run / "seed3" / "final_model.npz")
    assert any(not np.array_equal(a[k], b[k]) for k in a.files)  # two seeds, two networks
    return run


@pytest.mark.e2e  # a training run through train.py's loop
def test_ppo_jax_seeds_train_side_by_side_into_a_folder_each(tmp_path):
    """One update per step, vmapped: the networks of one jitted scan over every update (PureJaxRL's), bit for bit."""
    import jax

    from gpu_sched_agents.rl.envs import env_config
    from gpu_sched_agents.rl.ppo_jax.config import build_trainer
    from gpu_sched_agents.rl.ppo_jax.export import actor_arrays

    run = train_side_by_side(tmp_path / "run")
    cfg = cfg_for(tmp_path / "unused", *JAX)
    _, hp, trainer = build_trainer(cfg, env_config(cfg))
    keys = jax.numpy.stack([jax.random.PRNGKey(s) for s in (0, 3)])
    runner = jax.jit(jax.vmap(trainer.init))(keys)
    runner, _ = jax.jit(jax.vmap(lambda r: trainer.run(r, hp.n_updates)))(runner)
    params = jax.device_get(runner.train_state.params)
    for i, s in enumerate((0, 3)):
        mine = np.load(run / f"seed{s}" / "final_model.npz")
        theirs = actor_arrays(jax.tree_util.tree_map(lambda x, i=i: x[i], params))
        assert set(theirs) <= set(mine.files)
        for k, v in theirs.items():
            np.testing.assert_array_equal(mine[k], v)


@pytest.mark.e2e
def test_ppo_jax_seeds_resume_exactly(tmp_path):
    """Half the budget, interrupted, then resume=true: every seed's network and curve as the uninterrupted run's."""
    whole, half = tmp_path / "whole", tmp_path / "half"
    no_tables = "train.final_eval_seeds=0"
    train(cfg_for(whole, *JAX, "train.seeds=[1,2]", no_tables))
    train(cfg_for(half / "a", *JAX, "train.seeds=[1,2]", no_tables, "train.total_timesteps=128"))
    runner = half / "a" / "seed2" / "checkpoints" / "model_128_steps.npz"
    kept = runner.read_bytes()
    runner.unlink()  # as if stopped while writing seed 2's checkpoint
    with pytest.raises(ConfigError, match=r"seed2 holds no checkpoint"):
        train(cfg_for(half / "b", *JAX, "train.seeds=[1,2]", no_tables, "resume=true"))
    runner.write_bytes(kept)
    train(cfg_for(half / "c", *JAX, "train.seeds=[1,2]", no_tables, "resume=true"))
    assert (half / "c" / "resumed_into.txt").read_text().strip() == str(half / "a")
    for s in (1, 2):
        a, b = np.load(whole / f"seed{s}" / "final_model.npz"), np.load(half / "a" / f"seed{s}" / "final_model.npz")
        for k in a.files:
            np.testing.assert_array_equal(a[k], b[k])
        curve = pd.read_csv(half / "a" / f"seed{s}" / "learning_curve.csv")
        pd.testing.assert_frame_equal(curve, pd.read_csv(whole / f"seed{s}" / "learning_curve.csv"))
    with pytest.raises(ConfigError, match=r"trained train.seeds = \[1, 2\], this run asks for \[1, 3\]"):
        train(cfg_for(half / "d", *JAX, "train.seeds=[1,3]", no_tables, f"resume_from={half / 'a'}"))


@pytest.mark.e2e
def test_sb3_seeds_train_in_turn_each_exactly_its_single_run(tmp_path):
    """algo=ppo has no side-by-side trainer: each seed's folder is the single run of that seed, file for file."""
    run, single = tmp_path / "run", tmp_path / "single"
    train(cfg_for(run, "algo=ppo", "day=quiet", *SB3, "train.seeds=[0,5]"))
    train(cfg_for(single, "algo=ppo", "day=quiet", *SB3, "seed=5"))
    for f in ("learning_curve.csv", "final_eval_per_seed.csv"):
        pd.testing.assert_frame_equal(pd.read_csv(run / "seed5" / f), pd.read_csv(single / f))
    assert read_best(run / "seed5") == read_best(single)
    assert selection_objective(run) == pytest.approx(np.mean([selection_objective(run / f"seed{s}") for s in (0, 5)]))


def test_resume_from_alone_resumes_as_resume_true_does(tmp_path):
    """``resume_from=DIR`` without ``resume=true`` continues DIR (it was once ignored: a fresh run, silently)."""
    import gpu_sched_agents.rl.train as tr

    earlier = tmp_path / "earlier"
    (earlier / "checkpoints").mkdir(parents=True)
    (earlier / "checkpoints" / "model_128_steps.npz").write_bytes(b"")
    cfg = cfg_for(tmp_path / "now", *JAX)
    (earlier / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    cfg.resume_from = str(earlier)
    assert tr.resolve_run_dir(cfg) == (earlier, earlier / "checkpoints" / "model_128_steps.npz")
    cfg.resume_from = None
    assert tr.resolve_run_dir(cfg) == (tmp_path / "now", None)
