"""SAGreedy's decoders (list order = the study's, default; release-aware = ours) and the presets'
published loads (the tasks1 diagnosis script: tests/studies/hgsp/test_hgsp_tasks1_diagnose.py)."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

from gpu_sched_agents.heuristics.hgsp import SAGreedy
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.hgsp import Problem, decode, generate_tasks, make_cluster, resolve_tasks, run
from gpu_sched_env.hgsp.metrics import summarize
from gpu_sched_env.hgsp.sim import DECODERS
from gpu_sched_env.hgsp.workload import PRESETS

ROOT = Path(__file__).resolve().parents[2]

# One A100 (speed 57). Task 0: p = 2 from t = 0, due 2; task 1: p = 1 from t = 0.5, due 1.5,
# weight 10; task 2: p = 1 from t = 0.6, due 3.
HAND = pd.DataFrame(
    {
        "task_id": [0, 1, 2],
        "workload": [114.0, 57.0, 57.0],
        "memory": [1, 1, 1],
        "deadline": [2.0, 1.5, 3.0],
        "weight": [1, 10, 1],
        "arrival": [0.0, 0.5, 0.6],
    }
)
ONE = {"A100": 1}


def test_decoders_give_different_hand_computed_schedules():
    pr = Problem(resolve_tasks(HAND), make_cluster(ONE))
    order = np.array([1, 0, 2])
    # list order: task 1 first at its arrival 0.5 -> 1.5; task 0 waits -> 1.5..3.5; task 2 3.5..4.5
    lst = decode(pr, order, "eft", serial=DECODERS["list"])
    np.testing.assert_allclose(lst.start, [1.5, 0.5, 3.5])
    np.testing.assert_allclose(lst.end, [3.5, 1.5, 4.5])
    assert lst.sequence.tolist() == [1, 0, 2]
    # release-aware: at t* = 0 only task 0 has arrived -> 0..2; then task 1 2..3, task 2 3..4
    rel = decode(pr, order, "eft", serial=DECODERS["release"])
    np.testing.assert_allclose(rel.end, [2.0, 3.0, 4.0])
    assert rel.sequence.tolist() == [0, 1, 2]
    assert summarize(lst)["wt"] == pytest.approx(1.5 + 1.5)  # tasks 0 and 2 late by 1.5, w 1
    assert summarize(rel)["wt"] == pytest.approx(10 * 1.5 + 1.0)  # = Greedy's schedule


def test_sagreedy_default_decoder_is_list_order():
    assert SAGreedy().decoder == "list"
    # Greedy: ends 2, 3, 4 -> WT 16; tardy {1: 15, 2: 1}; at T0 rho = 0.8 moves floor(1.6) = 1
    # task (task 1) to the front: order 1, 0, 2. List-order decode: WT 3 (kept as best);
    # release-aware decode of that order is Greedy's schedule again (WT 16).
    g = run("greedy", HAND, ONE)
    default = run("sagreedy", HAND, ONE, 0, iters=1)
    lst = run("sagreedy", HAND, ONE, 0, iters=1, decoder="list")
    rel = run("sagreedy", HAND, ONE, 0, iters=1, decoder="release")
    assert g.summary()["wt"] == pytest.approx(16.0)
    assert default.order.tolist() == lst.order.tolist() == [1, 0, 2]
    np.testing.assert_allclose(default.schedule.end, [3.5, 1.5, 4.5])
    assert default.summary()["wt"] == pytest.approx(3.0)
    np.testing.assert_allclose(rel.schedule.end, g.schedule.end)
    assert rel.summary()["wt"] == pytest.approx(16.0)


def test_env_replays_either_decoder():
    ts = resolve_tasks(HAND)
    for dec, end in (("list", [3.5, 1.5, 4.5]), ("release", [2.0, 3.0, 4.0])):
        env = gym.make("HGSP-v0", tasks=ts, cluster=ONE, order=[1, 0, 2], decoder=dec)
        env.reset(seed=0)
        done = False
        while not done:
            _, _, done, _, _ = env.step(0)
        np.testing.assert_allclose(env.unwrapped.schedule().end, end)


def test_bad_decoder_is_a_config_error():
    with pytest.raises(ConfigError, match=r"sagreedy.decoder = 'serial' is not known; allowed: list, release"):
        run("sagreedy", HAND, ONE, decoder="serial")
    with pytest.raises(ConfigError, match=r"sagreedy.decoder = 3"):
        SAGreedy(decoder=3)
    with pytest.raises(ConfigError, match=r"HGSP-v0.decoder = 'fast' is not known"):
        gym.make("HGSP-v0", tasks=resolve_tasks(HAND), cluster=ONE, decoder="fast")
    with pytest.raises(ConfigError, match="unknown sagreedy parameters: serial"):
        run("sagreedy", HAND, ONE, serial=True)  # the former knob is gone, not silently ignored


@pytest.mark.parametrize("preset, published", [("tasks1", 86.0), ("tasks2", 43.0)])
def test_preset_loads_match_published_fifo_utilisation(preset, published):
    p = PRESETS[preset]
    cl = make_cluster(p.cluster)
    util = [summarize(decode(Problem(generate_tasks(preset, s), cl), None, "fifo"))["gpu_util_pct"] for s in range(4)]
    assert abs(np.mean(util) - published) <= 3.0, util


def test_presets_name_the_study_clusters():
    assert {k: PRESETS[k].cluster for k in ("tasks1", "tasks2", "tasks3", "tasks4")} == {
        "tasks1": "small",
        "tasks2": "medium",
        "tasks3": "small",
        "tasks4": "large",
    }
