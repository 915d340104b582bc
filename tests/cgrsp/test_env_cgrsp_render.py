"""CGRSP-v0 renderings: text snapshot and Gantt chart of the day so far."""

import numpy as np
import pytest

from agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.render import gantt_frame
from gpu_sched_env.core.plotting import MISSED


def run_until(env, policy, hours, seed=42):
    agent = HeuristicAgent(policy, env)
    obs, _ = env.reset(seed=seed)
    done = False
    while not done and env.sim.t < hours * 3600:
        obs, _, done, _, _ = env.step(agent.predict(obs)[0])
    return done


def test_ansi_snapshot_lists_clock_stock_slots_and_window():
    env = CGRSPEnv(day="hectic", window=6, render_mode="ansi")
    run_until(env, "fifo", 0.5)
    text = env.render()
    assert isinstance(text, str) and text.endswith("\n")
    assert "UTC" in text and "stock: RTX 3090" in text
    for s in range(5):
        assert f"\n   {s}  RTX" in text
    assert "window (deadline order)" in text
    assert f"waiting {len(env.sim.waiting)}" in text


def test_ansi_after_the_day_says_so():
    env = CGRSPEnv(day="quiet", render_mode="ansi")
    assert run_until(env, "edf", 1e9)
    assert "day over" in env.render()


def test_rgb_array_is_an_image_with_red_misses():
    env = CGRSPEnv(day="hectic", window=1000, render_mode="rgb_array")
    run_until(env, "fifo", 2.5)  # FIFO misses tight jobs by then
    assert gantt_frame(env.sim).missed.any()
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 200 and img.shape[1] > 600
    red = np.array([int(MISSED[i : i + 2], 16) for i in (1, 3, 5)])
    assert (np.abs(img.astype(int) - red).sum(axis=2) < 10).sum() > 50  # red pixels drawn


def test_render_without_mode_warns_and_before_reset_raises():
    env = CGRSPEnv(day="quiet")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
    with pytest.raises(RuntimeError, match="reset"):
        CGRSPEnv(day="quiet", render_mode="ansi").render()


def test_gantt_frame_never_shows_the_future():
    env = CGRSPEnv(day="hectic", window=1000)
    run_until(env, "rh", 3.0)  # RH defers; hectic mornings have Low-stock delays
    t = env.sim.t
    fr = gantt_frame(env.sim)
    assert (fr.end <= t).all() and (fr.begin <= fr.end).all()
    prov = fr[fr.kind == "provisioning"]
    busy = [j for j in env.sim.slot_job if j >= 0]
    assert set(busy) <= set(fr.job)
    # a job still provisioning is drawn up to now, not to its (private) realised start
    for j in busy:
        if env.sim.realised_starts()[j] > t:
            assert prov[prov.job == j].end.item() == t
