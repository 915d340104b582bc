"""``train.py scenario=hgsp|llm|mig|edge algo=ppo``: the CGRSP run folder, final table, tags and resume rules."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

import gpu_sched_agents.rl.entry as tr
import gpu_sched_agents.rl.train as cgrsp_train
from gpu_sched_agents.rl.compose import compose_config
from gpu_sched_agents.rl.rundir import record_before
from gpu_sched_agents.rl.scenarios import SPECS, env_config
from gpu_sched_env.core.errors import ConfigError
from tests.rl.helpers import TINY_PPO

TINY = [
    "train.total_timesteps=128",
    "train.n_envs=1",
    "train.eval_freq=128",
    "train.checkpoint_freq=64",
    "train.eval_seeds=[10000]",
    "train.final_eval_seeds=2",
    "train.progress_bar=false",
    *TINY_PPO,
]
SMALL = {  # short episodes: a few hundred steps are several episodes
    "hgsp": ["scenario.env.n_tasks=20"],
    "llm": ["scenario.env.n_requests=10"],
    "mig": ["scenario.env.n_jobs=10"],
    "edge": ["scenario.env.n_tasks=8"],
}
RUN_FILES = {
    "config.yaml",
    "command.txt",
    "checkpoints",
    "best_model.zip",
    "best.json",
    "final_model.zip",
    "learning_curve.csv",
    "learning_curve.png",
    "tb",
    *(f"final_eval{x}" for x in (".csv", ".md", ".png", "_per_seed.csv", "_tests.csv")),
}


def cfg(scenario: str, *overrides: str):
    return compose_config(f"scenario={scenario}", *SMALL.get(scenario, []), *TINY, *overrides)


@pytest.mark.e2e
@pytest.mark.parametrize("scenario", list(SPECS))
def test_a_tiny_run_writes_cgrsps_folder_and_resumes(tmp_path, scenario):
    spec = SPECS[scenario]
    family = tmp_path / f"ppo_{scenario}_seed0"
    run = family / "t1"
    means = tr.train(cfg(scenario, f"run_dir={run}"))
    assert RUN_FILES <= {p.name for p in run.iterdir()}
    assert yaml.safe_load((run / "config.yaml").read_text())["scenario"]["name"] == scenario
    # final_eval: the learner and every env-agent heuristic of the registry on the same two test seeds
    table = pd.read_csv(run / "final_eval.csv").set_index("policy")
    assert list(table.index) == ["ppo", *spec.heuristics]
    assert set(spec.heuristics) | set(spec.left_out) == set(_registry(scenario).names())
    per_seed = pd.read_csv(run / "final_eval_per_seed.csv")
    assert {p: sorted(g.seed) for p, g in per_seed.groupby("policy")} == {
        p: [20_000, 20_001] for p in ("ppo", *spec.heuristics)
    }
    assert means["objective"] == pytest.approx(table.loc["ppo", "objective"])
    tests = pd.read_csv(run / "final_eval_tests.csv")
    assert set(tests.vs) == set(spec.heuristics) and set(tests.metric) == {"objective", spec.metrics[0]}
    # TensorBoard: the learner's run and one run per heuristic, each with an event file
    for name in ("learned_1", *(f"heuristic_{h}" for h in spec.heuristics)):
        assert list((run / "tb" / name).glob("events.out.tfevents.*")), name
    curve = pd.read_csv(run / "learning_curve.csv")
    assert {"timesteps", "objective", *spec.metrics} <= set(curve.columns)
    # resume: the latest run of the family continues from its last checkpoint to the larger budget
    t2 = family / "t2"
    tr.train(cfg(scenario, "resume=true", "train.total_timesteps=192", "train.final_eval_seeds=0", f"run_dir={t2}"))
    assert (t2 / "resumed_into.txt").read_text().strip() == str(run)
    assert len((run / "command.txt").read_text().splitlines()) == 2
    assert (run / "checkpoints" / "model_192_steps.zip").exists()
    # a resume under another env setting is refused, naming the key
    with pytest.raises(ConfigError, match=r"differing keys: .*scenario\.env"):
        tr.train(cfg(scenario, "resume=true", *_other_env(scenario), f"run_dir={family / 't3'}"))


def _registry(scenario: str):
    import importlib

    return importlib.import_module(f"gpu_sched_env.{scenario}.policies").POLICIES


def _other_env(scenario: str) -> list[str]:
    return {
        "hgsp": ["scenario.env.n_tasks=21"],
        "llm": ["scenario.env.n_requests=11"],
        "mig": ["scenario.env.n_jobs=11"],
        "edge": ["scenario.env.n_tasks=9"],
    }[scenario]


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        (["day=surge"], r"day = 'surge' with scenario=hgsp: the day group .* is CGRSP-only; allowed: none"),
        (["env=markov"], r"env = .* with scenario=hgsp: the env group .* is CGRSP-only"),
        (["experiment=markov"], r"with scenario=hgsp: the (day|env) group .* CGRSP-only"),
        (["algo=ppo_jax"], r"algo = 'ppo_jax' with scenario=hgsp: .*CGRSP-only; allowed: ppo"),
        (["algo=dqn"], r"algo = 'dqn' with scenario=hgsp: .*allowed: ppo"),
        (["algo.bc_teacher=edf"], r"algo.bc_teacher = 'edf' is CGRSP-only; allowed with scenario=hgsp: null"),
        (["algo.time_halflife_s=60"], r"algo.time_halflife_s = 60.0 is CGRSP-only"),
        (["scenario.env.decoder=nope"], r"decoder"),
        (["scenario.env.n_tasks=0"], r"n_tasks = 0"),
        (["train.n_envs=0"], r"train.n_envs = 0"),
        (["algo.features=scaled"], r"algo.features = 'scaled' is not known; allowed: flat, log1p"),
    ],
)
def test_cgrsp_only_and_bad_settings_are_refused_leaving_no_run_folder(tmp_path, overrides, needle):
    run = tmp_path / "fam" / "run"
    record_before(run)  # what RunDirRecorder does before Hydra makes the folder
    (run / ".hydra").mkdir(parents=True)
    with pytest.raises(ConfigError, match=needle):
        tr.train(compose_config("scenario=hgsp", *overrides, f"run_dir={run}"))
    assert not run.exists() and tmp_path.is_dir()


def test_a_misspelt_env_key_fails_when_the_config_is_composed():
    with pytest.raises(ConfigCompositionException, match="n_taks"):
        compose_config("scenario=hgsp", "scenario.env.n_taks=3")
    with pytest.raises(ConfigCompositionException):
        compose_config("scenario.env.n_tasks=3")  # scenario=cgrsp has no scenario.env: its settings are env=


def test_env_settings_come_from_the_scenarios_config_object():
    for name, spec in SPECS.items():
        assert env_config(compose_config(f"scenario={name}")).__dict__.keys() == spec.config_cls().__dict__.keys()
    c = env_config(compose_config("scenario=edge", "scenario.env.n_tasks=7", "+scenario.env.reward_weights.makespan=2"))
    assert (c.n_tasks, c.reward_weights) == (7, {"makespan": 2.0})


def test_the_default_is_cgrsp_and_its_config_is_unchanged():
    cgrsp, default = compose_config("scenario=cgrsp"), compose_config()
    assert default.scenario.name == "cgrsp" and set(default.scenario) == {"name"}
    assert OmegaConf.to_container(cgrsp, resolve=False) == OmegaConf.to_container(default, resolve=False)
    assert default.day.name == "hectic" and default.env.window == 1  # the Quickstart's day and env groups


def test_run_folders_are_named_by_scenario():
    from hydra import compose, initialize_config_dir

    from gpu_sched_agents.rl.compose import CONF
    from gpu_sched_agents.rl.config import register_configs

    register_configs()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        hgsp = compose(config_name="config", overrides=["scenario=hgsp"], return_hydra_config=True)
        plain = compose(config_name="config", overrides=["algo=ppo", "day=hectic"], return_hydra_config=True)
    assert hgsp.hydra.run.dir.startswith("runs/train/ppo_hgsp_seed0/")
    assert plain.hydra.run.dir.startswith("runs/train/ppo_hectic_seed0/")  # the Quickstart's folders


def test_a_cgrsp_run_written_before_scenarios_still_resumes(tmp_path):
    """An older run's config.yaml has no ``scenario`` key: it was CGRSP's, so it matches scenario=cgrsp."""
    c = compose_config("run_dir=/tmp/x")
    saved = OmegaConf.to_container(c, resolve=True)
    del saved["scenario"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(saved))
    cgrsp_train.check_same_run(c, Path(tmp_path))
    with pytest.raises(ConfigError, match="scenario.name"):
        cgrsp_train.check_same_run(compose_config("scenario=hgsp", "run_dir=/tmp/x"), Path(tmp_path))


@pytest.mark.parametrize("override", ["algo.features=log1p", "algo.place_first=true"])
def test_the_scenarios_learner_settings_are_refused_with_cgrsp(tmp_path, override):
    """CGRSP-v0's observation is a dict and its no-op is not always the last action: both stay the plain values."""
    run = tmp_path / "fam" / "run"
    record_before(run)
    (run / ".hydra").mkdir(parents=True)
    with pytest.raises(ConfigError, match=rf"algo.{override.split('=')[0][5:]} = .* allowed with CGRSP: "):
        tr.train(compose_config("algo=ppo", "day=hectic", override, f"run_dir={run}"))
    assert not run.exists()


def test_mig_trains_on_log_features_placing_each_job_at_its_poll():
    """The shipped MIG learner's design (conf/scenario/mig.yaml); the other scenarios keep the plain MLP."""
    assert (cfg("mig").algo.features, cfg("mig").algo.place_first) == ("log1p", True)
    assert len(compose_config("scenario=mig").train.eval_seeds) == 30
    for name in ("hgsp", "llm", "edge"):
        c = compose_config(f"scenario={name}")
        assert (c.algo.features, c.algo.place_first, len(c.train.eval_seeds)) == ("flat", False, 5)
