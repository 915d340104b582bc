"""Every action has a defined effect in the JAX env: an illegal one plays its documented substitute.

The substitute (JaxCGRSP's docstring, ``legal.legalise``): *wait* where the mask allows it, else
the lowest legal action. Here it is applied on the host from the mask (NumPy), independently of
the env's code, and the two trajectories must be identical; rule rollouts are bounded.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from gpu_sched_env.cgrsp.jax import StalledRolloutError, evaluate, rollout, stack_days
from gpu_sched_env.cgrsp.jax.legal import why_illegal
from gpu_sched_env.cgrsp.jax.rules import max_steps_of, rollout_batch
from gpu_sched_env.core.errors import InvalidActionError
from tests.cgrsp.jax.helpers import env_for, reset_to

KEY = jax.random.PRNGKey(0)


def substitute(mask: np.ndarray, a: int) -> tuple[int, bool]:
    """The documented substitute, on the host: ``(action to play, was illegal)``."""
    n = mask.size
    if (0 <= a < n and mask[a]) or not mask.any():  # legal, or a finished day (every action ignored)
        return a, False
    return (n - 1 if mask[-1] else int(np.argmax(mask))), True


def subqueue_mask(env, st) -> np.ndarray:
    """``step_subqueue``'s mask from the state (NumPy): a waiting subqueue head × an idle slot, then *wait*."""
    rows = np.asarray(st.ptr) < np.asarray(st.end)
    idle = np.asarray(st.slot_job) < 0
    ok = rows.any() and idle.any() and not bool(st.done)
    future = int(st.n_arrived) < env.spec.n or not idle.all()
    return np.append((rows[:, None] & idle[None, :]).reshape(-1) & ok, future and ok)


def same(a, b) -> bool:
    """Every leaf of two pytrees equal (inf equal to inf), compared on the host.

    (A jitted comparison compiled a program per pytree structure, ~1 s each on a cold cache.)
    """
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))


def same_step(got: tuple, want: tuple) -> bool:
    """Two steps' ``(obs, state, reward, done, info)`` equal but for the illegal-action flag and counter."""
    strip = lambda out: (  # noqa: E731
        out[0],
        out[1].replace(n_invalid=0),
        out[2],
        out[3],
        {k: v for k, v in out[4].items() if k not in ("invalid_action", "n_invalid")},
    )
    return bool(same(strip(got), strip(want)))


def noisy(rng, mask: np.ndarray) -> int:
    """30 % of the steps an action the mask forbids (or out of range), else a legal one."""
    if rng.random() < 0.3:
        bad = np.append(np.flatnonzero(~mask), [-1, mask.size])
        return int(rng.choice(bad))
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("seed", [5, 6])
def test_illegal_play_loses_no_job_and_equals_the_substitutes(seed):
    """Hectic day ``seed`` with 30 % illegal actions: every job completes, and the day equals the one played
    with the substitutes applied on the host (states, observations, rewards, done, step by step)."""
    env = env_for("hectic", "fresh")
    p = env.default_params
    _, st = reset_to(env, seed)
    st2 = st
    rng = np.random.default_rng(seed)
    n_bad = steps = 0
    while not bool(st.done):
        m = np.asarray(env.action_mask(st, p))
        a = noisy(rng, m)
        b, bad = substitute(m, a)
        got, want = env.step(KEY, st, a, p), env.step(KEY, st2, b, p)
        steps += 1
        n_bad += bad
        assert bool(got[4]["invalid_action"]) == bad and not bool(want[4]["invalid_action"]), f"step {steps}"
        assert same_step(got, want), f"step {steps}: action {a} vs substitute {b}"
        (_, st, _, _, info), (_, st2, *_) = got, want
        assert steps <= max_steps_of(env.spec.n)
    assert int(st.n_completed) == env.spec.n == int(info["completed"])  # no job lost
    assert int(st.n_invalid) == int(info["n_invalid"]) == n_bad > 0.2 * steps
    assert np.all(np.isfinite(np.asarray(st.completion)))


def test_every_action_in_every_step_function():
    """At states along a day, every action (and two out of range) through step, step_subqueue and
    step_autoreset equals its substitute, flagged exactly when the mask forbids it."""
    env = env_for("hectic", "fresh")
    p = env.default_params
    _, st = env.reset(jax.random.PRNGKey(8), p)  # a native day: step_autoreset's new days are native
    rng = np.random.default_rng(8)
    for k in range(900):
        m = np.asarray(env.action_mask(st, p))
        if k % 400 == 0:
            for step, mask in (
                (env.step, m),
                (env.step_autoreset, m),
                (env.step_subqueue, subqueue_mask(env, st)),
            ):
                for a in range(-1, mask.size + 1):
                    b, bad = substitute(mask, a)
                    got, want = step(KEY, st, a, p), step(KEY, st, b, p)
                    assert bool(got[4]["invalid_action"]) == bad and same_step(got, want), (step, a, b)
                    assert int(got[1].n_invalid) == int(st.n_invalid) + bad
        _, st, *_ = env.step(KEY, st, int(rng.choice(np.flatnonzero(m))), p)


def test_always_wait_dispatches_every_job_by_substitution():
    """A policy that only waits: where *wait* is illegal (nothing to come), the lowest legal action runs a job,
    so the day ends with every job done and exactly N illegal actions counted."""
    env = env_for("hectic", "fresh")
    days = stack_days([env.materialise(s) for s in (5, 9)])
    out = evaluate(env, lambda st, p: jnp.int32(env.wait_action), days)
    assert np.all(np.asarray(out["completed"]) == env.spec.n)
    assert np.all(np.asarray(out["n_invalid"]) == env.spec.n)


def test_checked_mode_names_the_action_and_why():
    env, checked = env_for("hectic", "fresh"), env_for("hectic", "fresh", checked=True)
    p, c = env.default_params, env.spec.c
    _, st = reset_to(env, 5)
    rng = np.random.default_rng(0)
    found = {}
    while len(found) < 3 and not bool(st.done):  # states with an empty window position, a busy slot, an empty subqueue
        m = np.asarray(env.action_mask(st, p))
        rows = m[:-1].reshape(env.K, c).any(axis=1)
        idle = np.asarray(st.slot_job) < 0
        subs = np.asarray(st.ptr) < np.asarray(st.end)
        if not rows.all():
            found.setdefault("empty", (st, int(np.argmin(rows)) * c + int(np.argmax(idle))))
        if not idle.all():
            found.setdefault("busy", (st, int(np.argmin(idle))))  # window position 0 on a busy slot
        if not subs.all():
            found.setdefault("subqueue", (st, int(np.argmin(subs)) * c + int(np.argmax(idle))))
        _, st, *_ = env.step(KEY, st, int(rng.choice(np.flatnonzero(m))), p)
    st_e, a_e = found["empty"]
    pos = a_e // c
    with pytest.raises(
        Exception,
        match=rf"InvalidActionError: action {a_e} \(window position {pos} on slot {a_e % c}\)"
        rf" is illegal: window position {pos} holds no job",
    ):
        jax.block_until_ready(checked.step(KEY, st_e, a_e, p))
    st_b, a_b = found["busy"]
    with pytest.raises(
        Exception, match=rf"action {a_b} \(window position 0 on slot {a_b}\) is illegal: slot {a_b} is busy"
    ):
        jax.block_until_ready(checked.step(KEY, st_b, a_b, p))
    with pytest.raises(Exception, match=rf"action {env.n_actions + 2} is out of range: the actions are 0 … 15"):
        jax.block_until_ready(checked.step(KEY, st_b, env.n_actions + 2, p))
    st_q, a_q = found["subqueue"]
    with pytest.raises(
        Exception, match=rf"action {a_q} \(subqueue {a_q // c} on slot {a_q % c}\) is illegal: subqueue"
    ):
        jax.block_until_ready(checked.step_subqueue(KEY, st_q, a_q, p))
    legal = int(np.flatnonzero(np.asarray(env.action_mask(st_b, p)))[0])  # legal: the same step as unchecked
    assert bool(same(checked.step(KEY, st_b, legal, p), env.step(KEY, st_b, legal, p)))


def test_why_an_illegal_wait_is_illegal():
    """The message of the one case random play rarely reaches: *wait* with nothing left to come."""
    mask = np.array([True, False, False, False, False])  # 2 rows × 2 slots, then wait
    msg = why_illegal(2, "subqueue", 4, mask, np.array([True, False]), np.array([-1, -1]))
    assert msg.startswith("action 4 (wait) is illegal: no job is left to arrive and no slot is busy")
    assert "holds no job (1 of 2 hold one)" in why_illegal(
        2, "subqueue", 2, mask, np.array([True, False]), np.array([-1, -1])
    )


class _Stuck:
    """An env whose step moves no clock and dispatches nothing (a stalled policy or dynamics)."""

    def __init__(self, env):
        self.spec, self.default_params, self.reset_to_day = env.spec, env.default_params, env.reset_to_day
        self.step = jax.jit(self._step)  # rollouts play an env's jitted step, as JaxCGRSP's

    def _step(self, key, s, action, params):
        return None, s.replace(n_steps=s.n_steps + 1), 0.0, s.done, {}


def test_a_stalled_rollout_is_bounded_and_named():
    env = env_for("hectic", "fresh")
    stuck = _Stuck(env)
    _, st = reset_to(env, 5)
    out = jax.jit(lambda s: rollout(stuck, lambda s_, p: jnp.int32(0), s, env.default_params, max_steps=7))(st)
    assert not bool(out.done) and int(out.n_steps) == 7  # the loop stopped at its cap
    days = stack_days([env.materialise(s) for s in (5, 6)])
    starts = jax.jit(jax.vmap(lambda d: env.reset_to_day(d)[1]))(days)
    both = jax.jit(lambda s: rollout_batch(stuck, lambda s_, p: jnp.int32(0), s, env.default_params, max_steps=7))
    assert np.asarray(both(starts).n_steps).tolist() == [7, 7]  # evaluate's batched loop stops at the cap too
    with pytest.raises(
        StalledRolloutError, match=r"'stall': 2 of 2 days not done after max_steps = 7 steps \(days \[0, 1\]\)"
    ):

        def stall(s, p):
            return jnp.int32(0)

        evaluate(stuck, stall, days, max_steps=7)
    assert max_steps_of(env.spec.n) == 3 * 950 and max_steps_of(950, holds=4) == 3 * 950 + 4 * 2851


def test_checked_error_is_the_invalid_action_error_class():
    """The host callback raises InvalidActionError itself (CGRSP-v0's class); JAX carries its message."""
    from gpu_sched_env.cgrsp.jax.legal import raise_illegal

    with pytest.raises(InvalidActionError, match="action 3 is out of range"):
        raise_illegal(
            1,
            "window position",
            np.array([0, 3]),
            np.array([False, True]),
            np.ones((2, 3), bool),
            np.ones((2, 2), bool),
            np.full((2, 1), -1),
        )
    raise_illegal(1, "window position", 0, np.array(False), np.ones(3, bool), np.ones(2, bool), np.full(1, -1))


@pytest.mark.slow
def test_illegal_play_command_reports_no_lost_job(capsys):
    """``python -m studies bench jax --part illegal`` (the 100-day measurement of docs/cgrsp_env.md), on 3 days."""
    from gpu_sched_env.cgrsp.jax.illegal import main, play

    out = play(["--days", "3", "--day", "surge", "--json"])
    assert main(["--days", "1", "--day", "surge"]) == 0
    assert out["lost_jobs"] == 0 and out["illegal_actions"] > 0.2 * out["steps"]
    assert '"lost_jobs": 0' in capsys.readouterr().out
