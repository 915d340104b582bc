"""heuristics.tuning: every scenario's ``strong.tune()`` plays selection seeds only (one check for the four)."""

from __future__ import annotations

import pytest

from gpu_sched_agents.heuristics import tuning
from gpu_sched_agents.heuristics.edge import strong as edge
from gpu_sched_agents.heuristics.hgsp import strong as hgsp
from gpu_sched_agents.heuristics.llm import strong as llm
from gpu_sched_agents.heuristics.mig import strong as mig
from gpu_sched_env.core.errors import ConfigError

TUNERS = {"hgsp": hgsp.tune, "llm": llm.tune, "mig": mig.tune, "edge": edge.tune}
OUTSIDE = [(20, 9_999), (5, 19_996), (20, 19_990), (1, 20_000), (1, 2**20), (5, 0)]


@pytest.mark.parametrize("scenario", list(TUNERS))
@pytest.mark.parametrize(("n_seeds", "seed0"), OUTSIDE)
def test_every_tune_refuses_seeds_outside_the_selection_range(scenario, n_seeds, seed0):
    with pytest.raises(ConfigError, match=r"leave the selection seeds; allowed: 10000 \.\. 19999"):
        TUNERS[scenario](n_seeds=n_seeds, seed0=seed0)


@pytest.mark.parametrize("scenario", list(TUNERS))
def test_every_tune_refuses_no_seeds_or_a_fractional_seed(scenario):
    with pytest.raises(ConfigError, match="n_seeds = 0"):
        TUNERS[scenario](n_seeds=0, seed0=10_000)
    with pytest.raises(ConfigError, match="seed0 = 10000.5"):
        TUNERS[scenario](n_seeds=1, seed0=10_000.5)


def test_the_selection_range_is_the_projects_and_its_edges_are_inside():
    from gpu_sched_agents.rl.envs import SELECTION_SEEDS

    assert range(tuning.SELECTION[0], tuning.SELECTION[1] + 1) == SELECTION_SEEDS
    assert tuning.selection_seeds(3, 10_000) == range(10_000, 10_003)
    assert tuning.selection_seeds(1, 19_999) == range(19_999, 20_000)
    assert tuning.selection_seeds(10_000, 10_000) == SELECTION_SEEDS


def test_a_bad_grid_is_refused_naming_the_rule_and_knob():
    grids = {"a": {"k": (1, 2)}, "b": {"w": (1,)}}
    assert tuning.grids_to_play({}, grids) == {"a": {"k": (1, 2)}, "b": {"w": (1,)}}
    assert tuning.grids_to_play({"b": {"w": [3]}}, grids) == {"b": {"w": [3]}}
    for grid, match in (
        ({"c": {"k": [1]}}, "rule = 'c' is not known"),
        ({"a": [1]}, "a = \\[1\\] is not allowed; allowed: a mapping"),
        ({"a": {"x": [1]}}, "unknown a knobs: x"),
        ({"a": {"k": []}}, "a.k = \\[\\] is not allowed; allowed: a non-empty list"),
        ({"a": {"k": "12"}}, "a.k = '12' is not allowed"),
    ):
        with pytest.raises(ConfigError, match=match):
            tuning.grids_to_play(grid, grids)
    assert tuning.candidates({"k": (1, 2), "p": ("x", "y")}) == [
        {"k": 1, "p": "x"}, {"k": 1, "p": "y"}, {"k": 2, "p": "x"}, {"k": 2, "p": "y"},
    ]  # fmt: skip
