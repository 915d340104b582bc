"""``train.py algo=ppo_jax``: validation before anything is written, the run folder, tags, resume."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

import gpu_sched_agents.rl.train as tr
from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS, STRONG_RULES
from gpu_sched_agents.rl.config import register_configs
from gpu_sched_agents.rl.ppo_jax.export import NumpyPolicy
from gpu_sched_agents.rl.registry import load_model
from gpu_sched_env.core.errors import ConfigError
from tests.rl.helpers import scalar_tags
from tests.rl.train_runs import COMMON, JAX_TINY

CONF = str(Path(__file__).resolve().parents[2] / "conf")

register_configs()
TINY = [  # the machinery on the joint design (algo=ppo_jax's default, the when design: the tests below)
    "experiment=ppo_jax_joint",
    "day=quiet",
    *JAX_TINY,
    *COMMON,
    "algo.lr_final_frac=1.0",
]


def cfg_for(run_dir, *overrides):
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return compose(config_name="config", overrides=[*TINY, f"run_dir={run_dir}", *overrides])


@pytest.mark.parametrize(
    ("override", "match"),
    [
        (
            "algo.batch_size=48",
            r"algo.batch_size = 48: must divide one rollout, train.n_envs × algo.n_steps = 4 × 32 = 128",
        ),
        ("train.total_timesteps=100", r"train.total_timesteps = 100: less than one update"),
        ("algo.n_steps=0", r"algo.n_steps = 0"),
        ("algo.n_epochs=0", r"algo.n_epochs = 0"),
        ("train.n_envs=0", r"train.n_envs = 0"),
        ("algo.clip_range=0", r"algo.clip_range = 0"),
        ("algo.gae_lambda=1.5", r"algo.gae_lambda = 1.5"),
        ("algo.jax_eval_seeds=-1", r"algo.jax_eval_seeds = -1"),
        ("algo.select_days=-5", r"algo.select_days = -5 is out of range"),
        (
            "algo.select_days=10 algo.jax_eval_rules=[]",
            r"algo.select_days = 10 with algo.jax_eval_rules = \[\]: the selection ranks against the first rule",
        ),
        (
            "algo.jax_eval_rules=[spt,nope]",
            r"algo.jax_eval_rules\[\] = 'nope' is not known; allowed: fifo, spt, spt_rescue_defer_exp",
        ),
        ("train.vec_env=subproc", r"train.vec_env = 'subproc': algo=ppo_jax steps its envs vmapped"),
        ("train.device=tpu", r"train.device = 'tpu' is not known; allowed: cpu, gpu"),
        ("env.window=4", r"window"),  # the JAX env implements joint_heads' design only
        # returns and the selection (several overrides, space-separated)
        ("algo.tau_s=0", r"algo.tau_s = 0.0 is out of range; allowed: \(0, inf\]"),
        ("algo.tau_s=-60", r"algo.tau_s = -60.0 is out of range"),
        ("algo.gamma=1.5", r"algo.gamma = 1.5 is out of range; allowed: \(0, 1\]"),
        ("algo.select_days=4 algo.select_every=0", r"algo.select_every = 0 is out of range"),
        (
            "algo.select_days=4 algo.select_regimes=[hectic_fresh,hectic_D0]",
            r"algo.select_regimes\[1\]: regime = 'hectic_D0' is not allowed; allowed: <day>_fresh or <day>_D<mean",
        ),
        ("algo.select_days=4 algo.select_regimes=[busy_fresh]", r"algo.select_regimes\[0\]: regime = 'busy_fresh'"),
        (
            "algo.select_days=4 algo.select_regimes=[surge_D900,surge_D900]",
            r"algo.select_regimes = \['surge_D900', 'surge_D900'\]: a regime named twice",
        ),
        (
            "algo.select_days=0 algo.select_regimes=[surge_D900]",
            r"algo.select_regimes = \['surge_D900'\] with algo.select_days = 0: no days to play them on",
        ),
        (
            "algo.select_every=1000",
            r"algo.select_every = 1000 with algo.select_days = 0: it would be ignored; allowed: algo.select_every=null",
        ),
        ("algo.select_days=4 algo.select_by=best", r"algo.select_by = 'best' is not known; allowed: .*objective"),
        ("algo.select_by=objective", r"algo.select_by = 'objective' with algo.select_days = 0: there is no selection"),
        (
            "algo.select_days=4 algo.select_by=worst_regime",
            r"algo.select_by = 'worst_regime' with algo.select_regimes = \[\]: worst_regime ranks several regimes",
        ),
        (
            "algo.select_days=4 algo.select_by=lexicographic algo.select_regimes=[surge_D900]",
            r"algo.select_by = 'lexicographic' with algo.select_regimes = \['surge_D900'\]",
        ),
        (
            "algo.select_days=4 algo.select_by=objective algo.recheck_days=4",
            r"algo.recheck_days = 4: the second stage re-ranks .* algo.select_by = 'objective'",
        ),
        ("algo.recheck_days=-1", r"algo.recheck_days = -1 is out of range"),
        ("algo.recheck_days=100 algo.recheck_top=0", r"algo.recheck_top = 0 is out of range"),
        ("algo.recheck_days=100", r"algo.recheck_days = 100: the second stage re-ranks .* algo.select_days = 0"),
        (
            "algo.recheck_days=9997 algo.select_days=4",
            r"algo.select_days \+ algo.recheck_days = 10001: .* at most 10000 together",
        ),
    ],
)
def test_bad_config_is_refused_before_anything_is_written(tmp_path, override, match):
    run = tmp_path / "runs" / "r"
    with pytest.raises(ConfigError, match=match):
        tr.train(cfg_for(run, *override.split()))
    assert not run.exists()


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (
            ["day=mixed", "day.stock_mix=[fresh,stale]"],
            r"day.stock_mix entry 'stale' is not a stock model; allowed: 'fresh'",
        ),
        (["day=mixed", "day.stock_mix=[fresh,-300]"], r"day.stock_mix entry '-300'"),
        (["day=mixed", "day.stock_mix=[]"], r"day.stock_mix = \[\]: give a non-empty list"),
        (["day=mixed", "day.stock_mix=[900,'900']"], r"repeats a stock model"),
        (["day=hectic", "day.stock_mix=[fresh]"], r"implemented for day=mixed with algo=ppo_jax only"),
        (["day=mixed", "algo.reward_norm=task"], r"algo.reward_norm = 'task' is not known; allowed: global, regime"),
        (["day=hectic", "algo.reward_norm=regime"], r"algo.reward_norm = 'regime' with day = 'hectic'.*day=mixed"),
        (
            ["day=mixed", "algo.reward_norm=regime", "train.normalize_reward=false"],
            r"algo.reward_norm = 'regime' with train.normalize_reward = false",
        ),
    ],
)
def test_bad_stock_mix_is_refused_before_anything_is_written(tmp_path, overrides, match):
    run = tmp_path / "runs" / "r"
    with pytest.raises(ConfigError, match=match):
        tr.train(cfg_for(run, *overrides))
    assert not run.exists()


def test_stock_mix_with_sb3_is_refused(tmp_path):
    run = tmp_path / "r"
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(
            config_name="config", overrides=["algo=ppo", "day=mixed", "day.stock_mix=[fresh]", f"run_dir={run}"]
        )
    with pytest.raises(
        ConfigError, match=r"day=mixed, algo=ppo: a stock mix is implemented for day=mixed with algo=ppo_jax"
    ):
        tr.train(cfg)
    assert not run.exists()


@pytest.mark.e2e
def test_tiny_mixed_run_trains_on_the_mix_and_is_selected_on_hectic(tmp_path):
    """day=mixed with a stock mix: trains (one vmapped batch of mixed days), selects on hectic, exports."""
    import jax

    from gpu_sched_agents.rl.ppo_jax.config import training_env

    run = tmp_path / "mixed"
    cfg = cfg_for(run, "day=mixed", "day.stock_mix=[fresh,900]", "train.final_eval_seeds=0")
    config = tr.validate(cfg)
    assert config.day == "hectic"  # the selection env, as experiment=month's
    env = training_env(cfg, config)
    assert [r.name for r in env.regimes][:2] == ["hectic_fresh", "hectic_D900"] and len(env.regimes) == 8
    _, st = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.PRNGKey(0), 64), env.default_params)
    assert len(set(np.asarray(st.day.regime).tolist())) > 3  # one batch, many regimes
    tr.train(cfg)
    pol = NumpyPolicy.load(run / "final_model.npz")
    assert pol.obs_dim == env.obs_dim and (run / "best.json").exists()
    assert "train/value_loss" in scalar_tags(run / "tb" / "learned_1")


@pytest.mark.e2e
def test_tiny_mixed_run_scales_each_regime_by_its_own_return_std(tmp_path):
    """algo.reward_norm=regime: one running return statistic per regime, each fed by its own days only."""
    import jax

    from gpu_sched_agents.rl.ppo_jax.config import hyper, training_env
    from gpu_sched_agents.rl.ppo_jax.ppo import make_train

    run = tmp_path / "mixed_regime"
    regime = ("day=mixed", "day.stock_mix=[fresh,900]", "algo.reward_norm=regime", "train.final_eval_seeds=0")
    many = ("train.n_envs=64", "train.total_timesteps=4096", "algo.batch_size=512")  # days of many regimes at once
    cfg = cfg_for(run, *regime, *many)
    env = training_env(cfg, tr.validate(cfg), records=False)
    hp = hyper(cfg)
    assert hp.reward_norm == "regime"
    trainer = make_train(hp, env, env.default_params)
    runner, _ = jax.jit(lambda k: trainer.run(trainer.init(k), 2))(jax.random.PRNGKey(0))
    var, count = np.asarray(runner.rstats.var), np.asarray(runner.rstats.count)
    assert var.shape == count.shape == (len(env.regimes),)
    played = count > 1  # regimes whose days were stepped: their own statistics, orders of magnitude apart
    assert played.sum() >= 3 and var[played].max() / var[played].min() > 10
    np.testing.assert_allclose(var[~played], 1.0)  # a regime never stepped keeps its start
    tr.train(cfg)  # and the whole run (selection, export) goes through with it
    assert (run / "final_model.npz").exists()


@pytest.mark.e2e
def test_tiny_run_in_the_when_design(tmp_path):
    """env=when: a two-action actor is exported and judged on CGRSP-v0 and in JAX (the rule on the joint twin).

    With algo.select_days (as experiment=ppo_jax_when): best_model is the evaluation
    lexicographic_pick ranks first on those JAX days against the rule played there.
    """
    import json

    from gpu_sched_agents.rl.ppo_jax.config import training_env
    from gpu_sched_agents.rl.ppo_jax.constraint import lexicographic_pick, rule_miss_pct

    run = tmp_path / "when"
    cfg = cfg_for(run, "env=when", "algo.select_days=3", "train.total_timesteps=512")
    tr.train(cfg)
    curve = pd.read_csv(run / "learning_curve.csv")
    assert len(curve) == 4 and curve.select_mean_wait_min.notna().all()
    env = training_env(cfg, tr.validate(cfg), records=False)
    evals = pd.DataFrame({"mean_wait_min": curve.select_mean_wait_min, "miss_pct": curve.select_miss_pct})
    pick = lexicographic_pick(evals, rule_miss_pct(env.rule_env, "spt_rescue_defer_exp", 3))
    best = json.loads((run / "best.json").read_text())
    assert best["timesteps"] == int(curve.timesteps[pick])
    assert best["select_key"][-1] == pytest.approx(curve.select_mean_wait_min[pick])
    assert {"select/mean_wait_min", "select/miss_pct"} <= scalar_tags(run / "tb" / "learned_1")
    pol = NumpyPolicy.load(run / "final_model.npz")
    assert pol.n_actions == 2
    final = pd.read_csv(run / "final_eval.csv")
    assert {"ppo_jax", "spt_rescue_defer_exp"} <= set(final.policy)
    jax_table = pd.read_csv(run / "final_eval_jax.csv")
    rule = jax_table[jax_table.metric == "mean_wait_min"].rule.iloc[0]
    # the rule played on the joint twin: its wait on the first quiet test days, not a two-action misreading
    from gpu_sched_agents.rl.ppo_jax.jax_eval import per_day, test_keys
    from gpu_sched_env.cgrsp.jax import RULES, JaxCGRSP

    twin = JaxCGRSP.from_config(tr.validate(cfg_for(run, "env=when")).replace(action_mode="joint"), records=False)
    want = per_day(twin, {"r": RULES["spt_rescue_defer_exp"]}, test_keys(4)).mean_wait_min.mean()
    assert rule == pytest.approx(want, rel=1e-6)
    # gpu-sched evaluate plays a two-action export in the when design; the joint env refuses it
    from gpu_sched_agents.evaluate.policy import resolve
    from gpu_sched_env.cgrsp.env import CGRSPEnv

    assert resolve(str(run / "final_model.npz")).config.action_mode == "when"
    with pytest.raises(ConfigError, match="ppo_jax policy has 2 actions, the env 16: it was trained on another"):
        pol.bind(CGRSPEnv(twin.cfg))


def test_gpu_asked_without_one_is_a_clear_error(tmp_path):
    import jax

    try:
        jax.devices("gpu")
        pytest.skip("this machine has a GPU")
    except RuntimeError:
        pass
    with pytest.raises(ConfigError, match="train.device = 'gpu': JAX finds no gpu backend"):
        tr.train(cfg_for(tmp_path / "r", "train.device=gpu"))


@pytest.mark.e2e
def test_tiny_run_writes_the_run_folder_tags_and_resumes_exactly(tmp_path):
    whole, half = tmp_path / "whole", tmp_path / "half"
    out = tr.train(cfg_for(whole))
    assert set(out) == {"miss_pct", "mean_wait_min", "mean_tardiness_min", "cost_usd"}
    for f in (
        "config.yaml",
        "command.txt",
        "final_model.npz",
        "best_model.npz",
        "best.json",
        "final_eval.csv",
        "final_eval.md",
        "final_eval.png",
        "final_eval_per_seed.csv",
        "final_eval_tests.csv",
        "learning_curve.csv",
        "learning_curve.png",
        "final_eval_jax.csv",
        "final_eval_jax.md",
    ):
        assert (whole / f).exists(), f
    assert sorted(p.name for p in (whole / "checkpoints").glob("model_*")) == [  # each runner beside its state
        "model_128_steps.npz",
        "model_128_steps.state",
        "model_256_steps.npz",
        "model_256_steps.state",
    ]
    curve = pd.read_csv(whole / "learning_curve.csv")
    assert curve.timesteps.tolist() == [128, 256]
    learned = scalar_tags(whole / "tb" / "learned_1")
    assert {
        "eval/miss_pct",
        "eval/mean_wait_min",
        "eval/mean_tardiness_min",
        "eval/cost_usd",
        "eval/objective",
        "train/value_loss",
        "train/policy_gradient_loss",
        "train/entropy_loss",
        "train/approx_kl",
        "time/fps",
    } <= learned
    heur = sorted(p.name for p in (whole / "tb").glob("heuristic_*"))
    assert len(heur) == 11 + len(EXTENSIONS) and f"heuristic_{STRONG_RULES['fresh']}" in heur
    assert "eval/miss_pct" in scalar_tags(whole / "tb" / "heuristic_rh")
    table = pd.read_csv(whole / "final_eval.csv")
    assert {"ppo_jax", "fifo", STRONG_RULES["fresh"]} <= set(table.policy)
    jax_table = pd.read_csv(whole / "final_eval_jax.csv")
    assert set(jax_table.vs) == {"spt_rescue_defer_exp"} and (jax_table.n == 4).all()
    assert (jax_table.ci_low <= jax_table["diff"]).all() and (jax_table["diff"] <= jax_table.ci_high).all()
    policy = load_model("ppo_jax", whole / "best_model.zip")  # the registry resolves the export beside the name
    assert isinstance(policy, NumpyPolicy) and policy.n_actions == 16

    # half the budget, then resume=true to the whole: the same updates, the same network (with a
    # constant rate: a decaying one is stretched over the budget each invocation is given, as in SB3)
    tr.train(
        cfg_for(half / "a", "train.total_timesteps=128", "train.final_eval_seeds=0")
    )  # no tables: the network is compared
    assert sorted(p.name for p in (half / "a" / "checkpoints").glob("model_*.npz")) == ["model_128_steps.npz"]
    tr.train(cfg_for(half / "b", "resume=true", "train.final_eval_seeds=0"))
    assert sorted(p.name for p in (half / "a" / "checkpoints").glob("model_*.npz")) == [
        "model_128_steps.npz",
        "model_256_steps.npz",
    ]
    assert (half / "b" / "resumed_into.txt").read_text().strip() == str(half / "a")
    a, b = np.load(whole / "final_model.npz"), np.load(half / "a" / "final_model.npz")
    for k in a.files:
        np.testing.assert_array_equal(a[k], b[k])
    assert pd.read_csv(half / "a" / "learning_curve.csv").timesteps.tolist() == [128, 256]
    with pytest.raises(ConfigError, match="trained under another config; differing keys: algo.ent_coef"):
        tr.train(cfg_for(half / "c", "resume=true", "algo.ent_coef=0.5"))


@pytest.mark.e2e
def test_the_selection_runs_on_its_own_schedule_beside_the_cgrsp_v0_evaluations(tmp_path):
    """algo.select_every < train.eval_freq: every selection point ranks, eval/* only at the evaluations."""
    import json

    from gpu_sched_agents.rl.ppo_jax.config import training_env
    from gpu_sched_agents.rl.ppo_jax.constraint import lexicographic_pick, rule_miss_pct

    run = tmp_path / "main"
    tiny = ["algo=ppo_jax" if x == "experiment=ppo_jax_joint" else x for x in TINY]
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=[
                *tiny,
                f"run_dir={run}",
                "algo.select_days=3",
                "algo.select_every=128",
                "train.eval_freq=256",
                "train.total_timesteps=512",
            ],
        )
    tr.train(cfg)
    curve = pd.read_csv(run / "learning_curve.csv").sort_values("timesteps").reset_index(drop=True)
    assert curve.timesteps.tolist() == [128, 256, 384, 512] and curve.select_mean_wait_min.notna().all()
    assert curve.mean_wait_min.notna().tolist() == [False, True, False, True]
    env = training_env(cfg, tr.validate(cfg), records=False)
    evals = pd.DataFrame({"mean_wait_min": curve.select_mean_wait_min, "miss_pct": curve.select_miss_pct})
    pick = lexicographic_pick(evals, rule_miss_pct(env.rule_env, "spt_rescue_defer_exp", 3))
    assert json.loads((run / "best.json").read_text())["timesteps"] == int(curve.timesteps[pick])
    assert (run / "learning_curve.png").stat().st_size > 0


@pytest.mark.e2e
def test_the_second_stage_replays_the_best_evaluations_and_picks_on_both_stages_pooled(tmp_path):
    """algo.recheck_days: the best algo.recheck_top actors kept, replayed at the end; best_model is the pooled pick."""
    import json

    from gpu_sched_agents.rl.ppo_jax.config import training_env
    from gpu_sched_agents.rl.ppo_jax.constraint import best_by_key, lexicographic_pick, rule_miss_pct
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, learned_rule, per_day, test_keys

    run = tmp_path / "main"
    over = ["algo.select_days=3", "algo.select_every=128", "train.total_timesteps=640"]
    cfg = cfg_for(run, *over, "algo.recheck_days=4", "algo.recheck_top=2")
    tr.train(cfg)
    table = pd.read_csv(run / "select_candidates.csv").set_index("steps")
    assert table.index.tolist() == [128, 256, 384, 512, 640] and table.picked.sum() == 1
    env = training_env(cfg, tr.validate(cfg), records=False)
    top = best_by_key(table, rule_miss_pct(env, "spt_rescue_defer_exp", 3), 2)
    assert table.recheck_wait_min.notna().sum() == 2 and table.recheck_wait_min[top].notna().all()
    assert sorted(int(p.stem.removeprefix("model_")) for p in (run / "candidates").glob("*.npz")) == sorted(top)
    pick = int(table.index[table.picked][0])
    for steps in top:  # the second stage's numbers are the candidate's own on the 4 days after the first 3
        mine = per_day(
            env,
            {"p": learned_rule(env, NumpyPolicy.load(run / "candidates" / f"model_{steps}.npz"))},
            test_keys(4, SELECT_SEED0 + 3),
        )
        assert table.recheck_wait_min[steps] == pytest.approx(mine.mean_wait_min.mean())
        pooled = (3 * table.mean_wait_min[steps] + 4 * mine.mean_wait_min.mean()) / 7
        assert table.pooled_wait_min[steps] == pytest.approx(pooled)
    done = table.loc[top]
    evals = pd.DataFrame({"mean_wait_min": done.pooled_wait_min, "miss_pct": done.pooled_miss_pct})
    assert pick == lexicographic_pick(evals, float(table.pooled_rule_miss_pct.iloc[0]))
    best = json.loads((run / "best.json").read_text())
    assert best["timesteps"] == pick and best["recheck"]["days"] == 4 and best["recheck"]["evaluations"] == 5
    with np.load(run / "best_model.npz") as a, np.load(run / "candidates" / f"model_{pick}.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files)
    stamp = (run / "best.json").stat().st_mtime_ns
    tr.train(cfg)  # resumed at the end of the budget: the second stage is not redone
    assert (run / "best.json").stat().st_mtime_ns == stamp


TWO_REGIMES = ["quiet_fresh", "quiet_D300"]


def trained_on_two_regimes(tmp_path, *extra):
    """A tiny algo=ppo_jax run selecting on TWO_REGIMES (2 days, every 128 of 512 steps): run, cfg, envs, rules."""
    from gpu_sched_agents.rl.ppo_jax.config import selection_regimes
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, rule_regime_means, test_keys

    run = tmp_path / "main"
    tiny = ["algo=ppo_jax" if x == "experiment=ppo_jax_joint" else x for x in TINY]
    over = [f"run_dir={run}", "algo.select_days=2", "algo.select_every=128", "train.total_timesteps=512"]
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        cfg = compose(
            config_name="config", overrides=[*tiny, *over, f"algo.select_regimes=[{','.join(TWO_REGIMES)}]", *extra]
        )
    tr.train(cfg)
    envs = selection_regimes(cfg, tr.validate(cfg))
    return run, cfg, envs, rule_regime_means(envs, "spt_rescue_defer_exp", test_keys(2, SELECT_SEED0))


@pytest.mark.e2e
def test_selection_on_several_regimes_keeps_the_checkpoint_whose_worst_regime_is_best(tmp_path):
    """algo.select_regimes: every selection plays each regime's days; best.json is the worst-regime minimum."""
    import json

    from gpu_sched_agents.rl.ppo_jax.constraint import GENERALIST_MARGIN, worst_regime_pick

    run, cfg, envs, rules = trained_on_two_regimes(tmp_path)
    curve = pd.read_csv(run / "learning_curve.csv").sort_values("timesteps").reset_index(drop=True)
    assert curve.timesteps.tolist() == [128, 256, 384, 512]
    evals = curve.rename(columns=lambda c: c.removeprefix("select_"))
    assert sorted(envs) == sorted(TWO_REGIMES) and envs["quiet_D300"].sim_params.stock_process == "markov"
    pick = worst_regime_pick(evals, rules, *GENERALIST_MARGIN)
    best = json.loads((run / "best.json").read_text())
    assert best["timesteps"] == int(curve.timesteps[pick]) and len(best["select_key"]) == 2
    assert {f"select/{r}_{m}" for r in TWO_REGIMES for m in ("wait", "miss")} <= scalar_tags(run / "tb" / "learned_1")


@pytest.mark.e2e
def test_the_worst_regime_pick_has_a_second_stage_too(tmp_path):
    """algo.select_regimes with algo.recheck_days: the best actors by the worst regime replayed on every regime."""
    import json

    from gpu_sched_agents.rl.ppo_jax.constraint import GENERALIST_MARGIN, best_by_worst_regime, worst_regime_pick
    from gpu_sched_agents.rl.ppo_jax.jax_eval import SELECT_SEED0, rule_regime_means, test_keys

    run, cfg, envs, rules = trained_on_two_regimes(tmp_path, "algo.recheck_days=3", "algo.recheck_top=2")
    table = pd.read_csv(run / "select_candidates.csv").set_index("steps")
    assert table.index.tolist() == [128, 256, 384, 512] and table.picked.sum() == 1
    top = best_by_worst_regime(table, rules, *GENERALIST_MARGIN, 2)
    assert table.recheck_quiet_D300_wait.notna().sum() == 2 and table.recheck_quiet_fresh_miss[top].notna().all()
    assert sorted(int(p.stem.removeprefix("model_")) for p in (run / "candidates").glob("*.npz")) == sorted(top)
    more = rule_regime_means(envs, "spt_rescue_defer_exp", test_keys(3, SELECT_SEED0 + 2))
    pooled = {r: ((2 * rules[r][0] + 3 * more[r][0]) / 5, (2 * rules[r][1] + 3 * more[r][1]) / 5) for r in envs}
    assert table.pooled_quiet_D300_rule_wait.iloc[0] == pytest.approx(pooled["quiet_D300"][0])
    cols = {f"pooled_{r}_{m}": f"{r}_{m}" for r in envs for m in ("wait", "miss")}
    pick = int(table.index[table.picked][0])
    assert pick == worst_regime_pick(table.loc[top, list(cols)].rename(columns=cols), pooled, *GENERALIST_MARGIN)
    best = json.loads((run / "best.json").read_text())
    assert best["timesteps"] == pick and best["recheck"]["evaluations"] == 4
    assert "pooled_quiet_fresh_wait" in best["recheck"]
    with np.load(run / "best_model.npz") as a, np.load(run / "candidates" / f"model_{pick}.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files)
