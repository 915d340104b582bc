"""One policy protocol: every registered policy of every scenario follows core.policy.Policy."""

import importlib
import inspect

import pytest

from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.core.policy import Policy, check_policy
from gpu_sched_env.core.registry import BUILTIN_PLUGINS

SCENARIOS = tuple(BUILTIN_PLUGINS)
CTOR_ARGS = {"cgrsp": lambda: (make_params("hectic"),)}  # CGRSP factories take the run's params


def _registry(scenario):
    return importlib.import_module(f"gpu_sched_env.{scenario}.policies").POLICIES


def _cases():
    return [(s, n) for s in SCENARIOS for n in _registry(s).names()]


def test_every_scenario_has_policies():
    counts = {s: len(_registry(s).names()) for s in SCENARIOS}
    assert counts == {"cgrsp": 12, "hgsp": 3, "llm": 2, "mig": 3, "edge": 3}


@pytest.mark.parametrize(("scenario", "name"), _cases())
def test_registered_policy_follows_the_protocol(scenario, name):
    pol = _registry(scenario).make(name, *CTOR_ARGS.get(scenario, tuple)())
    assert isinstance(pol, Policy)
    assert pol.name == name
    assert check_policy(pol) is pol
    reset = inspect.signature(pol.reset).parameters
    decide = inspect.signature(pol.decide).parameters
    assert len(reset) == 2 and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in reset.values())
    assert len(decide) == 1


def test_check_policy_rejects_the_old_signatures():
    class OldHGSP:  # reset(rng) + decide(decision): the pre-protocol HGSP shape
        name = "old"

        def reset(self, rng=None):
            pass

        def decide(self, d):
            return 0

    class NoDecide:
        name = "x"

        def reset(self, state, rng):
            pass

    with pytest.raises(TypeError, match=r"OldHGSP.reset must take 2"):
        check_policy(OldHGSP())
    with pytest.raises(TypeError, match="is not a policy"):
        check_policy(NoDecide())
