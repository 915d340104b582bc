"""One policy protocol: every registered policy of every scenario follows core.policy.Policy.

One factory signature (``make(name, world, **knobs)``), read-only states and views, planners
apart from policies.
"""

import dataclasses
import importlib
import inspect

import numpy as np
import pytest

from gpu_sched_env.cgrsp.params import CGRSPParams, make_params
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.policy import Planner, Policy, check_planner, check_policy
from gpu_sched_env.core.registry import BUILTIN_PLUGINS, PolicyRegistry

SCENARIOS = tuple(BUILTIN_PLUGINS)
WORLDS = {"cgrsp": lambda: make_params("hectic")}  # the world a scenario's factories take; None elsewhere


def _world(scenario):
    return WORLDS.get(scenario, lambda: None)()


def _registry(scenario):
    return importlib.import_module(f"gpu_sched_env.{scenario}.policies").POLICIES


def _cases():
    return [(s, n) for s in SCENARIOS for n in _registry(s).names()]


def test_every_scenario_has_policies():
    counts = {s: len(_registry(s).names()) for s in SCENARIOS}
    # cgrsp: 11 published, 10 rules, the rollout planner (a policy: it decides at every decision point);
    # edge: the env policies, mct among them (its offline planners are in PLANNERS)
    assert counts == {"cgrsp": 22, "hgsp": 9, "llm": 7, "mig": 7, "edge": 3}


@pytest.mark.parametrize(("scenario", "name"), _cases())
def test_registered_policy_follows_the_protocol(scenario, name):
    pol = _registry(scenario).make(name, _world(scenario))  # the one factory signature
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


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_one_factory_signature_in_every_scenario(scenario):
    reg = _registry(scenario)
    assert isinstance(reg, PolicyRegistry)
    params = inspect.signature(reg.make).parameters
    assert list(params) == ["name", "world", "knobs"]
    assert params["world"].kind is inspect.Parameter.POSITIONAL_ONLY and params["world"].default is None
    name = reg.names()[0]
    if reg.world is None:  # built without a world: one given is an error, not silently dropped
        with pytest.raises(ConfigError, match=rf"world = 3 is not taken by {scenario} policy {name!r}; allowed: None"):
            reg.make(name, 3)
    else:
        assert reg.world is CGRSPParams
        with pytest.raises(
            ConfigError, match=rf"world = None is not valid for cgrsp policy {name!r}; allowed: a CGRSPParams"
        ):
            reg.make(name)
    with pytest.raises(ConfigError, match=rf"unknown .*{name}.*: no_such_knob"):  # named, with what is allowed
        reg.make(name, _world(scenario), no_such_knob=1)


def test_edge_planners_are_planners_not_policies():
    from gpu_sched_env.edge.policies import PLANNERS, POLICIES

    assert PLANNERS.kind == "planner"
    assert PLANNERS.names(published_only=True) == ("membatch", "baseline_ilp", "fcfs_llf")
    for name in PLANNERS.names():
        p = PLANNERS.make(name)
        assert isinstance(p, Planner) and check_planner(p) is p and p.name == name
        assert not hasattr(p, "decide")  # nothing calls a planner at decision points
    for name in POLICIES.names():
        assert check_policy(POLICIES.make(name)).name == name
    with pytest.raises(TypeError, match="is not a planner"):
        check_planner(POLICIES.make("random"))


class _Spy:
    """Wraps a policy and records what it is handed."""

    def __init__(self, inner, check=None):
        self.inner, self.name, self.check = inner, inner.name, check
        self.minute_by_minute = getattr(inner, "minute_by_minute", False)  # MIG picks its loop by it
        self.states, self.views = [], []

    def reset(self, state, rng):
        self.states.append(state)
        self.inner.reset(state, rng)

    def decide(self, view):
        if self.check is not None:
            self.check(view)  # at decision time: live views show the present
        if len(self.views) < 50:
            self.views.append(view)
        return self.inner.decide(view)


def _no_mutators(obj, allowed=()):
    """Public callables of a handed object: none may change the run."""
    bad = {"assign", "advance", "start", "step", "place", "reset", "run"}
    names = {n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n))}
    assert not names & bad - set(allowed), names & bad


def _frozen(obj):
    assert dataclasses.is_dataclass(obj) and type(obj).__dataclass_params__.frozen
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        assert not isinstance(v, (list, dict, set)), f.name  # tuples, not shared mutable containers
        if isinstance(v, np.ndarray):
            assert not v.flags.writeable, f.name


def test_other_scenarios_hand_read_only_states_and_views():
    from gpu_sched_env import hgsp, llm
    from gpu_sched_env.hgsp.policies import POLICIES as HGSP
    from gpu_sched_env.llm.policies import POLICIES as LLM
    from gpu_sched_env.mig.policies import POLICIES as MIG
    from gpu_sched_env.mig.sim import run_policy
    from gpu_sched_env.mig.workload import mig_dataset

    n_shown = []

    def check_llm(d):
        _frozen(d)
        shown = np.flatnonzero(~np.isnan(d.arrival))
        assert set(d.queue.tolist()) <= set(shown.tolist())
        assert (d.arrival[shown] <= d.time + 1e-9).all()  # only requests that have arrived
        n_shown.append(len(shown))

    spy = _Spy(LLM.make("wsrpt"), check_llm)
    llm.simulate(spy, "mixed", engine="event")
    _frozen(spy.states[0])
    assert n_shown[0] < spy.states[0].n_requests  # future arrivals are not shown

    jobs = mig_dataset(0, n_jobs=20)
    for name in MIG.names():
        spy = _Spy(MIG.make(name))
        run_policy(jobs, spy)
        _frozen(spy.states[0])
        for v in spy.views:
            _frozen(v)

    spy = _Spy(HGSP.make("greedy"))  # the spy declares no decode_rule: one Decision per task
    hgsp.run(spy)
    problem = spy.states[0]
    _no_mutators(problem)
    assert not problem.p.flags.writeable and isinstance(problem.p_rows[0], tuple)
    assert spy.views
    for d in spy.views:
        _frozen(d)
