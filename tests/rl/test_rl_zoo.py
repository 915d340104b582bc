"""rl-baselines3-zoo trains plain PPO on CGRSP-v0 from conf/zoo/ppo.yml (docs/training.md, "rl-baselines3-zoo").

rl-zoo3 needs optuna>=3 and the lock holds optuna 2.10 (the sweep extra's hydra-optuna-sweeper
needs optuna<3), so the zoo never shares .venv: the end-to-end test builds a throwaway venv that
sees this interpreter's packages except optuna (linked, as tests/test_packaging.py does), installs
rl-zoo3 and its own optuna from PyPI into it, and runs the documented command at a tiny budget.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from tests.venvs import venv_seeing_site

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf" / "zoo" / "ppo.yml"
ZOO_VERSION = "2.9.2"  # the rl-zoo3 this test installs (within the zoo extra's range)
# what the zoo's venv must not see of this interpreter: the lock's optuna (<3) and what needs it,
# this project's own install (the checkout goes on the path instead) and .pth hooks
HIDDEN = re.compile(r"^(__editable__|optuna|hydra_optuna_sweeper|gpu_sched_env|gpu_sched_agents)([-._]|$)", re.I)


def _zoo_entry() -> dict:
    return yaml.safe_load(CONF.read_text())["CGRSP-v0"]


def test_the_zoo_file_is_train_py_s_plain_ppo_on_the_main_job():
    """Same learner and env design as `python train.py algo=ppo_unmasked` (its defaults, conf/env/default.yaml)."""
    from gpu_sched_agents.rl.config import PPOConfig

    hp = _zoo_entry()
    assert hp["policy"] == "MultiInputPolicy"  # CGRSP-v0's observation is a Dict
    ppo = PPOConfig()
    for key in ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range", "ent_coef"):
        assert float(hp[key]) == float(getattr(ppo, key)), key
    assert float(hp["vf_coef"]) == ppo.vf_coef and float(hp["max_grad_norm"]) == ppo.max_grad_norm
    assert hp["policy_kwargs"] == f"dict(net_arch={list(ppo.net_arch)})"
    train = yaml.safe_load((ROOT / "conf" / "train" / "default.yaml").read_text())
    assert hp["n_envs"] == train["n_envs"]
    assert eval(hp["normalize"]) == {"norm_obs": False, "norm_reward": bool(train["normalize_reward"])}
    env = yaml.safe_load((ROOT / "conf" / "env" / "default.yaml").read_text())
    env.pop("defaults")
    assert env.pop("shaping_gamma") == "${algo.gamma}" and hp["env_kwargs"]["shaping_gamma"] == ppo.gamma
    assert {k: v for k, v in hp["env_kwargs"].items() if k != "shaping_gamma"} == env


def test_the_zoo_extra_admits_the_tested_version():
    tomllib = pytest.importorskip("tomllib")
    (req,) = map(
        Requirement, tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["zoo"]
    )
    assert req.name == "rl_zoo3" and req.specifier.contains(ZOO_VERSION)


def _zoo_venv(path: Path) -> Path:
    """A fresh venv seeing this interpreter's packages but optuna and this project's; the checkout on its path."""
    return venv_seeing_site(path, HIDDEN, ROOT)


@pytest.mark.e2e
def test_rl_zoo3_trains_ppo_on_cgrsp_from_the_shipped_file(tmp_path):
    pytest.importorskip("stable_baselines3")
    python = _zoo_venv(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python), "install", "-q"]
    r = subprocess.run([*pip, f"rl_zoo3=={ZOO_VERSION}"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    # the documented command (docs/training.md) at a tiny budget: 2 envs x 64 steps, two updates
    cmd = [str(python), "-m", "rl_zoo3.train", "--algo", "ppo", "--env", "CGRSP-v0", "--gym-packages", "gpu_sched_env"]
    cmd += ["--conf-file", str(CONF), "-n", "256", "-params", "n_steps:64", "batch_size:64"]
    cmd += ["-f", str(tmp_path / "logs"), "--seed", "0", "--device", "cpu"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    optuna = subprocess.run(
        [str(python), "-c", "import optuna; print(optuna.__version__)"], capture_output=True, text=True
    )
    assert int(optuna.stdout.split(".")[0]) >= 3, optuna.stdout + optuna.stderr  # the zoo's own, not the lock's 2.10
    model = tmp_path / "logs" / "ppo" / "CGRSP-v0_1" / "CGRSP-v0.zip"
    assert model.is_file(), sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "logs").rglob("*"))

    # the saved model plays CGRSP-v0 in the main job's design (what env_kwargs says)
    from stable_baselines3 import PPO

    from gpu_sched_env.cgrsp.env import CGRSPEnv

    env = CGRSPEnv(**_zoo_entry()["env_kwargs"])
    loaded = PPO.load(model, device="cpu")
    assert loaded.observation_space == env.observation_space and loaded.action_space.n == env.action_space.n
    obs, _ = env.reset(seed=0)
    action, _ = loaded.predict(obs, deterministic=True)
    env.step(int(action))
