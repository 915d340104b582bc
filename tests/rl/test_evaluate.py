"""``gpu-sched evaluate``: every POLICY kind resolves and plays, bad input is refused before anything is written,
the report's files and schema, the leaderboard page rebuilt from its stored reports."""

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gpu_sched_agents.evaluate import leaderboard
from gpu_sched_agents.evaluate.cli import main
from gpu_sched_agents.evaluate.policy import resolve
from gpu_sched_agents.evaluate.report import SCHEMA, TOP_KEYS
from gpu_sched_agents.heuristics.cgrsp import EXTENSIONS
from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.core.store import REFERENCE_CACHE

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--seeds", "2", "--regimes", "surge_fresh", "--month-reps", "0", "--workers", "1"]
FIRST_LEGAL = textwrap.dedent("""
    import numpy as np

    class FirstLegal:
        name = "first_legal"

        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return int(np.flatnonzero(obs["action_mask"])[0]), state

    class NoPredict:
        pass

    class OwnFifo:  # the simulator's protocol, as simulate() takes it: reset(view, rng) and decide(view)
        name = "own_fifo"

        def reset(self, view, rng):
            pass

        def decide(self, view):
            return list(zip(list(view.waiting), view.idle_slots()))
""")


def _sb3_zip(path, algo="ppo", config=None):
    from gpu_sched_agents.rl.registry import ALGOS

    spec = ALGOS[algo]
    env = CGRSPEnv(config or CGRSPEnvConfig(day="surge"))
    kw = {"n_steps": 8, "batch_size": 8} if algo.startswith("ppo") else {"learning_starts": 0}
    spec.cls(spec.policy, env, policy_kwargs={"net_arch": [8]}, device="cpu", seed=0, **kw).save(path)
    return path


def _npz(path):
    from gpu_sched_agents.rl.ppo_jax.export import save_policy
    from gpu_sched_env.cgrsp.jax.bench import joint_heads_config

    env = CGRSPEnv(joint_heads_config("surge"))
    width = sum(int(np.prod(s.shape)) for k, s in env.observation_space.spaces.items() if k != "action_mask")
    n = int(env.action_space.n)
    rng = np.random.default_rng(0)
    params = {
        "pi_0": {"kernel": rng.normal(0, 0.1, (width, 8)), "bias": np.zeros(8)},
        "pi_out": {"kernel": rng.normal(0, 0.1, (8, n)), "bias": np.zeros(n)},
    }
    return save_policy(path, {"params": params}, width, n)


@pytest.fixture
def own_module(tmp_path, monkeypatch):
    (tmp_path / "my_policies.py").write_text(FIRST_LEGAL)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_policies"


@pytest.mark.e2e
def test_a_rule_quick_end_to_end_writes_the_report(tmp_path):
    from gpu_sched_env.cgrsp.batch import run_grid

    out = tmp_path / "rep"
    assert main(["spt_rescue_defer_exp", "--quick", "--out", str(out), "--workers", "1"]) == 0
    assert {p.name for p in out.iterdir()} >= {"report.md", "report.json", "report.png", "days"}
    assert (out / "report.png").stat().st_size > 10_000
    r = json.loads((out / "report.json").read_text())
    assert r["schema"] == SCHEMA and set(TOP_KEYS) <= set(r)
    assert r["protocol"]["name"] == "quick" and list(r["scopes"]) == ["hectic_fresh"] and r["jax"] is None
    s = r["scopes"]["hectic_fresh"]
    assert s["unit"] == "day" and s["n"] == 5 and s["best_rule"] in EXTENSIONS
    assert set(s["bounds"]) == {"all_high", "no_delay", "srpt"} and set(s["rules"]) == set(EXTENSIONS)
    own = run_grid(["spt_rescue_defer_exp"], range(20000, 20005), day="hectic", executor="serial")
    assert s["policy"]["mean_wait_min"] == pytest.approx(own.mean_wait_min.mean())
    b = s["bounds"]
    assert b["srpt"]["mean_wait_min"] < b["no_delay"]["mean_wait_min"] < s["policy"]["mean_wait_min"]
    test = s["vs_best_rule"]["mean_wait_min"]
    assert test["ci_low"] <= test["diff"] <= test["ci_high"] and test["t_p"] <= test["t_p_holm"] <= 1
    assert s["verdict"] in ("better", "worse", "no significant difference")
    assert "hectic_fresh" in (out / "report.md").read_text()


@pytest.mark.e2e
def test_every_policy_kind_resolves(tmp_path, own_module):
    from hydra_conf import cfg_for
    from omegaconf import OmegaConf

    assert resolve("cadr").kind == "rule" and resolve("rollout").kind == "rule"
    z = resolve(str(_sb3_zip(tmp_path / "m.zip")))
    assert (z.kind, z.algo, z.masked) == ("sb3", "ppo", True)
    d = resolve(str(_sb3_zip(tmp_path / "q.zip", "dqn")))
    assert (d.kind, d.algo) == ("sb3", "dqn")
    n = resolve(str(_npz(tmp_path / "p.npz")))
    assert (n.kind, n.jax) == ("npz", True)
    o = resolve(f"{own_module}:FirstLegal")
    assert (o.kind, o.label) == ("object", "first_legal")
    run = tmp_path / "run"
    run.mkdir()
    cfg = cfg_for("algo=ppo", "env.window=4")
    OmegaConf.save(cfg, run / "config.yaml")
    from gpu_sched_agents.rl.envs import env_config

    _sb3_zip(run / "final_model.zip", config=env_config(cfg))
    r = resolve(str(run))
    assert (r.kind, r.algo, r.model_path.name) == ("run", "ppo", "final_model.zip")


@pytest.mark.e2e
def test_learned_policies_play_the_protocol(tmp_path, own_module):
    from gpu_sched_env.cgrsp.evaluation import evaluate

    mod = __import__(own_module)
    out = tmp_path / "obj"
    assert main([f"{own_module}:FirstLegal", "--out", str(out), *SMALL]) == 0
    s = json.loads((out / "report.json").read_text())["scopes"]["surge_fresh"]
    direct = evaluate(mod.FirstLegal(), CGRSPEnvConfig(day="surge"), [20000, 20001])
    assert s["policy"]["mean_wait_min"] == pytest.approx(direct.mean_wait_min.mean())
    out = tmp_path / "zip"
    assert main([str(_sb3_zip(tmp_path / "m.zip")), "--out", str(out), *SMALL]) == 0
    r = json.loads((out / "report.json").read_text())
    assert r["policy"]["kind"] == "sb3" and r["scopes"]["surge_fresh"]["n"] == 2


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda p: "no_such_policy", "none of the accepted kinds"),
        (lambda p: (p / "x.txt").write_text("hi") and str(p / "x.txt"), "neither .zip"),
        (lambda p: (p / "x.zip").write_bytes(b"not a zip") and str(p / "x.zip"), "not a Stable-Baselines3 model"),
        (lambda p: np.savez(p / "x.npz", a=np.zeros(3)) or str(p / "x.npz"), "not an exported ppo_jax policy"),
        (lambda p: (p / "d").mkdir() or str(p / "d"), "without config.yaml"),
        (lambda p: "no_such_module_xyz:thing", "does not import"),
        (lambda p: "my_policies:NoPredict", "policy protocol"),
        (lambda p: "my_policies:Missing", "has no attribute"),
        (
            lambda p: str(_sb3_zip(p / "w.zip", config=CGRSPEnvConfig(day="surge", window=4))),
            "not a model of this env",
        ),
    ],
)
def test_bad_policies_are_refused_before_anything_is_written(tmp_path, own_module, capsys, make, says):
    given = make(tmp_path)
    out = tmp_path / "out"
    assert main([given, "--out", str(out), *SMALL]) == 2
    err = capsys.readouterr().err
    assert says in err and str(given) in err
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--regimes", "nowhere"], "regime = 'nowhere' is not known; allowed: hectic_fresh"),
        (["--seeds", "1"], "seeds = 1"),
        (["--month-reps", "1"], "month_reps = 1"),
        (["--trace", "missing.csv"], "--trace 'missing.csv': no such file"),
        (["--model", "x.zip"], "only for a run folder"),
    ],
)
def test_bad_options_are_refused_before_anything_is_written(tmp_path, capsys, argv, says):
    out = tmp_path / "out"
    assert main(["cadr", "--out", str(out), *argv]) == 2
    assert says in capsys.readouterr().err
    assert not out.exists()


def test_gpu_sched_runs_evaluate_as_a_plugin_of_the_agents_layer(capsys):
    from gpu_sched_agents.evaluate import cli
    from gpu_sched_env.cli import GPU_SCHED
    from gpu_sched_env.cli import main as gpu_sched
    from gpu_sched_env.core.commands import find

    _, evaluate = find(GPU_SCHED, ["evaluate"])
    assert evaluate.load() is cli.main
    with pytest.raises(SystemExit) as e:
        gpu_sched(["evaluate", "--help"])
    assert e.value.code == 0 and "--leaderboard" in capsys.readouterr().out


def test_the_leaderboard_page_is_rebuilt_from_its_stored_reports(tmp_path):
    stored = ROOT / "docs" / "leaderboard"
    page = leaderboard.build(stored, tmp_path / "leaderboard.md")
    assert page.read_text() == (ROOT / "docs" / "leaderboard.md").read_text(), (
        "docs/leaderboard.md is stale: gpu-sched evaluate --leaderboard docs/leaderboard"
    )
    reports = leaderboard.load(stored)
    standard = {r["policy"]["label"] for r in reports if r["protocol"]["name"] == "standard"}
    assert set(EXTENSIONS) <= standard  # every deferring rule on the standard protocol
    assert all(r["policy"]["label"] in page.read_text() for r in reports)


def test_the_leaderboard_never_ranks_two_protocols_together(tmp_path):
    r = json.loads(next((ROOT / "docs" / "leaderboard").glob("*.json")).read_text())
    other = json.loads(json.dumps(r))
    other["protocol"].update(name="custom", seeds=10)
    other["policy"]["label"] = "reduced_one"
    for i, x in enumerate((r, other)):
        (tmp_path / f"{i}.json").write_text(json.dumps(x))
    text = leaderboard.page(leaderboard.load(tmp_path))
    assert "## The standard protocol" in text and "## Reduced protocol (custom): 10 test seeds" in text
    std, red = text.split("## Reduced protocol")
    assert "reduced_one" in red and "reduced_one" not in std


def test_the_rules_days_are_stored_once_and_served_equal_to_fresh_ones(tmp_path, monkeypatch):
    """The reference store: a seed is simulated once per code version; what it serves equals a fresh run."""
    import pandas as pd

    from gpu_sched_agents.evaluate import protocol as P
    from gpu_sched_env.cgrsp.stock import stock_params

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(P, "_REFERENCE", {})
    params, seeds = stock_params("900"), [20000, 20001, 20002]
    monkeypatch.setenv(REFERENCE_CACHE, "0")
    fresh = P.reference_rows("quiet", params, seeds, 1)
    assert not (tmp_path / "cache").exists() and len(fresh) == 3 * (len(EXTENSIONS) + 3)
    monkeypatch.delenv(REFERENCE_CACHE)
    calls, compute = [], P._compute_reference
    monkeypatch.setattr(P, "_compute_reference", lambda d, p, s, w: calls.append(list(s)) or compute(d, p, s, w))

    def rows(s):
        P._REFERENCE.clear()  # a new process: only the store remembers
        return P.reference_rows("quiet", params, s, 1)

    rows(seeds[:2])
    pd.testing.assert_frame_equal(rows(seeds), fresh)  # two seeds served, one simulated, in the fresh order
    pd.testing.assert_frame_equal(rows(seeds), fresh)
    assert calls == [seeds[:2], seeds[2:]]
    assert len(rows([20000]).seed.unique()) == 1 and calls == [seeds[:2], seeds[2:]]
    other = dict(params, stock_dwell_s=300.0)  # other parameters: other cells
    P._REFERENCE.clear()
    P.reference_rows("quiet", other, seeds[:1], 1)
    monkeypatch.setattr(P, "REFERENCE_SOURCES", P.REFERENCE_SOURCES[1:])  # another code version: nothing served
    rows(seeds[:1])
    assert calls[2:] == [seeds[:1], seeds[:1]]


@pytest.mark.e2e
def test_an_exported_ppo_jax_policy_resolves_through_the_registry_without_pytorch(tmp_path):
    """The registry names SB3's classes and imports them when read: an export loads with NumPy alone."""
    import subprocess
    import sys

    path = _npz(tmp_path / "p.npz")
    code = (
        "import sys\n"
        "from gpu_sched_agents.evaluate.policy import resolve\n"
        "from gpu_sched_agents.rl.registry import get_algo\n"
        f"pol = resolve({str(path)!r})\n"
        "assert pol.masked and type(pol.model).__name__ == 'NumpyPolicy', pol\n"
        "assert get_algo('ppo').sb3 == 'sb3_contrib:MaskablePPO'\n"
        "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules))\n"
        "get_algo('ppo').cls\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["[]", "True"]  # nothing of PyTorch until an SB3 class is asked for


@pytest.mark.parametrize("trained", [{}, {"stock_process": "markov", "stock_dwell_s": 900.0}])
def test_a_learner_plays_each_scopes_stock_model_whatever_it_was_trained_under(trained):
    """A run trained under Markov stock plays the fresh-stock scopes under fresh stock (and the
    reverse); its other parameters stay. The env config once merged the scope's params into the run's."""
    from gpu_sched_agents.evaluate.policy import Policy, env_for
    from gpu_sched_env.cgrsp.stock import stock_params

    config = CGRSPEnvConfig(day="hectic", params={"c_max": 5, **trained})
    pol = Policy(spec="run", kind="run", label="run", config=config)
    fresh, markov = env_for(pol, "surge", stock_params("fresh")), env_for(pol, "surge", stock_params("900"))
    assert fresh.day == markov.day == "surge"
    assert fresh.sim_params().stock_process == "fresh" and markov.sim_params().stock_process == "markov"
    assert markov.sim_params().stock_dwell_s == 900.0
    assert fresh.params == {"c_max": 5} and fresh.sim_params().c_max == 5


def test_a_model_retrained_into_the_same_path_is_never_served_the_old_days(tmp_path):
    """--out's days/ are reused only for the same policy: the key holds the model's bytes, not only its path."""
    import shutil

    a, b, path = _npz(tmp_path / "a.npz"), tmp_path / "b.npz", tmp_path / "m.npz"
    arrays = dict(np.load(a))
    np.savez(b, **{**arrays, "pi_0/kernel": -arrays["pi_0/kernel"]})  # another network of the same shape
    shutil.copy(a, path)
    first = resolve(str(path), load=False)
    key = first.fingerprint()
    assert resolve(str(path), load=False).fingerprint() == key  # the same file: the same days
    shutil.copy(b, path)
    again = resolve(str(path), load=False)
    assert again.describe() == first.describe()  # what the old key held: the path alone
    assert again.fingerprint() != key  # retrained in place: nothing reused


def test_an_object_of_the_simulators_protocol_is_played_by_the_simulator(tmp_path, own_module):
    from gpu_sched_env.cgrsp import simulate

    mod = __import__(own_module)
    pol = resolve(f"{own_module}:OwnFifo")
    assert (pol.kind, pol.label, pol.simulated) == ("object", "own_fifo", True)
    out = tmp_path / "own"
    assert main([f"{own_module}:OwnFifo", "--out", str(out), *SMALL]) == 0
    s = json.loads((out / "report.json").read_text())["scopes"]["surge_fresh"]
    direct = [simulate(mod.OwnFifo(), day="surge", seed=seed).summary()["mean_wait_min"] for seed in (20000, 20001)]
    assert s["policy"]["mean_wait_min"] == pytest.approx(np.mean(direct))
    fifo = [simulate("fifo", day="surge", seed=seed).summary()["mean_wait_min"] for seed in (20000, 20001)]
    assert np.mean(direct) == pytest.approx(np.mean(fifo))  # first come, lowest idle slot first: FIFO's dispatch


def test_an_object_of_neither_protocol_is_refused_naming_both(own_module):
    from gpu_sched_env.core.errors import ConfigError

    with pytest.raises(ConfigError, match=r"neither policy protocol.*reset\(view, rng\) and decide\(view\).*predict"):
        resolve(f"{own_module}:NoPredict")
