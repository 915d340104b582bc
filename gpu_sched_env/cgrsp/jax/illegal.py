"""Random play with a share of illegal actions: the JAX env's substitutes lose no job.

    python -m studies bench jax --part illegal [--day hectic] [--stock fresh] [--days 100] [--share 0.3] [--json]

At each step, with probability ``share`` the action is drawn uniformly from the actions the
mask forbids (where there are any), else uniformly from the legal ones; the env plays each
illegal action as its substitute (:func:`~gpu_sched_env.cgrsp.jax.legal.legalise`). Native days
(``--days`` keys), vmapped, each played to its end by the bounded :func:`.rules.rollout`. Prints
the days, the illegal actions played, and the jobs lost (a day's N minus its completed jobs).
"""

from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.jax.bench import joint_heads_config, random_legal
from gpu_sched_env.cgrsp.jax.env import JaxCGRSP
from gpu_sched_env.cgrsp.jax.rules import cap_of, check_done, rollout
from gpu_sched_env.cgrsp.jax.types import Day, EnvParams, EnvState
from gpu_sched_env.core.errors import check_number


def noisy_action(mask: jnp.ndarray, key: jax.Array, share: float) -> jnp.ndarray:
    """With probability ``share`` a uniform masked-out action (if any), else a uniform legal one."""
    u = jax.random.uniform(key, (3,))
    bad = ~mask
    illegal = (u[0] < share) & jnp.any(bad)
    return jnp.where(illegal, random_legal(bad, u[1]), random_legal(mask, u[2]))


def illegal_play(
    env: JaxCGRSP, days_or_keys, share: float, key: jax.Array, params: EnvParams | None = None
) -> dict[str, np.ndarray]:
    """Per day (NumPy arrays): ``completed``, ``n_jobs``, ``n_invalid``, ``steps`` of random play with illegal actions.

    ``days_or_keys``: a stacked :class:`Day` (``rules.stack_days``) or native-day keys. The step
    draws come from ``key`` folded with the day's index and the step count (a pure function of
    the state, as :func:`.rules.rollout` needs). Raises ``StalledRolloutError`` if a day does
    not end within :func:`.rules.cap_of` its env's steps.
    """
    check_number("share", share, lo=0.0, hi=1.0)
    params = env.default_params if params is None else params

    def one(x, i):
        _, s = env._reset_to_day(x, params) if isinstance(x, Day) else env._reset(x, params)
        k = jax.random.fold_in(key, i)

        def act(st: EnvState, p: EnvParams) -> jnp.ndarray:
            return noisy_action(env._action_mask(st, p), jax.random.fold_in(k, st.n_steps), share)

        s = rollout(env, act, s, params)
        return {"completed": s.n_completed, "n_invalid": s.n_invalid, "steps": s.n_steps, "done": s.done}

    n_days = jax.tree_util.tree_leaves(days_or_keys)[0].shape[0]
    out = jax.device_get(jax.jit(jax.vmap(one))(days_or_keys, jnp.arange(n_days)))
    check_done(out.pop("done"), f"illegal play (share {share})", cap_of(env))
    out["n_jobs"] = np.full(n_days, env.spec.n)
    return {k: np.asarray(v) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    """The command: :func:`play`; exit status 1 if a job was lost, else 0."""
    return int(play(argv)["lost_jobs"] > 0)


def play(argv: list[str] | None = None) -> dict:
    """Play ``--days`` native days with ``--share`` illegal actions; print the lost jobs (``--json``: one object)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--day", default="hectic", help="day type (default hectic)")
    ap.add_argument("--stock", default="fresh", help="'fresh' or a Markov mean dwell D in seconds")
    ap.add_argument("--days", type=int, default=100)
    ap.add_argument("--share", type=float, default=0.3, help="probability of an illegal action per step")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true", help="print one JSON object last")
    a = ap.parse_args(argv)
    check_number("days", a.days, lo=1, integer=True)
    stock = {} if a.stock == "fresh" else {"stock_process": "markov", "stock_dwell_s": float(a.stock)}
    env = JaxCGRSP.from_config(joint_heads_config(a.day, **stock), records=False)
    keys = jax.random.split(jax.random.PRNGKey(a.seed), a.days)
    res = illegal_play(env, keys, a.share, jax.random.PRNGKey(a.seed + 1))
    lost = res["n_jobs"] - res["completed"]
    out = {
        "day": a.day,
        "stock": a.stock,
        "days": a.days,
        "share": a.share,
        "steps": int(res["steps"].sum()),
        "illegal_actions": int(res["n_invalid"].sum()),
        "lost_jobs": int(lost.sum()),
        "days_with_lost_jobs": int((lost > 0).sum()),
    }
    print(json.dumps(out) if a.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return out
