"""Play JAX days side by side and keep one row per step: the loop the JAX diagnostics share.

``reward --part scale`` (the rule's steps) and ``versus-rule --part timing`` (an actor's steps, the rule asked
in the same state) both need every step of whole days, not the per-day sums of
:func:`gpu_sched_env.cgrsp.jax.rules.evaluate`. :func:`play_steps` runs the days of ``keys`` in one
compiled ``while_loop``, each step's row written to a buffer of the env's step cap
(:func:`~gpu_sched_env.cgrsp.jax.rules.cap_of`, the bound a day cannot pass:
:func:`~gpu_sched_env.cgrsp.jax.rules.check_done` names a day that does).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def play_steps(env: Any, move: Callable, keys: Any, width: int, what: str, *args: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(rows [cap, days, width], kept [cap, days])`` of ``move`` over the days of ``keys``.

    ``move(state, key, *args) -> (next state, row f[width], keep)`` is one step of one day; a row is
    kept where ``keep`` (e.g. the day not over yet). ``args`` (an actor's weights) are arguments of
    the compiled program, not constants baked into it. ``what`` names the days in the error of a
    day that did not end within the cap.
    """
    import jax
    import jax.numpy as jnp
    from jax import lax

    from gpu_sched_env.cgrsp.jax.rules import cap_of, check_done

    p, cap = env.default_params, cap_of(env)

    @jax.jit
    def play(keys, *args):
        _, s = jax.vmap(env.reset, in_axes=(0, None))(keys, p)
        rows = jnp.zeros((cap, len(keys), width), jnp.float32)
        kept = jnp.zeros((cap, len(keys)), bool)
        one = jax.vmap(lambda s, k: move(s, k, *args))

        def body(c):
            i, s, rows, kept = c
            s, row, keep = one(s, jax.random.split(jax.random.fold_in(keys[0], i), len(keys)))
            return i + 1, s, rows.at[i].set(row.astype(jnp.float32)), kept.at[i].set(keep)

        _, s, rows, kept = lax.while_loop(lambda c: (c[0] < cap) & ~c[1].done.all(), body, (0, s, rows, kept))
        return s.done, rows, kept

    done, rows, kept = jax.device_get(play(keys, *args))
    check_done(done, what, cap)
    return rows, kept


def actor_arguments(ap: argparse.ArgumentParser, days: int) -> None:
    """The options of a diagnostic of an exported joint-design actor: the file, the regime, its overrides, days."""
    from studies.cgrsp.learning.parity import REGIMES

    ap.add_argument("actor", type=Path, help="an exported algo=ppo_jax actor (.npz) of the joint design")
    ap.add_argument("--regime", default="hectic_fresh", choices=list(REGIMES))
    ap.add_argument("--overrides", nargs="*", default=[], help="Hydra overrides the actor was trained with")
    ap.add_argument("--days", type=int, default=days, help="selection days (keys 10 000 …)")


def check_actor_arguments(ap: argparse.ArgumentParser, args: argparse.Namespace, min_days: int) -> None:
    """Argparse's error (exit 2, naming the option) for a missing actor file or too few days."""
    if not args.actor.is_file():
        ap.error(f"actor = {str(args.actor)!r} is not a file (an exported .npz of algo=ppo_jax)")
    if args.days < min_days:
        ap.error(f"--days = {args.days}: need at least {min_days}")


__all__ = ["actor_arguments", "check_actor_arguments", "play_steps"]
