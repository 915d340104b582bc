"""CGRSP-v0 renderings: text snapshot and Gantt chart of the day so far."""

import numpy as np
import pytest

from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.render import gantt_frame
from gpu_sched_env.core.plotting import MISSED, ON_TIME


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


def _rgb(hex_colour):
    return np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)])


def test_ansi_columns_align_with_provisioning_medium():
    from gpu_sched_env.cgrsp.render import ansi
    from tests.cgrsp.fixtures_tiny import tiny_params, tiny_sim

    p = tiny_params(slots=("fast", "cheap", "fast"), delay_medium=(50.0, 50.0), delay_low=(900.0, 900.0))
    sim = tiny_sim(p, [0.0, 0.0, 0.0, 0.0], [2, 2, 2, 0], [1e6] * 4)
    assert sim.advance()
    sim.stock = [1, 0]  # fast Medium, cheap High (as if drawn so)
    sim.assign(0, 0)  # provisioning (Medium) for 50 s
    sim.assign(1, 1)  # High: starts at once
    text = ansi(sim, np.array([2, 3]), "deadline")
    rows = text.splitlines()
    header = next(r for r in rows if r.startswith("slot"))
    busy = [r for r in rows if "#" in r and ("running" in r or "provisioning" in r)]
    assert any("provisioning (Medium)" in r for r in busy) and any("running" in r for r in busy)
    assert {r.index("#") for r in busy} == {header.index("job")}
    assert {r.index(" min") for r in busy} == {len(max(busy, key=len)) - len(" min")}


def test_rgb_array_bars_have_the_colours_of_the_records():
    env = CGRSPEnv(day="hectic", window=1000, render_mode="rgb_array")
    agent = HeuristicAgent("fifo", env)
    obs, _ = env.reset(seed=42)
    done, step = False, 0
    while not done and env.sim.t < 2.5 * 3600:
        obs, _, done, _, _ = env.step(agent.predict(obs)[0])
        step += 1
        # a frame at every step for the first hour, as RecordVideo takes them; then at every 5th
        # (the incremental drawing must also hold over steps it did not see; ~20 ms a frame)
        if env.sim.t < 3600 or step % 5 == 0 or done or env.sim.t >= 2.5 * 3600:
            img = env.render()
    from gpu_sched_env.cgrsp.render import _RENDERERS, PROVISIONING, GanttRenderer

    r = _RENDERERS[env.sim]
    fr = gantt_frame(env.sim)
    checked = {"run": 0, "provisioning": 0}
    for row in fr.itertuples():
        y0, c0 = r.pixel(row.slot, row.begin / 3600)
        _, c1 = r.pixel(row.slot, row.end / 3600)
        if c1 - c0 < 6 or (row.kind == "run" and row.tight):
            continue
        want = PROVISIONING if row.kind == "provisioning" else (MISSED if row.missed else ON_TIME)
        assert (img[y0, (c0 + c1) // 2] == _rgb(want)).all(), row
        checked[row.kind] += 1
    assert checked["run"] > 100 and checked["provisioning"] > 20
    # drawn incrementally over 2.5 h of steps = drawn from scratch now (bar edges may differ by a pixel)
    fresh = GanttRenderer(env.sim).frame(env.sim, r.title.get_text())
    assert fresh.shape == img.shape
    assert (fresh != img).any(axis=2).mean() < 0.005


def test_record_video_of_a_short_episode(tmp_path):
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo writes videos with moviepy (dev extra)")
    import gymnasium as gym
    import imageio_ffmpeg
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(
        gym.make("CGRSP-hectic-v0", n_jobs=40, window=40, render_mode="rgb_array"),
        str(tmp_path / "videos"),
        episode_trigger=lambda e: True,
        disable_logger=True,
    )
    agent = HeuristicAgent("fifo", env)
    obs, _ = env.reset(seed=3)
    steps, done = 0, False
    while not done:
        obs, _, done, _, _ = env.step(agent.predict(obs)[0])
        steps += 1
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0
    n_frames, _ = imageio_ffmpeg.count_frames_and_secs(str(videos[0]))
    assert n_frames == steps + 1  # the reset frame and one per step
