"""CGRSP policies see the simulator through :class:`SimView` only: what a scheduler may know."""

from __future__ import annotations

import copy
import pickle
import types

import pandas as pd
import pytest

from gpu_sched_agents.heuristics.cgrsp import ALL_POLICY_NAMES, make_policy
from gpu_sched_agents.heuristics.cgrsp.extensions import IdleView
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Simulator, run
from gpu_sched_env.cgrsp.view import VIEW_FIELDS, SimView
from gpu_sched_env.core.rng import stream

FORBIDDEN = (
    "assign",
    "advance",
    "realised",
    "realised_starts",
    "result",
    "workload",
    "dispatch",
    "completion",
    "job_slot",
    "job_stock",
    "seed",
    "view",
)
TINY_PLAN = {"n_rollouts": 2, "horizon_s": 300.0, "n_confirm": 4, "confirm_horizon_s": 600.0}


def _public(obj) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def test_view_shows_exactly_the_documented_fields_and_none_of_the_forbidden():
    sim = Simulator(make_params("hectic", n_jobs=50), 0)
    view = sim.view
    assert isinstance(view, SimView)
    assert _public(view) == set(VIEW_FIELDS)
    for name in FORBIDDEN:
        assert hasattr(sim, name), name  # the simulator has it ...
        with pytest.raises(AttributeError):
            getattr(view, name)  # ... its view does not
    # bound methods of the view are the simulator's read-only ones, never assign/advance
    for name in VIEW_FIELDS:
        v = getattr(view, name)
        assert v is not sim and v is not sim.workload
        if isinstance(v, types.MethodType):
            assert v.__func__.__name__ in VIEW_FIELDS, name
    with pytest.raises(AttributeError):
        view.assign = sim.assign  # no new attributes (__slots__)


def test_idle_view_reaches_no_more_than_the_view():
    sim = Simulator(make_params("hectic", n_jobs=50), 0)
    assert sim.advance()
    iv = IdleView(sim.view, sim.idle_slots()[:1])
    assert iv.n_idle == 1 and iv.t == sim.t
    for name in ("assign", "advance", "realised", "_sim", "_rt"):
        with pytest.raises(AttributeError):
            getattr(iv, name)


def test_view_lists_only_arrived_jobs_and_the_queue_read_only():
    sim = Simulator(make_params("surge", n_jobs=120), 3)
    view = sim.view
    assert view.submit == [] and view.n_arrived == 0  # nothing has arrived before the day starts
    pol = make_policy("edf", sim.params)
    pol.reset(view, stream(3, "cgrsp/policy"))
    n_dec = 0
    while sim.advance():
        n = sim.n_arrived
        assert n < sim.n_jobs or n_dec  # some arrivals are still in the future at first
        for name in ("submit", "deadline", "complexity", "tight"):
            assert getattr(view, name) == getattr(sim, name)[:n], name  # future jobs are not in the view
        assert view.t == sim.t and view.stock == sim.stock and view.n_idle == sim.n_idle
        assert list(view.waiting) == list(sim.waiting) and view.slot_job is sim.slot_job
        with pytest.raises(TypeError):
            view.waiting[n - 1] = None  # a mapping proxy: the queue cannot be edited
        for j, s in pol.decide(view):
            sim.assign(j, s)
        n_dec += 1
    assert n_dec == sim.n_decisions and view.done


class _Cheat:
    """A policy that tries to act behind the simulator's back."""

    name = "cheat"

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def reset(self, view, rng) -> None:
        self.view = view

    def decide(self, view):
        getattr(view, self.attr)  # raises AttributeError
        return []


@pytest.mark.parametrize("attr", ["assign", "advance", "realised", "workload"])
def test_a_policy_cannot_reach_assign_advance_or_realised_draws(attr):
    with pytest.raises(AttributeError, match=attr):
        simulate(_Cheat(attr), "quiet", 0, n_jobs=20)


def _run_on_simulator(name: str, params, seed: int, knobs: dict) -> pd.DataFrame:
    """The former protocol: the policy handed the simulator itself."""
    sim = Simulator(params, seed)
    pol = make_policy(name, params, **knobs)
    pol.reset(sim, stream(seed, "cgrsp/policy"))
    while sim.advance():
        for j, s in pol.decide(sim):
            sim.assign(j, s)
    return sim.result(policy=name).jobs


@pytest.mark.parametrize("name", ALL_POLICY_NAMES)
def test_every_policy_decides_through_the_view_as_it_did_on_the_simulator(name):
    """Same jobs, slots and times whether a policy reads the view or (as before) the simulator."""
    knobs = TINY_PLAN if name == "rollout" else {}
    n_jobs = 60 if name == "rollout" else 200
    for day, seed in (("hectic", 0), ("surge", 11)):
        params = make_params(day, n_jobs=n_jobs)
        sim = Simulator(params, seed)
        pol = make_policy(name, params, **knobs)
        pol.reset(sim.view, stream(seed, "cgrsp/policy"))
        got = run(sim, pol).result(policy=name).jobs
        pd.testing.assert_frame_equal(got, _run_on_simulator(name, params, seed, knobs), check_exact=True)


def test_view_survives_pickle_and_deepcopy_bound_to_its_copy():
    sim = Simulator(make_params("hectic", n_jobs=60), 2)
    for _ in range(10):
        sim.advance()
        sim.assign(next(iter(sim.waiting)), sim.idle_slots()[0])
    for clone in (pickle.loads(pickle.dumps(sim)), copy.deepcopy(sim)):
        v = clone.view
        assert v.slot_job is clone.slot_job and v.t == sim.t
        assert list(v.waiting) == list(sim.waiting) and v.submit == sim.view.submit
        clone.advance()
        assert list(v.waiting) == list(clone.waiting) and v.t == clone.t and v.submit == clone.submit[: clone.n_arrived]
