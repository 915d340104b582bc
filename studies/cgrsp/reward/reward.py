"""What the per-step reward says about *dispatch* vs *leave idle*, by the offered slot's stock.

Plays a behaviour policy (EDF's job order; at every offered slot it dispatches with
probability ``--p-dispatch`` and otherwise leaves the slot idle) in ``slot`` mode, and reports
the mean step reward of each (action, stock level of the offered slot) under each reward
setting. A usable signal ranks *dispatch on Low* well below *leave idle* and *dispatch on
High* above it. Reproduces the diagnosis behind ``shaping="queue"`` (docs/results_learners.md).

    python -m studies reward --seeds 3
    python -m studies reward --mc --seeds 3   # Monte-Carlo: dispatch vs idle at Low

``--mc`` checks the *value* of the choice, not the step reward: at every offer of a Low-stock
slot while another slot is busy it clones the env (pickling), dispatches in one copy and
leaves the slot idle in the other, continues both with EDF's rule for ``--horizon`` steps, and
reports the mean difference of the discounted (γ = ``--gamma``) and undiscounted returns
(dispatch − idle, job-hours, with its standard error).
"""

from __future__ import annotations

import argparse
import pickle

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.fleet import LOW
from gpu_sched_env.cgrsp.params import STOCK_LEVELS

SETTINGS = (("study", "none"), ("deadline", "none"), ("study", "queue"), ("deadline", "queue"))


def rows(reward: str, shaping: str, seed: int, p_dispatch: float, day: str) -> list[dict]:
    env = CGRSPEnv(day=day, action_mode="slot", reward=reward, shaping=shaping, window=16)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    out, done = [], False
    while not done:
        mask = env.action_masks()
        slot = env.offered_slot
        level = STOCK_LEVELS[env.sim.stock[env.sim.fleet.slot_type[slot]]]
        busy = sum(1 for j in env.sim.slot_job if j >= 0)
        dispatch = not mask[env.wait_action] or (mask[0] and rng.random() < p_dispatch)
        a = 0 if dispatch else env.wait_action
        _, r, done, _, _ = env.step(a)
        out.append(
            {"action": "dispatch" if dispatch else "leave idle", "stock": level, "other_busy": busy > 0, "reward": r}
        )
    return out


def _continue(env: CGRSPEnv, first: int, horizon: int, gamma: float) -> tuple[float, float]:
    """(discounted, undiscounted) return of ``first`` then EDF's rule for ``horizon`` steps."""
    disc, ret, g, a = 0.0, 0.0, 1.0, first
    for _ in range(horizon):
        _, r, done, _, _ = env.step(a)
        disc, ret, g = disc + g * r, ret + r, g * gamma
        if done:
            break
        a = 0 if env.action_masks()[0] else env.wait_action
    return disc, ret


def monte_carlo(seeds: int, day: str, reward: str, horizon: int, gamma: float) -> np.ndarray:
    """Rows of (discounted diff, undiscounted diff), dispatch − idle, at Low-stock offers."""
    diffs = []
    for seed in range(seeds):
        env = CGRSPEnv(day=day, action_mode="slot", reward=reward)
        env.reset(seed=seed)
        done = False
        while not done:
            mask, sim = env.action_masks(), env.sim
            low = sim.stock[sim.fleet.slot_type[env.offered_slot]] == LOW
            if low and mask[0] and mask[env.wait_action] and any(j >= 0 for j in sim.slot_job):
                a = _continue(pickle.loads(pickle.dumps(env)), 0, horizon, gamma)
                b = _continue(pickle.loads(pickle.dumps(env)), env.wait_action, horizon, gamma)
                diffs.append((a[0] - b[0], a[1] - b[1]))
            _, _, done, _, _ = env.step(0 if mask[0] else env.wait_action)
    return np.asarray(diffs)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--day", default="hectic")
    ap.add_argument("--p-dispatch", type=float, default=0.7)
    ap.add_argument("--mc", action="store_true", help="Monte-Carlo value of dispatch vs idle at Low stock")
    ap.add_argument("--reward", default="deadline", help="reward preset for --mc")
    ap.add_argument("--horizon", type=int, default=400)
    ap.add_argument("--gamma", type=float, default=0.995)
    a = ap.parse_args(argv)
    if a.mc:
        d = monte_carlo(a.seeds, a.day, a.reward, a.horizon, a.gamma)
        if len(d) < 2:
            print(f"{len(d)} Low-stock offers with another slot busy ({a.day}, {a.seeds} seeds): too few to compare")
            return 0
        se = d.std(axis=0, ddof=1) / np.sqrt(len(d))
        print(
            f"{len(d)} Low-stock offers ({a.day}, {a.seeds} seeds, reward {a.reward}, {a.horizon} steps of EDF after):"
        )
        print(f"dispatch − idle, discounted (γ={a.gamma}): {d[:, 0].mean():.2f} ± {se[0]:.2f} job-hours")
        print(f"dispatch − idle, undiscounted: {d[:, 1].mean():.2f} ± {se[1]:.2f} job-hours")
        return 0
    frames = []
    for reward, shaping in SETTINGS:
        for seed in range(a.seeds):
            frames.append(
                pd.DataFrame(rows(reward, shaping, seed, a.p_dispatch, a.day)).assign(setting=f"{reward}/{shaping}")
            )
    df = pd.concat(frames)
    df = df[df.other_busy]  # the decisions where leaving a slot idle is a real option
    table = df.pivot_table(index=["action", "stock"], columns="setting", values="reward", aggfunc="mean")
    counts = df[df.setting == df.setting.iloc[0]].groupby(["action", "stock"]).size().rename("n")
    print(f"mean step reward [job-hours] on the {a.day} day, {a.seeds} seeds, decisions with another slot busy")
    print(table.join(counts).round(3).to_string())
    return 0
