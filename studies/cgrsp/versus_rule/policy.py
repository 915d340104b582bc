"""Why does a trained CGRSP policy wait? Argmax vs two-level mode vs sampled play.

For a run directory (or a model file and its run's config) this plays held-out days three
ways and, at every decision where a dispatch was legal, records how often the chosen action
is the no-op and the policy's probability of the no-op there:

* ``argmax``: the joint argmax over all actions (SB3's default deterministic action);
* ``factored``: the no-op only if p(no-op) > 0.5, else the likeliest dispatch
  (:func:`gpu_sched_agents.rl.policies.factored_mode`, the project's deterministic action);
* ``sampled``: actions drawn from the policy.

A large gap between the no-op share under ``argmax`` and the mean p(no-op) is the artefact
of a flat categorical: the dispatch probability is spread over many near-equivalent actions,
so the single no-op wins the argmax although the policy dispatches most of the time.

    python -m studies versus-rule --part policy runs/train/ppo_hectic_seed0/<time> --model final_model.zip --seeds 5
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch as th
from omegaconf import OmegaConf

from gpu_sched_agents.rl.envs import TEST_SEED0, env_config
from gpu_sched_agents.rl.policies import factored_mode
from gpu_sched_agents.rl.registry import load_model
from gpu_sched_env.cgrsp.env import CGRSPEnv
from gpu_sched_env.cgrsp.params import STOCK_LEVELS

MODES = ("argmax", "factored", "sampled")


def play(model: Any, env: CGRSPEnv, seed: int, mode: str, rng: np.random.Generator) -> dict[str, float]:
    """One day played by ``model`` in ``mode``; the no-op statistics and the run summary."""
    obs, _ = env.reset(seed=seed)
    policy = model.policy
    noop = env.wait_action
    n_choice = n_noop = 0
    p_noop: list[float] = []
    by_level: dict[str, list[bool]] = {}
    picks: list[tuple[bool, int]] = []  # per dispatch: (first window position?, complexity class)
    done = False
    while not done:
        mask = env.action_masks()
        with th.no_grad():
            ob, _ = policy.obs_to_tensor(obs)
            probs = policy.get_distribution(ob, action_masks=mask[None]).distribution.probs[0]
        if mode == "argmax":
            a = int(th.argmax(probs))
        elif mode == "factored":
            a = int(factored_mode(probs[None])[0])
        else:
            p = probs.numpy().astype(float)
            a = int(rng.choice(p.size, p=p / p.sum()))
        if mask[:noop].any() and mask[noop]:  # a real choice between dispatching and the no-op
            n_choice += 1
            n_noop += a == noop
            p_noop.append(float(probs[noop]))
            if env.offered_slot is not None:  # slot mode: the no-op by the offered slot's stock
                level = STOCK_LEVELS[env.sim.stock[env.sim.fleet.slot_type[env.offered_slot]]]
                by_level.setdefault(level, []).append(a == noop)
        if a != noop:
            picks.append((a == 0, env.sim.complexity[int(env.window_jobs[a])]))
        obs, _, done, _, info = env.step(a)
    s = info["summary"]
    head = np.array([p[0] for p in picks], bool)
    cx = np.array([p[1] for p in picks], int)
    return {
        "mode": mode,
        "seed": seed,
        "miss_pct": s["miss_pct"],
        "mean_wait_min": s["mean_wait_min"],
        "noop_share": n_noop / max(n_choice, 1),
        "mean_p_noop": float(np.mean(p_noop)) if p_noop else float("nan"),
        "decisions": n_choice,
        **{f"noop_share_{lv}": float(np.mean(by_level[lv])) if lv in by_level else float("nan") for lv in STOCK_LEVELS},
        # the job choice: how often the dispatch took the window's first job (EDF's, in
        # deadline order), and the complexity mix of what was dispatched
        "first_job_share": float(head.mean()) if head.size else float("nan"),
        **{
            f"dispatched_{k}": float(np.mean(cx == i)) if cx.size else float("nan")
            for i, k in enumerate(("low", "medium", "high"))
        },
    }


def diagnose(run_dir: Path, model_file: str, seeds: list[int], modes: tuple[str, ...] = MODES) -> pd.DataFrame:
    """One row per mode × seed."""
    cfg = OmegaConf.load(run_dir / "config.yaml")
    th.set_num_threads(int(cfg.train.get("torch_threads", 1)))
    model = load_model(cfg.algo.name, run_dir / model_file, device="cpu")
    if not hasattr(model.policy, "get_distribution"):
        raise SystemExit(
            f"{cfg.algo.name}: this diagnostic needs a policy-gradient model (ppo), not {type(model).__name__}"
        )
    env = CGRSPEnv(env_config(cfg))
    rng = np.random.default_rng(0)
    return pd.DataFrame([play(model, env, s, m, rng) for m in modes for s in seeds])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--model", default="final_model.zip")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed0", type=int, default=TEST_SEED0)
    a = ap.parse_args(argv)
    if not (a.run_dir / "config.yaml").exists() or not (a.run_dir / a.model).exists():
        ap.error(f"{a.run_dir} needs config.yaml and {a.model} (a run directory written by train.py)")
    df = diagnose(a.run_dir, a.model, list(range(a.seed0, a.seed0 + a.seeds)))
    cols = [
        "miss_pct",
        "mean_wait_min",
        "noop_share",
        "mean_p_noop",
        *(f"noop_share_{lv}" for lv in STOCK_LEVELS),
        "first_job_share",
    ]
    print(df.groupby("mode", sort=False)[cols].mean().round(3).to_string())
    return 0
