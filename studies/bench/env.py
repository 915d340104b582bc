"""Benchmark CGRSP-v0 env steps per second against CartPole-v1 measured in the same run.

Usage::

    .venv/bin/python -m studies bench env                      # hectic day, ~10 s
    .venv/bin/python -m studies bench env --days hectic normal --steps 20000
    .venv/bin/python -m studies bench env --gantt runs/cgrsp_env/gantt_hectic_fifo.png
    .venv/bin/python -m studies bench env --render             # only ms per rgb_array frame

Every env is built with ``gymnasium.make`` (so each carries Gymnasium's default wrappers)
and stepped in the same kind of loop: random legal actions (CGRSP: uniform over
``info["action_mask"]``; CartPole: ``action_space.sample()``), resetting at episode end.
The heuristic rows drive the env with :class:`gpu_sched_agents.heuristics.cgrsp_agents.HeuristicAgent`.
The table is written to ``runs/bench_env/bench_env.csv``.

``--render``: ms per ``render_mode="rgb_array"`` frame on a hectic day (seed 42, FIFO, every
step rendered, as ``RecordVideo`` does) for the incremental renderer, beside the full
redraw (``render.gantt_figure``) timed on every 25th of the same frames; wall and CPU time
(the CPU time of this process is less disturbed by other load on the machine). Target:
≤ 50 ms a frame.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd

import gpu_sched_env  # noqa: F401  (registers the ids)
from gpu_sched_agents.heuristics.cgrsp_agents import HeuristicAgent
from gpu_sched_env.core.io import atomic_write_table


def bench_cartpole(steps: int, seed: int) -> float:
    """Steps per second of CartPole-v1 under random actions (the reference)."""
    env = gym.make("CartPole-v1")
    env.reset(seed=seed)
    env.action_space.seed(seed)
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - t0)


def bench_cgrsp(day: str, steps: int, seed: int, agent: str | None, window: int | None) -> tuple[float, int]:
    """Steps per second, and episodes finished, for random masked actions or a heuristic."""
    kw = {} if window is None else {"window": window}
    env = gym.make(f"CGRSP-{day}-v0", **kw)
    rng = np.random.default_rng(seed)
    heur = HeuristicAgent(agent, env) if agent else None
    obs, info = env.reset(seed=seed)
    episodes = 0
    t0 = time.perf_counter()
    for _ in range(steps):
        if heur is not None:
            a = heur.predict(obs)[0]
        else:
            legal = np.flatnonzero(info["action_mask"])
            a = legal[int(rng.random() * legal.size)]
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            episodes += 1
            obs, info = env.reset()
    return steps / (time.perf_counter() - t0), episodes


def save_gantt(path: Path, day: str, seed: int, policy: str, hours: float) -> None:
    """Run ``policy`` through the env (full window) for ``hours`` and save the Gantt PNG."""
    import matplotlib.pyplot as plt

    env = gym.make(f"CGRSP-{day}-v0", window=2000, render_mode="rgb_array")
    agent = HeuristicAgent(policy, env)
    obs, _ = env.reset(seed=seed)
    done = False
    while not done and env.unwrapped.sim.t < hours * 3600.0:
        obs, _, done, _, _ = env.step(agent.predict(obs)[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    plt.imsave(path, env.render())
    print(f"wrote {path}")


def bench_render(hours: float, every: int = 25) -> None:
    """Time rgb_array frames (incremental) and full redraws on the same hectic-day frames."""
    from gpu_sched_env.cgrsp import render

    env = gym.make("CGRSP-hectic-v0", window=2000, render_mode="rgb_array")
    agent = HeuristicAgent("fifo", env)
    obs, _ = env.reset(seed=42)
    inc: list[tuple[float, float]] = []
    full: list[tuple[float, float]] = []
    done = False
    while not done and env.unwrapped.sim.t < hours * 3600.0:
        obs, _, done, _, _ = env.step(agent.predict(obs)[0])
        w0, c0 = time.perf_counter(), time.process_time()
        env.render()
        inc.append((time.perf_counter() - w0, time.process_time() - c0))
        if len(inc) % every == 0:
            w0, c0 = time.perf_counter(), time.process_time()
            fig = render.gantt_figure(env.unwrapped.sim)
            fig.canvas.draw()
            np.asarray(fig.canvas.buffer_rgba())
            render.plt.close(fig)
            full.append((time.perf_counter() - w0, time.process_time() - c0))
    a, b = 1000 * np.array(inc), 1000 * np.array(full)
    print(
        f"rgb_array frames of a hectic day (seed 42, FIFO, {len(inc)} steps to t = {env.unwrapped.sim.t / 3600:.2f} h)"
    )
    print(
        f"{'renderer':28s} {'frames':>6s} {'wall mean':>9s} {'wall p95':>8s} {'wall max':>8s} {'CPU mean':>8s} "
        f"{'CPU p95':>7s}  [ms]"
    )
    for name, x in (("incremental (env.render)", a), ("full redraw (gantt_figure)", b)):
        print(
            f"{name:28s} {len(x):6d} {x[:, 0].mean():9.1f} {np.percentile(x[:, 0], 95):8.1f} {x[:, 0].max():8.1f} "
            f"{x[:, 1].mean():8.1f} {np.percentile(x[:, 1], 95):7.1f}"
        )
    print(
        f"full redraw / incremental (CPU mean): ×{b[:, 1].mean() / a[:, 1].mean():.0f}; "
        f"target ≤ 50 ms a frame: {'yes' if a[:, 1].mean() <= 50 else 'NO'} (CPU mean), "
        f"{'yes' if a[:, 0].mean() <= 50 else 'NO'} (wall mean)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print (and write) the steps/s table, or only the frame times with ``--render``; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", nargs="+", default=["hectic"], choices=["quiet", "normal", "hectic", "surge"])
    ap.add_argument("--steps", type=int, default=20000, help="steps per measurement")
    ap.add_argument("--agents", nargs="*", default=["fifo", "cadr", "rh"], help="heuristic agents to time")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("runs/bench_env/bench_env.csv"))
    ap.add_argument("--gantt", type=Path, default=None, help="also save a Gantt PNG of a hectic day (seed 42)")
    ap.add_argument("--gantt-policy", default="fifo", help="heuristic driving the Gantt run")
    ap.add_argument("--gantt-hours", type=float, default=3.0, help="simulated hours drawn in the Gantt PNG")
    ap.add_argument("--render", action="store_true", help="only time rgb_array frames")
    ap.add_argument("--render-hours", type=float, default=4.0, help="simulated hours of the rendered run")
    args = ap.parse_args(argv)
    if args.render:
        bench_render(args.render_hours)
        return 0
    if args.steps < 1:
        ap.error(f"--steps = {args.steps}: must be >= 1")

    cart = bench_cartpole(args.steps, args.seed)
    rows = [{"env": "CartPole-v1", "driver": "random", "window": "", "steps_per_s": cart, "episodes": None}]
    for day in args.days:
        for agent in [None, *args.agents]:
            windows = [None] if agent is None else [None, 2000]
            for w in windows:
                sps, eps = bench_cgrsp(day, args.steps, args.seed, agent, w)
                rows.append(
                    {
                        "env": f"CGRSP-{day}-v0",
                        "driver": agent or "random masked",
                        "window": w or 16,
                        "steps_per_s": sps,
                        "episodes": eps,
                    }
                )
    df = pd.DataFrame(rows)
    df["ratio_to_cartpole"] = df.steps_per_s / cart
    atomic_write_table(args.out, df)
    with pd.option_context("display.width", 120, "display.float_format", "{:,.3f}".format):
        print(df.to_string(index=False))
    print(f"wrote {args.out}")
    if args.gantt is not None:
        save_gantt(args.gantt, "hectic", 42, args.gantt_policy, args.gantt_hours)
    return 0
