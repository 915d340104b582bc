"""The action schemes own their knowledge: nobody else compares ``action_mode``, and what agents
and studies need is asked of the scheme."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from gpu_sched_env.cgrsp.actions import JointActions, SlotOffers
from gpu_sched_env.cgrsp.config import ActionMode, CGRSPEnvConfig
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.schemes import ACTION_MODES, ACTION_SCHEMES, scheme_of

ROOT = Path(__file__).resolve().parents[2]
# ``action_mode == ...``, ``... != action_mode``, ``action_mode in (...)``, ``== "slot"`` / ``"joint"``
COMPARISON = re.compile(
    r"""action_mode\s*(==|!=|\bin\b|\bnot\s+in\b)|(==|!=)\s*[\w.]*action_mode\b|(==|!=)\s*["'](slot|joint)["']|["'](slot|joint)["']\s*(==|!=)"""
)


def test_no_action_mode_comparisons_outside_the_schemes():
    home = ROOT / "gpu_sched_env" / "cgrsp" / "actions.py"
    files = [p for d in ("gpu_sched_env", "agents", "studies", "scripts") for p in (ROOT / d).rglob("*.py")]
    files += [ROOT / "train.py"]
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in files
        if p != home
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if COMPARISON.search(line)
    ]
    assert not hits, "ask the action scheme instead:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_should():
    for line in (
        'if cfg.action_mode == "slot":',
        "x = env.action_mode != 'joint'",
        'if "joint" == mode:',
        "if m in ACTION_MODES and action_mode in modes:",
    ):
        assert COMPARISON.search(line), line
    assert not COMPARISON.search("CGRSPEnv(action_mode='slot')")


def test_the_modes_are_the_schemes():
    from typing import get_args

    assert ACTION_MODES == tuple(get_args(ActionMode)) == tuple(ACTION_SCHEMES)
    assert scheme_of("joint") is JointActions and scheme_of("slot") is SlotOffers


def test_doable_now_and_rule_choice():
    plan = [(7, 0), (8, 2), (9, 1)]
    joint = JointActions(4, 3)
    assert joint.doable_now(plan) == plan
    assert joint.rule_choice(plan, lambda: (5, 1)) == (5, 1)  # the agent's own action
    env = CGRSPEnv(action_mode="slot", c_max=3, n_jobs=30)
    env.reset(seed=0)
    s = env.offered_slot
    assert s is not None
    mine = [(j, slot) for j, slot in plan if slot == s]
    assert env.actions.doable_now(plan) == mine
    assert env.actions.rule_choice(plan, lambda: (5, 1)) == (mine[0] if mine else None)


def test_simpler_designs_are_the_schemes_own():
    slot = CGRSPEnvConfig(action_mode="slot", hold="stock")
    out = scheme_of("slot").simpler_designs(slot)
    assert list(out) == ["hold=event", "joint"]
    assert out["hold=event"].hold == "event" and out["joint"].action_mode == "joint" and out["joint"].hold == "event"
    assert list(scheme_of("slot").simpler_designs(slot.replace(hold="event"))) == ["joint"]
    assert scheme_of("joint").simpler_designs(CGRSPEnvConfig()) == {}


def test_schemes_never_call_the_env():
    src = (ROOT / "gpu_sched_env" / "cgrsp" / "actions.py").read_text()
    assert not re.search(r"\benv\.\w+", src), "a scheme is given the simulator, never the env"
    env = CGRSPEnv(action_mode="slot", c_max=3, n_jobs=30)
    obs, _ = env.reset(seed=1)
    assert obs["offer"].any() and obs["slots"][env.offered_slot, -1] == 1.0  # the obs marks the scheme's offer
    assert np.flatnonzero(obs["slots"][:, -1]).tolist() == [env.offered_slot]
