"""reward --part regimes: the learner's discounted returns and each regime's share of one pooled scale."""

import re

import numpy as np
import pytest

from studies.cgrsp.reward.regime_scale import discounted_returns, main, table


def test_discounted_returns_follow_the_clock():
    r, dt = np.array([1.0, 2.0, 4.0]), np.array([90.0, 180.0, 45.0])
    got = discounted_returns(r, dt, 0.5, 90.0)
    g2 = 4.0
    g1 = 2.0 + 0.5**2 * g2  # the second step lasts two τ
    g0 = 1.0 + 0.5 * g1
    np.testing.assert_allclose(got, [g0, g1, g2])
    np.testing.assert_allclose(discounted_returns(r, dt, 0.5, None), [1 + 0.5 * (2 + 0.5 * 4), 2 + 0.5 * 4, 4])


def test_a_regime_a_hundred_times_smaller_gets_a_hundredth_of_the_pooled_scale():
    def day(scale, n):  # rewards ±scale alternating (std = scale, mean 0), 90 s apart
        return np.column_stack([scale * (-1.0) ** np.arange(n), np.full(n, 90.0)])

    t = table({"big": [day(1.0, 400), day(1.0, 400)], "small": [day(0.01, 100)]}, 0.0, 90.0, [1.0, 1.0])
    assert list(t.steps_per_day) == [400, 100]
    np.testing.assert_allclose(t.return_std, [1.0, 0.01])  # γ = 0: the returns are the rewards
    pooled = np.sqrt((1.0 + 0.01**2) / 2)  # equal weights, both means 0
    np.testing.assert_allclose(t.return_std_over_pooled, [1.0 / pooled, 0.01 / pooled])
    # weighting the small regime up shrinks the pooled scale: both shares grow, their ratio stays
    t2 = table({"big": [day(1.0, 400)], "small": [day(0.01, 400)]}, 0.0, 90.0, [1.0, 99.0])
    pooled2 = np.sqrt((1.0 + 99 * 0.01**2) / 100)
    np.testing.assert_allclose(t2.return_std_over_pooled, [1.0 / pooled2, 0.01 / pooled2])


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--days", "0"], r"--days = 0: need at least 1"),
        (["--gamma", "1.5"], r"--gamma = 1.5: allowed \(0, 1\]"),
        (["--tau-s", "-1"], r"--tau-s = -1.0: allowed 0"),
        (["--weights", "1", "2"], r"--weights = \[1.0, 2.0\]: give 4 positive weights"),
    ],
)
def test_bad_arguments_are_refused(argv, match, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert re.search(match, capsys.readouterr().err)
