"""``gpu-sched evaluate --scenario S``: one protocol over the scenario table, its bad inputs and its leaderboards."""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from gpu_sched_agents.evaluate import bench, scenarios
from gpu_sched_agents.evaluate.cli import main
from gpu_sched_agents.evaluate.leaderboard import build_scenario
from gpu_sched_env.core.bounds import Bound
from gpu_sched_env.core.criteria import WORDS
from gpu_sched_env.core.scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parents[1]
OTHERS = ("hgsp", "llm", "mig", "edge")


def refused(capsys, argv: list[str]) -> str:
    """Run the command; it must exit 2 with one line on stderr and no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_one_row_per_scenario_in_the_table_order() -> None:
    assert tuple(scenarios.BENCHMARKS) == tuple(s.name for s in SCENARIOS)
    assert scenarios.BENCHMARKS["cgrsp"].protocol == "gpu_sched_agents.evaluate.protocol"
    for s in OTHERS:
        row = scenarios.benchmark(s)
        assert row.objective == row.metrics[0] and row.rule_names()
        assert sum(r.exact for r in row.regimes) == 1, f"{s}: one small regime for the exact solver"
        assert row.quick[0] in row.regime_names


# The protocol is one piece of code (bench.py over the scenario table): the fast tier plays it to its report
# for MIG, the cheapest; the other three scenarios' rows run through it in e2e (their rules and simulators
# have fast tests of their own, and test_leaderboard_page_is_current rebuilds each one's page from its reports).
QUICK_FAST = "mig"


@pytest.mark.parametrize("scenario", [s if s == QUICK_FAST else pytest.param(s, marks=pytest.mark.e2e) for s in OTHERS])
def test_quick_protocol_judges_against_the_best_rule(scenario, tmp_path, capsys) -> None:
    row = scenarios.benchmark(scenario)
    rule = row.rule_names()[-1]
    out = tmp_path / "out"
    argv = ["--scenario", scenario, rule, "--quick", "--seeds", "3", "--executor", "serial", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads((out / "report.json").read_text())
    (regime,) = report["scopes"]
    s = report["scopes"][regime]
    days = pd.read_csv(out / "days" / f"{regime}.csv")
    means = days[days.policy.isin(row.rule_names())].groupby("policy")[row.objective].mean()
    assert s["best_rule"] == means.idxmin() and s["verdict"] in WORDS
    mine = days[days.policy == bench.POLICY].sort_values("seed")[row.objective].to_numpy()
    assert s["policy"][row.objective]["mean"] == pytest.approx(mine.mean())
    assert sorted(days.seed.unique()) == [20_000, 20_001, 20_002]
    assert {"report.md", "report.png"} <= {p.name for p in out.iterdir()}
    assert main(argv) == 0 and f"{regime}: reused" in capsys.readouterr().out  # resumed per finished regime


def test_serial_and_process_give_identical_numbers(tmp_path) -> None:
    proto = bench.protocol("mig", True, 4, None)
    pol = bench.resolve("first_fit", "mig")
    bench._REFERENCE.clear()
    a = bench.run_regimes(pol, proto, {"executor": "serial", "progress": False})
    bench._REFERENCE.clear()
    b = bench.run_regimes(pol, proto, {"executor": "process", "workers": 2, "progress": False})
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
def test_ray_gives_the_serial_numbers() -> None:
    proto = bench.protocol("hgsp", True, 3, None)
    pol = bench.resolve("greedy", "hgsp")
    bench._REFERENCE.clear()
    a = bench.run_regimes(pol, proto, {"executor": "serial", "progress": False})
    bench._REFERENCE.clear()
    b = bench.run_regimes(pol, proto, {"executor": "ray", "workers": 2, "progress": False})
    pd.testing.assert_frame_equal(a, b)


class Mine:
    """A module:attr HGSP policy: FIFO's placement, written out (the earliest-start GPU)."""

    name = "mine"

    def reset(self, problem, rng) -> None:
        pass

    def decide(self, d) -> int:
        from gpu_sched_env.hgsp.sim import earliest_start_gpu

        return earliest_start_gpu(d.arrival, d.avail, d.p_row, d.gpus)


class Broken(Mine):
    """Returns a GPU index no cluster has."""

    def decide(self, d) -> int:
        return 99


def test_a_module_attr_object_plays_as_the_rule_it_copies(tmp_path) -> None:
    out = tmp_path / "o"
    argv = ["--scenario", "hgsp", f"{__name__}:Mine", "--quick", "--seeds", "3", "--executor", "serial"]
    assert main([*argv, "--out", str(out)]) == 0
    s = json.loads((out / "report.json").read_text())["scopes"]["tasks1_small"]
    assert s["policy"]["wt"]["mean"] == pytest.approx(s["rules"]["fifo"]["wt"]["mean"])


def test_bad_inputs_are_one_line(tmp_path, capsys) -> None:
    out = ["--out", str(tmp_path / "x"), "--executor", "serial"]
    assert "--scenario = 'cgrs'" in refused(capsys, ["--scenario", "cgrs", "fifo"])
    err = refused(capsys, ["--scenario", "mig", "best_fit", "--regimes", "tasks1_small", *out])
    assert "'tasks1_small'" in err and "jobs50" in err
    err = refused(capsys, ["--scenario", "mig", "sagreedy", *out])
    assert "not a registered mig rule" in err and "best_fit" in err
    err = refused(capsys, ["--scenario", "hgsp", "fifo", "--trace", "jobs.csv", *out])
    assert "CGRSP-only" in err
    err = refused(capsys, ["--scenario", "hgsp", f"{__name__}:Broken", "--quick", "--seeds", "2", *out])
    assert "on tasks1_small, seed 20000" in err
    assert not (tmp_path / "x" / "report.json").exists()


def _fake_sb3(path: Path, shape: list[int]) -> Path:
    """An SB3 zip's readable part: the observation space's class and shape (what the check reads)."""
    space = {":type:": "<class 'gymnasium.spaces.box.Box'>", "_shape": shape}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"observation_space": space}))
    return path


def test_a_model_of_another_scenario_is_refused(tmp_path, capsys) -> None:
    hgsp_shape = bench._env_shape(scenarios.benchmark("hgsp"), "tasks1_small")[1]
    model = _fake_sb3(tmp_path / "hgsp_model.zip", hgsp_shape)
    err = refused(capsys, ["--scenario", "mig", str(model), "--out", str(tmp_path / "o")])
    assert "an SB3 model of another env" in err and "MIG-v0" in err
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("scenario:\n  name: hgsp\nalgo:\n  name: ppo\n")
    err = refused(capsys, ["--scenario", "mig", str(run), "--out", str(tmp_path / "o")])
    assert "a train.py run of scenario=hgsp, not of mig" in err


def test_an_exact_solver_registered_as_a_policy_is_not_a_rule(monkeypatch, capsys, tmp_path) -> None:
    row = scenarios.benchmark("mig")
    monkeypatch.setitem(scenarios.BENCHMARKS, "mig", dataclasses.replace(row, rules=lambda: (*row.rules(), "cpsat")))
    assert "cpsat" not in scenarios.benchmark("mig").rule_names()
    err = refused(capsys, ["--scenario", "mig", "cpsat", "--out", str(tmp_path / "o")])
    assert "not a rule of mig" in err and "bound" in err


def test_a_bound_the_solver_did_not_finish_is_marked_bound_only(monkeypatch, tmp_path) -> None:
    row = scenarios.benchmark("mig")

    def fake(jobs, time_limit_s):  # proves the small instances, only bounds the others
        kind = "optimum" if len(jobs) <= 8 else "lower_bound"
        return Bound(float(min(j.arrival for j in jobs)), kind, 0.0, "test")

    patched = dataclasses.replace(row, bound_call=lambda hook, jobs, limit: fake(jobs, limit))
    monkeypatch.setattr(scenarios.Benchmark, "bound_hook", lambda self: fake)
    monkeypatch.setitem(scenarios.BENCHMARKS, "mig", patched)
    bench._REFERENCE.clear()
    proto = bench.protocol("mig", False, 2, ("jobs50", "jobs8"))
    rows = bench.run_regimes(bench.resolve("best_fit", "mig"), proto, {"executor": "serial", "progress": False})
    scopes = bench.judge(rows, proto)
    bench._REFERENCE.clear()
    assert scopes["jobs50"]["bound"]["status"] == "bound only"
    assert scopes["jobs50"]["bound"]["policy_gap"]["n_lower_bound"] == 2
    assert scopes["jobs8"]["bound"]["status"] == "optimum"
    assert scopes["jobs8"]["bound"]["policy_gap"]["n_optimum"] == 2


@pytest.mark.parametrize("scenario", OTHERS)
def test_leaderboard_page_is_current(scenario, tmp_path) -> None:
    stored = ROOT / "docs" / "leaderboard" / scenario
    if not stored.is_dir():
        pytest.skip(f"no stored {scenario} reports")
    page = build_scenario(ROOT / "docs" / "leaderboard", scenario, tmp_path / "page.md")
    assert page.read_text() == (ROOT / "docs" / f"leaderboard_{scenario}.md").read_text(), (
        f"docs/leaderboard_{scenario}.md is stale: gpu-sched evaluate --scenario {scenario} --leaderboard "
        "docs/leaderboard"
    )


def test_the_index_shows_each_leaderboards_top_row() -> None:
    """docs/index.md's benchmark table copies each generated page's rank-1 policy and score."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    index = (docs / "index.md").read_text()
    for page in ("leaderboard.md", *(f"leaderboard_{s}.md" for s in ("hgsp", "llm", "mig", "edge"))):
        top = next(line for line in (docs / page).read_text().splitlines() if line.startswith("| 1 | "))
        name, score = (c.strip() for c in top.split("|")[2:5:2])
        row = next((line for line in index.splitlines() if f"]({page})" in line), None)
        assert row is not None, f"docs/index.md has no row linking {page}"
        assert f"| {name} | {score}" in row, f"docs/index.md's row of {page} is not its #1 ({name}, {score}): {row}"


def test_a_best_rule_at_zero_leaves_the_regime_out_of_a_worse_policys_score() -> None:
    from gpu_sched_agents.evaluate import bench
    from gpu_sched_agents.evaluate.report import ratio_key, ratio_text

    def scope(mine: float, rule: float) -> dict:
        return {"policy": {"wt": {"mean": mine}}, "rules": {"r": {"wt": {"mean": rule}}}, "best_rule": "r"}

    both = bench.score({"a": scope(0.0, 0.0), "b": scope(3.0, 2.0)}, "wt")
    assert both["objective_ratio"] == pytest.approx(1.25) and both["left_out"] == [] and ratio_text(both) == "1.250"
    part = bench.score({"a": scope(1.0, 0.0), "b": scope(3.0, 2.0), "c": scope(2.0, 2.0)}, "wt")
    assert part["objective_ratio"] == pytest.approx(1.25) and part["left_out"] == ["a"]
    assert ratio_text(part) == "1.250 (2 of 3)"
    none = bench.score({"a": scope(1.0, 0.0)}, "wt")
    assert none["objective_ratio"] is None and ratio_text(none) == "–"
    best = bench.score({"a": scope(0.0, 0.0), "b": scope(9.0, 2.0), "c": scope(2.0, 2.0)}, "wt")
    # a policy that misses a best rule's 0 ranks below every policy that misses none, however good elsewhere
    assert sorted([part, none, best], key=ratio_key) == [best, part, none]
