"""One evaluation path for every agent with an SB3-style ``predict`` on ``CGRSPEnv``.

Heuristic agents (:class:`gpu_sched_agents.heuristics.cgrsp_agents.HeuristicAgent`) and trained
Stable-Baselines3 / sb3-contrib models are run the same way: one episode per seed, the
simulator's run summary (spec §2 metrics) plus the episode return, step count and the
summed raw reward parts.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import pandas as pd

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig, as_env_config
from gpu_sched_env.cgrsp.env import REWARD_PARTS, CGRSPEnv
from gpu_sched_env.cgrsp.rewards import summary_objective


def _label(agent: Any) -> str:
    return str(getattr(agent, "name", None) or type(agent).__name__)


def run_episode(agent: Any, env: Any, seed: int, deterministic: bool = True) -> dict[str, Any]:
    """Run one day with ``agent`` on ``env`` (reset with ``seed``); return the summary row.

    ``env`` is a :class:`CGRSPEnv` or a wrapper of one (masks and settings are read from
    ``env.unwrapped``).
    """
    base: CGRSPEnv = env.unwrapped
    wants_mask = "action_masks" in inspect.signature(agent.predict).parameters  # MaskablePPO
    obs, _ = env.reset(seed=int(seed))
    state, start = None, True
    ret, steps, done = 0.0, 0, False
    info: dict[str, Any] = {}
    while not done:
        kw = {"action_masks": base.action_masks()} if wants_mask else {}
        action, state = agent.predict(obs, state=state, episode_start=start, deterministic=deterministic, **kw)
        start = False
        obs, reward, done, truncated, info = env.step(action)
        ret += reward
        steps += 1
        done = done or truncated
    row = dict(info["summary"])
    row.update(
        policy=_label(agent),
        episode_return=ret,
        steps=steps,
        window=base.window,
        order=base.order,
        **{f"raw_{k}": float(info["episode_raw"][k]) for k in REWARD_PARTS},
        # what the env's reward preset is judged on (one definition: rewards.summary_objective)
        objective=summary_objective(info["summary"], base.objective_weights),
    )
    return row


def evaluate(
    agent: Any,
    env_config: CGRSPEnvConfig | dict[str, Any] | None = None,
    seeds: Iterable[int] = (0,),
    deterministic: bool = True,
    progress: bool = False,
) -> pd.DataFrame:
    """Summaries of ``agent`` on ``CGRSPEnv(env_config)``, one row per seed.

    Args:
        agent: anything with ``predict(obs, state=None, episode_start=None,
            deterministic=True)``; if it has ``bind(env)`` (heuristic agents) it is bound to
            the evaluation env; if ``predict`` takes ``action_masks`` (MaskablePPO) the
            env's mask is passed.
        env_config: the env's :class:`CGRSPEnvConfig`, or its keywords (``day``, ``window`` …).
        seeds: run seeds; seed ``s`` is the same day ``simulate(..., seed=s)`` simulates.
        deterministic: passed to ``predict``.
        progress: show a progress bar.
    """
    env = CGRSPEnv(as_env_config(env_config))
    if hasattr(agent, "bind"):
        agent.bind(env)
    seeds = list(seeds)
    if progress:
        from tqdm import tqdm

        seeds = tqdm(seeds, desc=_label(agent))
    rows = [run_episode(agent, env, s, deterministic) for s in seeds]
    env.close()
    return pd.DataFrame(rows)


__all__ = ["evaluate", "run_episode"]
