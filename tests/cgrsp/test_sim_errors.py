"""Bad parameters, days and policies fail with messages that name the field and what is allowed."""

import pytest

from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.workload import month_plan
from gpu_sched_env.core.errors import ConfigError


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(policy="fifoo"), r"policy = 'fifoo' is not known; allowed: fifo, spt, edf"),
        (dict(policy="fifo", day="busy"), r"day = 'busy' is not known; allowed: quiet, normal, hectic, surge"),
        (
            dict(policy="fifo", cmax=5),
            r"unknown CGRSP parameters or knobs: cmax; simulator parameters: c_max, .*; knobs of fifo: none",
        ),
        (dict(policy="fifo", arrival_rate=-0.1), r"arrival_rate = -0.1 is out of range; allowed: \(0, inf\]"),
        (dict(policy="fifo", c_max=0), r"c_max = 0 is out of range; allowed: \[1, 1024\]"),
        (dict(policy="fifo", c_max=2.5), r"c_max = 2.5 must be an integer"),
        (dict(policy="fifo", tight_fraction=1.5), r"tight_fraction = 1.5 is out of range; allowed: \[0, 1\]"),
        (dict(policy="fifo", tight_fraction=-0.1), r"tight_fraction = -0.1 is out of range"),
        (dict(policy="fifo", n_jobs=0), r"n_jobs = 0 is out of range"),
        (dict(policy="spt_rescue", theta=float("nan")), r"theta = nan must be a finite number"),
        (dict(policy="cadr", cr_star=1.0), r"cr_star = 1.0 is out of range; allowed: \(1, inf\]"),
        (dict(policy="rh", rho_res=5), r"rho_res = 5 must be below c_max = 5"),
        (dict(policy="fifo", start_hour_utc=24), r"start_hour_utc = 24 is out of range; allowed: \[0, 24\)"),
        (dict(policy="fifo", slot_types=("RTX 3090",)), r"slot_types has 1 entries but c_max = 5"),
        (dict(policy="fifo", c_max=1, slot_types=("H100",)), r"slot_types = 'H100' is not known; allowed: RTX 3090"),
        (dict(policy="fifo", delay_low=(100.0, 50.0)), r"delay_low = \(100.0, 50.0\): lower bound exceeds upper bound"),
        (dict(policy="fifo", complexity_probs=(0.5, 0.5, 0.5)), r"complexity_probs = .* summing to 1"),
        (
            dict(policy="rh", rh_defer="sometimes"),
            r"rh_defer = 'sometimes' is not known; allowed: expected, low, never",
        ),
        (dict(policy="fifo", tight_fraction="0.2"), r"tight_fraction = '0.2' is not a number"),
    ],
)
def test_bad_input_raises_clear_error(kwargs, pattern):
    with pytest.raises(ConfigError, match=pattern):
        simulate(**kwargs)


def test_valid_edge_values_are_accepted():
    assert make_params("hectic", tight_fraction=0.0).tight_fraction == 0.0
    assert make_params("hectic", tight_fraction=1.0).tight_fraction == 1.0
    s = simulate("fifo", "quiet", 0, c_max=1).summary()
    assert s["completed"] == s["n_jobs"] == 6


def test_month_plan_counts_and_errors():
    plan = month_plan(0)
    assert len(plan) == 30
    assert {d: plan.count(d) for d in set(plan)} == {"hectic": 4, "surge": 3, "normal": 18, "quiet": 5}
    assert month_plan(0) == month_plan(0) and month_plan(0) != month_plan(1)
    with pytest.raises(ConfigError, match="counts must be integers summing to n_days = 30"):
        month_plan(0, {"hectic": 10})
    with pytest.raises(ConfigError, match="mix key = 'busy' is not known"):
        month_plan(0, {"busy": 30})
    probs = month_plan(0, {"hectic": 0.5, "quiet": 0.5}, mode="probs")
    assert set(probs) <= {"hectic", "quiet"} and len(probs) == 30
