"""The shared bound type: what a scenario's bound may claim, refused when it claims something else."""

import math

import pytest

from gpu_sched_env.core.bounds import Bound
from gpu_sched_env.core.errors import ConfigError


def test_gap_and_kind():
    b = Bound(200.0, "optimum", 0.1, "cp-sat")
    assert b.exact and b.gap_pct(210.0) == pytest.approx(5.0)
    lb = Bound(0.0, "lower_bound", 0.0, "relaxation")
    assert not lb.exact and lb.gap_pct(0.0) == 0.0 and math.isnan(lb.gap_pct(3.0))
    assert b.to_dict() == {"value": 200.0, "kind": "optimum", "solver_s": 0.1, "method": "cp-sat"}


@pytest.mark.parametrize(
    "value, kind, match",
    [
        (1.0, "upper_bound", "bound kind = 'upper_bound'"),
        (math.inf, "optimum", "bound value = inf"),
        (-1.0, "lower_bound", "bound value = -1.0"),
        (math.nan, "optimum", "bound value = nan"),
    ],
)
def test_refused(value, kind, match):
    with pytest.raises(ConfigError, match=match):
        Bound(value, kind, 0.0, "x")
