"""`python -m studies headroom`: the rule vs its bounds, the planner vs the rule, on the one resume store."""

import numpy as np
import pandas as pd
import pytest

from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.bounds import relaxed_params, srpt_flow, srpt_wait_bound
from gpu_sched_env.cgrsp.fleet import HIGH
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Simulator, run
from gpu_sched_env.core.errors import ConfigError
from studies.cgrsp.headroom import study as headroom
from studies.commands import HEADROOM

SMOKE = ["--param", "n_jobs=40", "--workers", "1", "--no-progress"]
TINY = "n_rollouts=2,horizon_s=120.0,n_confirm=2,confirm_horizon_s=120.0"


def test_srpt_flow_by_hand():
    assert srpt_flow(np.array([0.0, 0.0]), np.array([3.0, 1.0])) == pytest.approx(1.0 + 4.0)
    # B arrives at 1 and preempts A (4 left > 1): B ends at 2, A at 6
    assert srpt_flow(np.array([0.0, 1.0]), np.array([5.0, 1.0])) == pytest.approx(6.0 + 1.0)
    assert srpt_flow(np.array([0.0, 10.0]), np.array([2.0, 2.0])) == pytest.approx(4.0)  # idle in between


@pytest.mark.parametrize("day", ["hectic", "surge"])
def test_the_clairvoyant_bound_is_below_every_policy(day):
    for seed in (20000, 20001):
        lb = srpt_wait_bound(day, seed)
        for name in ("spt_rescue_defer_exp", "spt", "fifo", "cadr"):
            assert lb <= simulate(name, day, seed).summary()["mean_wait_min"] + 1e-9, name
        nd = simulate("spt", day, seed, **relaxed_params("no_delay", day)).summary()["mean_wait_min"]
        assert lb <= nd + 1e-9
    assert srpt_wait_bound("hectic", 20000) > 5.0  # not vacuous on the saturated day


def test_the_relaxed_worlds_are_what_they_say():
    p = make_params("hectic", **relaxed_params("all_high", "hectic", n_jobs=300))
    sim = run_rule(p)
    assert set(sim.job_stock) == {HIGH}
    q = make_params("hectic", **relaxed_params("no_delay", "hectic", n_jobs=300))
    sim = run_rule(q)
    assert all(sim.realised(j)[0] == sim.dispatch[j] for j in range(sim.n_jobs))
    with pytest.raises(ValueError, match="kind = 'cheap'"):
        relaxed_params("cheap", "hectic")


def run_rule(p):
    from gpu_sched_agents.heuristics.cgrsp import make_policy
    from gpu_sched_env.core.rng import stream

    sim = Simulator(p, 20000)
    pol = make_policy("spt_rescue_defer_exp", p)
    pol.reset(sim.view, stream(20000, "cgrsp/policy"))
    return run(sim, pol)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--layer", "a", "--stock", "450"], "--stock = '450'"),
        (["--layer", "b", "--day", "busy"], "--day = 'busy'"),
        (["--layer", "a", "--c-max", "4"], "--c-max = '4'"),
        (["--layer", "b", "--budget", "error_rate=0.7"], "error_rate"),
        (["--layer", "b", "--budget", "portfolio=[fifo]"], "portfolio = 'fifo'"),
        (["--layer", "a", "--param", "c_max=4"], "--c-max"),
        (["--layer", "a", "--param", "warp=3"], "warp"),
        ([], "nothing to do"),
    ],
)
def test_a_bad_cell_or_knob_refuses_before_anything_runs(tmp_path, capsys, argv, match):
    store = tmp_path / "store"
    assert headroom.main([*argv, "--store", str(store)]) == 2
    assert match in capsys.readouterr().err
    assert not store.exists()


def test_layers_are_stored_resumed_time_limited_and_rendered(tmp_path, capsys):
    store = str(tmp_path / "store")
    a = [
        "--layer",
        "a",
        "--day",
        "surge",
        "--stock",
        "fresh",
        "--c-max",
        "5",
        "--tight",
        "0.2",
        "--seeds",
        "2",
        "--store",
        store,
        *SMOKE,
    ]
    assert headroom.main(a) == 0
    df = headroom.CellStore(store, headroom.SOURCES).load()
    assert sorted(df.label) == sorted(headroom.LABELS_A * 2)
    capsys.readouterr()
    assert headroom.main(a) == 0 and "0 days to run" in capsys.readouterr().err  # resumed: nothing twice
    # layer (b) on one cell: a deadline that passes at once stores nothing new; the rerun completes it
    b = [
        "--layer",
        "b",
        "--day",
        "surge",
        "--stock",
        "fresh",
        "--c-max",
        "5",
        "--tight",
        "0.2",
        "--seeds",
        "2",
        "--budget",
        TINY,
        "--store",
        store,
        *SMOKE,
    ]
    assert headroom.main([*b, "--max-seconds", "1e-9"]) == 0
    # the rule's days were layer (a)'s: shared, not rerun; only the planner's two are to run
    assert "2 days to run (8 stored rows)" in (err := capsys.readouterr().err) and "0 days finished, 2 left" in err
    assert headroom.main(b) == 0
    assert "2 days finished, 0 left" in capsys.readouterr().err
    stem = tmp_path / "fig" / "h"
    assert headroom.main(["--render", str(stem), "--store", store]) == 2  # no rows of the default budget and parameters
    assert headroom.main(["--render", str(stem), "--store", store, "--budget", TINY, "--param", "n_jobs=40"]) == 0
    ta, tb = pd.read_csv(f"{stem}_a.csv"), pd.read_csv(f"{stem}_b.csv")
    assert len(ta) == 1 and ta.rule_n.item() == 2 and ta.srpt_mean_wait_min.item() <= ta.rule_mean_wait_min.item()
    assert len(tb) == 1 and tb.paired_n.item() == 2
    assert tb.diff_mean_wait_min.item() == pytest.approx(
        tb.planner_paired_mean_wait_min.item() - tb.rule_paired_mean_wait_min.item()
    )
    assert "| surge | fresh | 5 | 0.2 | 2 |" in (tmp_path / "fig" / "h_b.md").read_text()
    assert stem.with_suffix(".png").stat().st_size > 10_000


def test_headroom_is_the_default_part_of_its_command():
    assert HEADROOM.commands[HEADROOM.default].load() is headroom.main
    assert headroom.parse_budget("n_rollouts=4,portfolio=[cadr_defer_exp]") == {
        "n_rollouts": 4,
        "portfolio": ("cadr_defer_exp",),
    }
    with pytest.raises(ConfigError, match="names no knob"):
        headroom.parse_budget(",")
