"""What the per-step reward says about *dispatch* vs *leave idle*, by the offered slot's stock.

Plays a behaviour policy (EDF's job order; at every offered slot it dispatches with
probability ``--p-dispatch`` and otherwise leaves the slot idle) in ``slot`` mode, and reports
the mean step reward of each (action, stock level of the offered slot) under each reward
setting. A usable signal ranks *dispatch on Low* well below *leave idle* and *dispatch on
High* above it. Reproduces the diagnosis behind ``shaping="queue"`` (README, Training).

    python scripts/diagnose_reward.py --seeds 3
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.env import CGRSPEnv
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
        out.append({"action": "dispatch" if dispatch else "leave idle", "stock": level, "other_busy": busy > 0, "reward": r})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--day", default="hectic")
    ap.add_argument("--p-dispatch", type=float, default=0.7)
    a = ap.parse_args()
    frames = []
    for reward, shaping in SETTINGS:
        for seed in range(a.seeds):
            frames.append(pd.DataFrame(rows(reward, shaping, seed, a.p_dispatch, a.day)).assign(setting=f"{reward}/{shaping}"))
    df = pd.concat(frames)
    df = df[df.other_busy]  # the decisions where leaving a slot idle is a real option
    table = df.pivot_table(index=["action", "stock"], columns="setting", values="reward", aggfunc="mean")
    counts = df[df.setting == df.setting.iloc[0]].groupby(["action", "stock"]).size().rename("n")
    print(f"mean step reward [job-hours] on the {a.day} day, {a.seeds} seeds, decisions with another slot busy")
    print(table.join(counts).round(3).to_string())


if __name__ == "__main__":
    main()
