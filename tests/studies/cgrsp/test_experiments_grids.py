"""Experiment definitions: defaults reproduce the study's design, overrides are validated."""

import pytest

from gpu_sched_env.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp.workload import month_plan
from gpu_sched_env.core.errors import ConfigError
from studies.cgrsp.programme.grids import (
    EXPERIMENT_NAMES,
    EXPERIMENTS,
    MONTH_SEED_BASE,
    build_cells,
    configure,
    parse_seeds,
)


def test_default_designs_match_the_study():
    e = EXPERIMENTS
    assert e["single"].seeds == (42,) and e["single"].policies == POLICY_NAMES
    assert e["validation"].seeds == tuple(range(30)) and e["validation"].days == ("hectic",)
    assert set(e["daytype"].days) == {"quiet", "normal", "hectic", "surge"}
    assert e["tight"].days == ("surge",) and e["tight"].values == (0.1, 0.3, 0.5, 0.7, 0.9)
    assert e["cmax"].values == (3, 5, 7, 10)
    assert e["theta"].values == (60.0, 180.0, 300.0, 600.0, 1200.0)
    assert e["crstar"].values == (1.5, 2.0, 3.0, 5.0, 10.0)
    assert e["rho"].values == (0, 1, 2, 3) and e["rho"].days == ("normal", "surge", "hectic")
    assert e["objective"].w_cost == pytest.approx([0.1 * k for k in range(1, 10)])
    assert e["objective"].ratios == (1.0, 5.0, 10.0, 20.0, 50.0)
    assert e["month"].seeds == tuple(range(10)) and e["month"].n_days == 30
    assert dict(e["month"].mix) == {"hectic": 4, "surge": 3, "normal": 18, "quiet": 5}
    for name in EXPERIMENT_NAMES:
        configure(name)  # every default validates


def test_cell_counts_and_labels():
    cells = build_cells(EXPERIMENTS["tight"])
    assert len(cells) == 11 * 30 * 5
    c = cells[0]
    assert c["day"] == "surge" and c["params"] == {"tight_fraction": 0.1}
    assert c["labels"] == {"cell": "surge/tight_fraction=0.1", "tight_fraction": 0.1}
    assert len(build_cells(EXPERIMENTS["rho"])) == 1 * 30 * 4 * 3
    assert len(build_cells(EXPERIMENTS["daytype"])) == 11 * 30 * 4


def test_month_cells_follow_the_plan_with_distinct_seeds():
    exp = configure("month", policies=["fifo", "rh"], seeds=[0, 3])
    cells = build_cells(exp)
    assert len(cells) == 2 * 30 * 2
    rep3 = [c for c in cells if c["labels"]["rep"] == 3 and c["policy"] == "rh"]
    assert [c["day"] for c in rep3] == month_plan(3)
    assert [c["seed"] for c in rep3] == [MONTH_SEED_BASE + 3000 + d for d in range(30)]
    assert sum(c["day"] == "hectic" for c in rep3) == 4


def test_overrides_apply():
    exp = configure("cmax", policies=["fifo"], seeds=[1, 2], values=[5, 7], base_params={"n_jobs": 20})
    cells = build_cells(exp)
    assert [(c["seed"], c["params"]) for c in cells] == [
        (1, {"n_jobs": 20, "c_max": 5}),
        (2, {"n_jobs": 20, "c_max": 5}),
        (1, {"n_jobs": 20, "c_max": 7}),
        (2, {"n_jobs": 20, "c_max": 7}),
    ]


@pytest.mark.parametrize(
    ("name", "kw", "match"),
    [
        ("nope", {}, "experiment"),
        ("rho", {"base_params": {"c_max": 3}}, "rho_res"),  # ρ_res = 3 is not below C_max = 3
        ("validation", {"policies": ["fifo", "sjf"]}, "policy"),
        ("validation", {"seeds": []}, "seeds is empty"),
        ("validation", {"days": ["weekend"]}, "day"),
        ("tight", {"values": [0.5, 1.5]}, "tight_fraction"),
        ("tight", {"base_params": {"tight_fraction": 0.2}}, "swept"),
        ("validation", {"base_params": {"c_maxx": 3}}, "c_maxx"),
        ("month", {"mix": {"hectic": 4, "quiet": 5}}, "n_days"),
        ("objective", {"w_cost": [1.5]}, "w_cost"),
        ("validation", {"colour": "red"}, "colour"),
    ],
)
def test_bad_configuration_raises(name, kw, match):
    with pytest.raises(ConfigError, match=match):
        configure(name, **kw)


def test_parse_seeds():
    assert parse_seeds(["0-3", "7", "9,11"]) == (0, 1, 2, 3, 7, 9, 11)
    for bad in (["x"], ["5-2"], []):
        with pytest.raises(ConfigError):
            parse_seeds(bad)
