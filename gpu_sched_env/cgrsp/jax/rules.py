"""Rules as pure JAX policies, and a vmapped evaluation of any policy over days.

A :class:`Rule` maps ``(state, params)`` to an action: SPT and ``spt_rescue_defer_exp`` in the
joint_heads action space (:meth:`JaxCGRSP.step`), FIFO in the subqueue space
(:meth:`JaxCGRSP.step_subqueue`): the heads cannot express FIFO, since the oldest waiting job
may be a loose job behind its class's tight head.

The reference rules (``gpu_sched_agents.heuristics.cgrsp``) return a plan of assignments at a
decision point, which CGRSP-v0 plays one per step. A pure policy has no memory, so the
deferring rule rebuilds the decision point's state (the jobs dispatched at this instant go
back to the queue, their slots back to idle; ``state.dp_count`` says how many) and plays entry
``dp_count`` of the plan. SPT and FIFO give the same plan either way (each entry takes the
best slot still idle). The deferral test is :func:`deferred`, the job order and placement
:func:`rescue_plan`: one small function each, to follow the reference if it changes
(``tests/cgrsp/jax`` compares them job for job with ``simulate()``). The reference's
``defer_gap`` and ``slot_score`` knobs (the rule's two corrections, on by default) are static
arguments here (:func:`defer_exp_rule`), so the rule as published before them replays too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from gpu_sched_env.cgrsp.jax.core import INF, NEVER, band_of, n_waiting
from gpu_sched_env.cgrsp.jax.mix import resolve
from gpu_sched_env.cgrsp.jax.obs import defer_cost, next_event_gap, window
from gpu_sched_env.cgrsp.jax.types import N_SUB, EnvParams, EnvState, check_params, day_of, n_jobs_of
from gpu_sched_env.cgrsp.stock import MIN_GAP_S
from gpu_sched_env.core.errors import check_choice

# Knob defaults of the reference rules (gpu_sched_agents.heuristics.cgrsp.config; a test checks them)
SPT_WEIGHTS = (0.7, 0.3)  # (run time, price) in the SPT slot score
STOCK_PENALTY = (0.0, 0.2, 1.0)  # sp(High/Medium/Low)
THETA_S = 600.0  # [s] SPT+Rescue's urgency threshold
DEFER_SCALE = 1.0  # defer_scale of the "expected" deferral
DEFER_GAP = "plan"  # defer_gap: the gap counts the slots the same plan fills; "busy": the rule before it
SLOT_SCORE = "delay"  # slot_score: the least expected delay + W̄; "rule": SPT+Rescue's SPT score
DEFER_GAPS = ("plan", "busy")


class Rule(NamedTuple):
    """A pure policy: ``act(env, state, params) -> action``.

    The action is in the joint space, or in the subqueue space when ``subqueue``. A policy with
    learned ``weights`` (any pytree) has ``act(env, state, params, weights)``: :func:`evaluate`
    passes the weights as an argument of its compiled program, so a second network of the same
    shape plays without a recompile (a learner judged every few updates compiles its day once).
    """

    name: str
    act: Callable
    subqueue: bool = False
    weights: Any = None


def slot_spt(params: EnvParams, s: EnvState, cx: jnp.ndarray, idle: jnp.ndarray) -> jnp.ndarray:
    """The SPT slot score's argmin over ``idle`` (minima over ``idle``; ties: the lowest slot), as ``base.slot_spt``."""
    g = params.slot_type
    w = params.wbar[cx, g]
    price = params.price_per_s[g]
    w_min = jnp.min(jnp.where(idle, w, INF))
    p_min = jnp.min(jnp.where(idle, price, INF))
    p_min = jnp.where(p_min == 0.0, 1.0, p_min)
    sp = jnp.asarray(STOCK_PENALTY, w.dtype)[s.stock[g]]
    v = SPT_WEIGHTS[0] * w / w_min + SPT_WEIGHTS[1] * price / p_min + sp
    return jnp.argmin(jnp.where(idle, v, INF)).astype(jnp.int32)


def _joint(env, s: EnvState, params: EnvParams, job: jnp.ndarray, slot: jnp.ndarray, ok: jnp.ndarray) -> jnp.ndarray:
    """The joint action putting ``job`` (a class head) on ``slot``; *wait* when not ``ok``."""
    win_j, _, _ = window(s, params, env.class_order, env.K, env.spec.n)
    pos = jnp.argmax(win_j == job)
    return jnp.where(ok, pos * env.spec.c + slot, env.wait_action).astype(jnp.int32)


def spt(env, s: EnvState, params: EnvParams) -> jnp.ndarray:
    """SPT: the first window position (shortest class, earliest deadline) on the SPT slot."""
    win_j, _, k = window(s, params, env.class_order, env.K, env.spec.n)
    idle = s.slot_job < 0
    slot = slot_spt(params, s, day_of(s, params).cx[jnp.maximum(win_j[0], 0)], idle)
    return jnp.where((k > 0) & idle.any(), slot, env.wait_action).astype(jnp.int32)


def fifo(env, s: EnvState, params: EnvParams) -> jnp.ndarray:
    """FIFO (subqueue space): the earliest-submitted waiting job on the first idle slot."""
    day = day_of(s, params)
    has = s.ptr < s.end
    j = day.order_sub[jnp.minimum(day.sub_off[:-1] + s.ptr, env.spec.n - 1)]
    q = jnp.argmin(jnp.where(has, day.submit[j], INF))
    idle = s.slot_job < 0
    slot = jnp.argmax(idle)
    return jnp.where(has.any() & idle.any(), q * env.spec.c + slot, N_SUB * env.spec.c).astype(jnp.int32)


def deferred(
    env,
    params: EnvParams,
    s: EnvState,
    idle: jnp.ndarray,
    busy: jnp.ndarray,
    defer_gap: str = DEFER_GAP,
    scale: float = DEFER_SCALE,
) -> jnp.ndarray:
    """Idle slots the ``expected`` deferral leaves idle at the decision point (``extensions.deferred_slots``).

    ``defer_gap`` is the reference's knob (static): ``"plan"`` (:func:`_deferred_plan`) or
    ``"busy"`` (the rule as published, before its corrections: the gap counts busy slots and arrivals
    only, no deferral when neither is to come).
    """
    if defer_gap == "plan":
        return _deferred_plan(env, params, s, idle, busy, scale)
    g = params.slot_type
    lvl = s.stock[g]
    cost = scale * defer_cost(params, band_of(params, s.t), next_event_gap(env.spec, params, s, busy), env.spec.markov)
    event = busy.any() | (s.n_arrived < env.spec.n)
    return idle & event & (lvl != 0) & (params.delay_mean[lvl] > cost[g])


def _deferred_plan(
    env, params: EnvParams, s: EnvState, idle: jnp.ndarray, busy: jnp.ndarray, scale: float
) -> jnp.ndarray:
    """``extensions._expected_plan``: the idle slots best status first, the gap shrinking with each slot the plan fills.

    A sequential scan over the C slots (unrolled: C is static and small), since each filled
    slot's expected end [s] (its status' mean delay + the smallest W̄ on its type) can shorten
    the gap the next slot's deferral test uses.
    """
    c = env.spec.c
    band = band_of(params, s.t)
    dm = params.delay_mean
    lvl = s.stock[params.slot_type]  # i32[C]
    w_min = jnp.min(params.wbar, axis=0)[params.slot_type]  # [s] smallest W̄ on each slot's type
    order = jnp.lexsort((jnp.arange(c), jnp.where(idle, dm[lvl], INF)))  # best status first, ties: slot
    gap = next_event_gap(env.spec, params, s, busy)  # inf when nothing is to come
    jobs = n_waiting(s)
    out = jnp.zeros(c, bool)
    for i in range(c):
        sl = order[i]
        lv = lvl[sl]
        cost = scale * defer_cost(params, band, gap, env.spec.markov)[params.slot_type[sl]]
        hold = idle[sl] & (lv != 0) & (gap < INF) & (dm[lv] > cost)
        fill = idle[sl] & ~hold & (jobs > 0)
        jobs = jobs - fill.astype(jobs.dtype)
        gap = jnp.where(fill, jnp.minimum(gap, jnp.maximum(dm[lv] + w_min[sl], MIN_GAP_S)), gap)
        out = out.at[sl].set(hold)
    return out


def slot_delay(params: EnvParams, s: EnvState, cx: jnp.ndarray, idle: jnp.ndarray) -> jnp.ndarray:
    """``base.slot_delay``: the least status mean delay + W̄ [s] over ``idle``.

    Ties: the cheaper type, then the lowest slot.
    """
    g = params.slot_type
    v = jnp.where(idle, params.delay_mean[s.stock[g]] + params.wbar[cx, g], INF)
    best = idle & (v == jnp.min(v))
    price = jnp.where(best, params.price_per_s[g], INF)
    return jnp.argmax(best & (price == jnp.min(price))).astype(jnp.int32)


SLOT_RULES: dict[str, Callable] = {"delay": slot_delay, "rule": slot_spt}  # slot_score knob -> slot rule


def is_urgent(params: EnvParams, t: jnp.ndarray, d: jnp.ndarray, cx: jnp.ndarray, offered: jnp.ndarray) -> jnp.ndarray:
    """SPT+Rescue's urgency of jobs with deadlines ``d`` and classes ``cx`` at ``t``: laxity less m_κ under ``THETA_S``.

    m_κ is the class's least mean run time over the ``offered`` slots.
    """
    m = jnp.min(jnp.where(offered[None, :], params.wbar[:, params.slot_type], INF), axis=1)  # m_κ over offered slots
    return (d - t) - m[cx] < THETA_S


def rescue_plan(
    env,
    params: EnvParams,
    s: EnvState,
    ptr: jnp.ndarray,
    offered: jnp.ndarray,
    slot_score: str = "rule",
    first: bool = False,
) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """SPT+Rescue's plan on the offered slots: ``(jobs [C], slots [C], length)`` (``deadline.SPTRescue.decide``).

    ``slot_score`` (static) names the slot rule (:data:`SLOT_RULES`): ``"rule"`` SPT+Rescue's own
    SPT score, ``"delay"`` the deferring rules' least expected delay + W̄. ``first`` (static): only
    the plan's first entry (``jobs [1]``, ``slots [1]``; ``length > 0`` iff the plan has one),
    ranked among the subqueue heads alone: a subqueue's members share ``cx`` and a deadline window
    (``deadline = submit + window``, :func:`~gpu_sched_env.cgrsp.jax.generator.build_day`), so its
    submit order is its deadline order, its head is urgent when any member is and ranks before them
    under every key (``tests/cgrsp/jax/test_when_jax.py`` compares both).
    """
    day, c, n = day_of(s, params), env.spec.c, env.spec.n
    slot_rule = SLOT_RULES[slot_score]
    t = s.t
    k = jnp.sum(offered, dtype=jnp.int32)
    # candidates: the first C waiting jobs of each subqueue (the plan takes at most C jobs)
    depth = 1 if first else c
    pos = ptr[:, None] + jnp.arange(depth)[None, :]
    valid = (pos < s.end[:, None]).reshape(-1)
    j = day.order_sub[jnp.minimum(day.sub_off[:-1, None] + pos, n - 1)].reshape(-1)
    d, sub, cx = day.deadline[j], day.submit[j], day.cx[j]
    urgent = is_urgent(params, t, d, cx, offered)
    jf = j.astype(d.dtype)
    keys = (
        jf,
        jnp.where(urgent, jf, sub),
        jnp.where(urgent, sub, d),
        jnp.where(urgent, d, params.est[cx]),
        jnp.where(valid, jnp.where(urgent, 0, 1), 2),
    )
    order = jnp.lexsort(keys)[: 1 if first else c]
    jobs = j[order]
    length = jnp.minimum(k, jnp.sum(valid, dtype=jnp.int32))
    free = offered
    slots = []
    for i in range(len(jobs)):  # each job in turn takes the best slot still offered
        slot = slot_rule(params, s, day.cx[jobs[i]], free)
        slots.append(slot)
        free = free & ~((jnp.arange(c) == slot) & (i < length))
    return jobs, jnp.stack(slots), length


def spt_rescue_defer_exp(
    env, s: EnvState, params: EnvParams, defer_gap: str = DEFER_GAP, slot_score: str = SLOT_SCORE
) -> jnp.ndarray:
    """``spt_rescue_defer_exp``: entry ``dp_count`` of the plan made at this decision point (knobs static)."""
    day = day_of(s, params)
    busy_now = s.slot_job >= 0
    here = busy_now & (s.slot_disp == s.t)  # dispatched at this decision point (completions come later)
    idle = ~busy_now | here
    busy = busy_now & ~here
    sub_of = 2 * day.cx[jnp.maximum(s.slot_job, 0)] + day.tight[jnp.maximum(s.slot_job, 0)].astype(jnp.int32)
    back = jnp.zeros(N_SUB, jnp.int32).at[jnp.where(here, sub_of, N_SUB)].add(1, mode="drop")
    s_dp = s.replace(ptr=s.ptr - back, slot_job=jnp.where(here, -1, s.slot_job))
    offered = idle & ~deferred(env, params, s_dp, idle, busy, defer_gap)
    jobs, slots, length = rescue_plan(env, params, s_dp, s_dp.ptr, offered, slot_score)
    i = jnp.minimum(s.dp_count, env.spec.c - 1)
    return _joint(env, s, params, jobs[i], slots[i], s.dp_count < length)


def defer_exp_rule(defer_gap: str = DEFER_GAP, slot_score: str = SLOT_SCORE) -> Rule:
    """``spt_rescue_defer_exp`` with the reference's ``defer_gap`` / ``slot_score`` knobs.

    The defaults give the corrected rule.

    Raises:
        ConfigError: a knob value the reference does not allow.
    """
    check_choice("defer_gap", defer_gap, DEFER_GAPS)
    check_choice("slot_score", slot_score, tuple(SLOT_RULES))
    name = "spt_rescue_defer_exp"
    if (defer_gap, slot_score) != (DEFER_GAP, SLOT_SCORE):
        name += f"[defer_gap={defer_gap},slot_score={slot_score}]"
    return Rule(name, partial(spt_rescue_defer_exp, defer_gap=defer_gap, slot_score=slot_score))


RULES: dict[str, Rule] = {
    "fifo": Rule("fifo", fifo, subqueue=True),
    "spt": Rule("spt", spt),
    "spt_rescue_defer_exp": defer_exp_rule(),
}


class StalledRolloutError(RuntimeError):
    """A rollout did not finish its day within its step cap (:func:`max_steps_of`): policy or dynamics stalled."""


class IncompleteDayError(RuntimeError):
    """A day ended (``done``) with jobs never completed: its params let the dynamics skip them.

    A legal day completes every job (an illegal action plays a legal substitute, and *wait* is
    legal only while an event is to come); a world whose numbers are not finite (an arrival rate
    of NaN gives NaN arrival times) ends at once with nothing run. :func:`evaluate` and
    :func:`rollout` raise it instead of reporting such a day's metrics (0 jobs, 0 wait, 0 % miss).
    """


def max_steps_of(n: int, holds: int = 0) -> int:
    """The step cap of a rollout from any state of a day of ``n`` jobs: ``3·n + holds·(3·n + 1)``.

    Why it is a bound: a step dispatches a job (at most ``n``), waits, or holds a GPU type (the
    ``joint_hold`` design's ``holds`` = T hold actions). A wait is legal only while an event is to
    come, so it processes at least one of the day's ``n`` arrivals and ``n`` completions (an
    illegal action plays a legal substitute, :func:`~gpu_sched_env.cgrsp.jax.legal.legalise`).
    Holds between two changes of the held set by the env are at most T (a held type cannot be
    held again; with every idle type held the env advances), and the env changes it at most
    ``3·n + 1`` times: after each advance (at most ``2·n``, each processing an arrival or a
    completion) and when, with nothing left to come, it lets every hold go (the next step then
    ends in a dispatch, at most ``n``). A day not done within the cap has stalled (a bug, never
    a slow policy).
    """
    return 3 * int(n) + int(holds) * (3 * int(n) + 1)


def cap_of(env) -> int:
    """:func:`max_steps_of` ``env``'s day (its N and, for ``joint_hold``, its T hold actions)."""
    return max_steps_of(env.spec.n, env.n_hold)


def _policy(env, rule: Rule | Callable, weights: Any) -> tuple[Callable, bool]:
    """``rule`` as ``f(state, params) -> action`` (its ``weights`` bound to ``weights``) and whether it subqueues."""
    if not isinstance(rule, Rule):
        return rule, False
    act = _jitted_act(env, rule)
    if rule.weights is None:
        return act, rule.subqueue
    return (lambda st, p: act(st, p, weights)), rule.subqueue


def _jitted_act(env, rule: Rule) -> Callable:
    """``rule.act`` bound to ``env``, jitted once per env and rule.

    Every rollout that plays it (another batch shape, step cap or caller) reuses its trace
    instead of tracing the rule again.
    """
    cache = _programs(env)
    key = ("act", rule.act, rule.weights is not None)
    if key not in cache:
        if rule.weights is None:
            cache[key] = jax.jit(lambda st, p: rule.act(env, st, p))
        else:
            cache[key] = jax.jit(lambda st, p, w: rule.act(env, st, p, w))
    return cache[key]


def _advance(env, rule: Rule | Callable, params: EnvParams, max_steps: int | None, weights: Any) -> tuple:
    """``(state -> state after rule's action, step cap)``: one step of :func:`rollout` and :func:`rollout_batch`."""
    w = rule.weights if weights is None and isinstance(rule, Rule) else weights
    act, sub = _policy(env, rule, w)
    step = env.step_subqueue if sub else env.step  # jitted: traced once per env, reused by every rollout
    key = jax.random.PRNGKey(0)  # unused by the dynamics (the day holds its draws)
    cap = cap_of(env) if max_steps is None else int(max_steps)
    return (lambda st: step(key, st, act(st, params), params)[1]), cap


def rollout(
    env, rule: Rule | Callable, s: EnvState, params: EnvParams, max_steps: int | None = None, weights: Any = None
) -> EnvState:
    """Play ``rule`` (a :class:`Rule`, or ``f(state, params) -> joint action``) to the end of the day.

    A bounded loop: at most ``max_steps`` steps (default :func:`cap_of` ``env``).
    ``state.done`` False on return means the rollout stalled; :func:`evaluate` raises
    :class:`StalledRolloutError` then, a caller of ``rollout`` reads ``done`` (:func:`check_done`).
    ``weights``: the weights a learned :class:`Rule` plays with (default its own ``rule.weights``).

    Concrete ``params`` are checked first (:func:`~.types.check_params`: ConfigError for a NaN,
    infinite or out-of-range field); a concrete result that is done with jobs not completed raises
    :class:`IncompleteDayError`. Inside a trace neither can be read, and nothing is checked.
    """
    check_params(params)
    advance, cap = _advance(env, rule, params, max_steps, weights)

    def body(c):
        st, i = c
        return advance(st), i + 1

    out = lax.while_loop(lambda c: ~c[0].done & (c[1] < cap), body, (s, jnp.zeros((), jnp.int32)))[0]
    _check_concrete(env, out, params, "rules.rollout")
    return out


def _check_concrete(env, s: EnvState, params: EnvParams, what: str) -> None:
    """:func:`check_complete` of a concrete state (one day or a batch); nothing inside a trace."""
    if isinstance(s.done, jax.core.Tracer) or isinstance(s.n_completed, jax.core.Tracer):
        return
    n = _n_jobs(env, s, params)
    check_complete(s.done, s.n_completed, n, what)


def _n_jobs(env, s: EnvState, params: EnvParams) -> jnp.ndarray:
    """Each day's real job count (a mixed env: its regime's; the rest of the N rows is padding)."""
    if params.mix is None:
        return jnp.full(jnp.shape(s.done), env.spec.n, jnp.int32)
    one = lambda st: jnp.asarray(n_jobs_of(env.spec.n, resolve(st, params)), jnp.int32)  # noqa: E731
    return one(s) if jnp.ndim(s.done) == 0 else jax.vmap(one)(s)


def check_complete(done, completed, n_jobs, what: str) -> None:
    """Raise :class:`IncompleteDayError` where a day is done with fewer than ``n_jobs`` jobs completed."""
    done, completed = np.asarray(done, bool).reshape(-1), np.asarray(completed).reshape(-1)
    n_jobs = np.broadcast_to(np.asarray(n_jobs), done.shape)
    bad = np.flatnonzero(done & (completed < n_jobs))
    if bad.size:
        i = int(bad[0])
        raise IncompleteDayError(
            f"{what}: {bad.size} of {done.size} days ended with jobs not completed (day {i}: {int(completed[i])} of "
            f"{int(n_jobs[i])}); its params let the day end early: build them from a config (JaxCGRSP.from_config), "
            "or keep params.replace(...) within types.PARAM_RANGES and finite"
        )


def rollout_batch(
    env, rule: Rule | Callable, s: EnvState, params: EnvParams, max_steps: int | None = None, weights: Any = None
) -> EnvState:
    """:func:`rollout` of a batch of states (every leaf with a leading day axis), equal to ``jax.vmap(rollout)``.

    One loop over the vmapped step: a day that is done, or has played ``max_steps`` steps, keeps
    its state while the others go on (the days step in lockstep, so one counter serves them
    all). Written out rather than vmapping :func:`rollout`'s ``while_loop``: JAX batches a vmapped
    loop's body again until it learns which carried fields differ across days, which cost about
    1 s more tracing and 1.5 s more compiling per day program on the 2-core machine, at the same
    run time (the journal, 2026-11-29).
    """
    check_params(params)
    advance, cap = _advance(env, rule, params, max_steps, weights)
    advance = jax.vmap(advance)

    def body(c):
        st, i = c
        live = ~st.done

        def keep(new, old):
            return jnp.where(live.reshape(live.shape + (1,) * (new.ndim - 1)), new, old)

        return jax.tree_util.tree_map(keep, advance(st), st), i + 1

    out = lax.while_loop(lambda c: jnp.any(~c[0].done) & (c[1] < cap), body, (s, jnp.zeros((), jnp.int32)))[0]
    _check_concrete(env, out, params, "rules.rollout_batch")
    return out


def check_done(done, what: str, max_steps: int) -> None:
    """Raise :class:`StalledRolloutError` naming ``what`` and the unfinished days where any of ``done`` is False."""
    left = np.flatnonzero(~np.asarray(done, bool).reshape(-1))
    if left.size:
        raise StalledRolloutError(
            f"{what}: {left.size} of {np.size(done)} days not done after max_steps = {max_steps} steps "
            f"(days {left[:10].tolist()}{' …' if left.size > 10 else ''}); the policy or the dynamics stalled "
            "(a legal day ends within rules.max_steps_of's bound: 3·N, plus T·(3·N + 1) with holds)"
        )


_COMPILED_MAX = 32  # day programs kept per env (an LRU)


def _programs(env) -> OrderedDict:
    """``env``'s own table of jitted rule programs (acts, and day evaluations by act, subqueue, learned, cap).

    Kept on the env, not in a module table keyed by it: the programs close over their env, so a
    weak-keyed table would keep every env it ever saw alive; here they go with the env.
    """
    return vars(env).setdefault("_rule_programs", OrderedDict())


def _day_metrics(env, rule: Rule | Callable, cap: int) -> Callable:
    """The jitted ``(days_or_keys, params, weights) -> metrics`` of ``rule`` on ``env``, compiled once per shape.

    Cached for a :class:`Rule` (its ``act`` is a module-level function or a partial made once);
    the params and the weights are arguments, so new weights or params of the same shapes reuse
    the program. A bare callable gets a fresh program (it may close over anything).
    """
    from gpu_sched_env.cgrsp.jax.types import Day

    key = (rule.act, rule.subqueue, rule.weights is not None, cap) if isinstance(rule, Rule) else None
    cache = _programs(env)
    if key is not None and key in cache:
        cache.move_to_end(key)
        return cache[key]

    def days(xs, params, weights):
        start = jax.vmap(lambda x: (env.reset_to_day(x, params) if isinstance(x, Day) else env.reset(x, params))[1])
        s = rollout_batch(env, rule, start(xs), params, cap, weights)
        n = env.spec.n
        return {
            "mean_wait_min": s.sum_wait / n / 60.0,
            "miss": s.n_miss,
            "miss_pct": 100.0 * s.n_miss / n,
            "tight_miss": s.n_tight_miss,
            "cost_usd": s.cost,
            "completed": s.n_completed,
            "n_invalid": s.n_invalid,
            "done": s.done,
            "n_jobs": _n_jobs(env, s, params),
        }

    fn = jax.jit(days)
    if key is not None:
        cache[key] = fn
        while len(cache) > _COMPILED_MAX:
            cache.popitem(last=False)
    return fn


def evaluate(
    env, rule: Rule | Callable, days_or_keys, params: EnvParams | None = None, max_steps: int | None = None
) -> dict[str, jnp.ndarray]:
    """Per-day metrics of ``rule`` on a batch of days (a stacked :class:`Day`) or PRNG keys (native days), vmapped.

    Returns arrays of shape (batch,): ``mean_wait_min``, ``miss`` (count), ``miss_pct``,
    ``tight_miss``, ``cost_usd``, ``completed``, ``n_invalid`` (illegal actions played as their
    substitute). Raises :class:`StalledRolloutError` when a day is not done within
    ``max_steps`` (:func:`rollout`), :class:`IncompleteDayError` when a day is done with jobs not
    completed, and ConfigError, before anything is traced, for params with a NaN, infinite or
    out-of-range field (:func:`~.types.check_params`; ``params.replace(arrival_rate=nan)``). A
    :class:`Rule` compiles once per env, step cap and batch shape; its ``weights`` (a learned
    policy) and ``params`` are arguments of that program.
    """
    params = check_params(env.default_params if params is None else params)
    cap = cap_of(env) if max_steps is None else int(max_steps)
    weights = rule.weights if isinstance(rule, Rule) else None
    out = dict(_day_metrics(env, rule, cap)(days_or_keys, params, weights))
    name = rule.name if isinstance(rule, Rule) else getattr(rule, "__name__", "policy")
    done, n_jobs = out.pop("done"), out.pop("n_jobs")
    check_done(done, f"rules.evaluate of {name!r}", cap)
    check_complete(done, out["completed"], n_jobs, f"rules.evaluate of {name!r}")
    return out


def stack_days(days: list) -> object:
    """Stack :class:`Day` pytrees for :func:`evaluate` (Markov paths padded with ``core.NEVER`` to a common length)."""
    width = max(d.markov_times.shape[1] for d in days)
    pad = [
        d.replace(
            markov_times=jnp.pad(d.markov_times, ((0, 0), (0, width - d.markov_times.shape[1])), constant_values=NEVER),
            markov_us=jnp.pad(d.markov_us, ((0, 0), (0, width - d.markov_us.shape[1]))),
        )
        for d in days
    ]
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *pad)


__all__ = [
    "DEFER_GAP",
    "DEFER_GAPS",
    "DEFER_SCALE",
    "RULES",
    "SLOT_RULES",
    "SLOT_SCORE",
    "SPT_WEIGHTS",
    "STOCK_PENALTY",
    "THETA_S",
    "Rule",
    "IncompleteDayError",
    "StalledRolloutError",
    "check_complete",
    "check_done",
    "defer_exp_rule",
    "deferred",
    "evaluate",
    "fifo",
    "cap_of",
    "max_steps_of",
    "is_urgent",
    "rescue_plan",
    "rollout",
    "rollout_batch",
    "slot_delay",
    "spt",
    "spt_rescue_defer_exp",
    "stack_days",
]
