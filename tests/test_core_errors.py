"""core.errors: integral parameters, the shared action check, options and arguments."""

import numpy as np
import pytest

from gpu_sched_env.core.errors import (
    ConfigError,
    InvalidActionError,
    check_action,
    check_kwargs,
    check_number,
    check_options,
)


@pytest.mark.parametrize("value", [5.0, np.float64(5.0), np.float32(5), 5.5, "5", True, np.bool_(True), None])
def test_integer_parameters_refuse_everything_but_integers(value):
    with pytest.raises(ConfigError, match="c_max"):
        check_number("c_max", value, lo=1, integer=True)


@pytest.mark.parametrize("value", [5, np.int64(5), np.int32(5), np.uint8(5)])
def test_integer_parameters_accept_integers_and_return_int(value):
    out = check_number("c_max", value, lo=1, integer=True)
    assert out == 5 and type(out) is int


def test_real_parameters_still_take_floats_and_ints():
    assert check_number("rate", 5.0, lo=0) == 5.0 and check_number("rate", 5, lo=0) == 5


def test_check_action_messages():
    mask = np.array([True, False, True])
    assert check_action(np.array([2]), 3, mask) == 2
    with pytest.raises(
        InvalidActionError, match=r"action 0\.7 \(float\) is not allowed; allowed: one integer in \[0, 2\]"
    ):
        check_action(0.7, 3, mask)
    with pytest.raises(InvalidActionError, match=r"action 3 is out of range; allowed: integers in \[0, 2\]"):
        check_action(3, 3, mask)
    with pytest.raises(InvalidActionError, match=r"action 1 is illegal: slot busy; legal actions now: \[0, 2\]"):
        check_action(1, 3, mask, lambda a: "slot busy")


def test_check_options_and_kwargs():
    assert check_options(None) == {} and check_options({"workloads": []}, ("workloads",)) == {"workloads": []}
    with pytest.raises(ConfigError, match=r"unknown reset options: bogus; allowed: none"):
        check_options({"bogus": 1})
    with pytest.raises(ConfigError, match="must be a mapping"):
        check_options([("bogus", 1)])
    with pytest.raises(ConfigError, match=r"unknown X-v0 arguments: typo; allowed: a, b"):
        check_kwargs({"typo": 1}, ("b", "a"), "X-v0")
