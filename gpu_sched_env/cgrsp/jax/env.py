"""``JaxCGRSP``: CGRSP-v0's joint_heads design as pure functions (gymnax / Jumanji convention).

Hand-written for JAX rather than wrapping the NumPy simulator: the advance to the next
decision point is a ``lax.while_loop`` over fixed-shape arrays (:mod:`.core`), the window and
the observation come from per-subqueue pointers (:mod:`.obs`), so ``reset`` and ``step`` jit
and vmap over thousands of days. Equal to CGRSP-v0 on the reference's own draws
(:func:`gpu_sched_env.cgrsp.day.materialise`, ``tests/cgrsp/jax``).

Supported (anything else raises ConfigError when the env is built): ``action_mode="joint"``
or ``"joint_hold"`` (:mod:`.hold`), ``window_by="class"``, ``order="spt"``, ``window=3``,
``hold="event"``, every ``shaping`` (:mod:`.shaping`) and ``shaping_gamma``, every reward
preset (``occupancy`` included) and weight, ``reward_scale``, ``features`` basic or model, any
``slot_rows``; every simulator parameter with both stock processes, except traces and class
estimates that tie (SPT's order of the classes must be strict). :meth:`JaxCGRSP.mixed` makes
the day type and the stock model per-env data (:mod:`.mix`).
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Mapping
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig, as_env_config
from gpu_sched_env.cgrsp.day import MaterialisedDay, materialise
from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.jax import core
from gpu_sched_env.cgrsp.jax.generator import day_arrays, sample_day
from gpu_sched_env.cgrsp.jax.legal import legalise, pair_mask, raise_illegal
from gpu_sched_env.cgrsp.jax.mix import GENERALIST_STOCKS, Regime, draw_regime, mix_params, regimes_of, resolve, row_of
from gpu_sched_env.cgrsp.jax.obs import observe, window
from gpu_sched_env.cgrsp.jax.shaping import TERMS, shaping_term
from gpu_sched_env.cgrsp.jax.types import (
    N_SUB,
    REWARD_PARTS,
    Day,
    EnvParams,
    EnvState,
    check_params,
    make_params,
    times_inv_n,
)
from gpu_sched_env.cgrsp.jax.types import day_of as state_day
from gpu_sched_env.core.errors import ConfigError, check_number

# what the JAX env implements: setting -> allowed values (None: any value CGRSPEnvConfig accepts)
SUPPORTED: dict[str, tuple | None] = {
    "action_mode": ("joint",),
    "window_by": ("class",),
    "order": ("spt",),
    "window": (3,),
    "hold": ("event",),
    "shaping": tuple(TERMS),
    "reward": None,
    "reward_weights": None,
    "reward_scale": None,
    "shaping_gamma": None,
    "features": None,
    "slot_rows": None,
    "day": None,
    "params": None,
}


# action designs beyond the joint one, each with every setting SUPPORTED allows the joint design (.hold, .when)
MORE_DESIGNS: tuple[str, ...] = ("joint_hold", "when")


def check_supported(cfg: CGRSPEnvConfig) -> None:
    """Raise ConfigError naming the setting, its value and what the JAX env supports."""
    for name, allowed in SUPPORTED.items():
        if name == "action_mode" and allowed is not None:
            allowed = (*allowed, *MORE_DESIGNS)
        if allowed is not None and getattr(cfg, name) not in allowed:
            table = "; ".join(f"{k} in {v}" for k, v in SUPPORTED.items() if v is not None)
            raise ConfigError(
                f"{name} = {getattr(cfg, name)!r} is not supported by the JAX env (gpu_sched_env.cgrsp.jax); "
                f"supported: {table}, and any reward preset, weights, features, slot_rows, day and simulator "
                f"parameters; also the action_mode values {MORE_DESIGNS} (held deferrals, gpu_sched_env.cgrsp.jax.hold;"
                " learned timing on the rule's order, gpu_sched_env.cgrsp.jax.when)"
            )
    if cfg.illegal_action != "substitute":  # inside jit nothing raises: the checked mode is the strict one
        raise ConfigError(
            f"illegal_action = {cfg.illegal_action!r} is not a setting of the JAX env, which plays an illegal action "
            "as its substitute; for InvalidActionError on an illegal action build it with checked=True"
        )
    p = cfg.sim_params()
    est = [row[Fleet.from_params(p).nominal_type] for row in Fleet.from_params(p).wbar]
    if len(set(est)) < 3:
        raise ConfigError(
            f"gpu_types: the nominal estimates per class {est} tie; the JAX env needs SPT's order of the classes strict"
        )


# The envs from_config / mixed built, by what determines them (an LRU of the last _SHARED_MAX).
_SHARED: OrderedDict = OrderedDict()
_SHARED_MAX = 16


def _shared(design: type, cfg: CGRSPEnvConfig, dtype: Any, records: bool, checked: bool, mix_key, mix=None):
    """The one env of these arguments in this process: built once, then served again.

    An env is immutable after ``__init__`` (its config, its params and its jitted functions), so
    two callers asking for the same env may share it, and with it every program JAX traced and
    compiled for it (a rule's day, a step): ``gpu-sched evaluate``, ``train.py`` and the tests
    ask for the same env many times. Keyed by the design, the config's JSON, the resolved dtype,
    JAX's x64 switch, ``records``, ``checked`` and the mix; a config JSON cannot encode (an array
    in ``params``) builds a new env every time.
    """
    x64 = bool(jax.config.jax_enable_x64)
    try:  # a dtype or config the key cannot hold: no key (the constructor names what is wrong)
        dt = jnp.dtype(dtype if dtype is not None else (jnp.float64 if x64 else jnp.float32)).name
        cfg_json = json.dumps(dataclasses.asdict(cfg), sort_keys=True)
        key = (design, cfg_json, dt, x64, bool(records), bool(checked), mix_key)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _SHARED:
        _SHARED.move_to_end(key)
        return _SHARED[key]
    extra = {} if mix is None else {"mix": mix()}
    env = design(cfg, dtype, records, checked=checked, **extra)
    if key is not None:
        _SHARED[key] = env
        while len(_SHARED) > _SHARED_MAX:
            _SHARED.popitem(last=False)
    return env


class JaxCGRSP:
    """CGRSP-v0 (joint_heads design) in JAX; build with :meth:`from_config`.

    Actions: ``a = i·C + s`` puts window position ``i`` (the class heads, shortest class
    first) on slot ``s``; ``3·C`` is *wait*, as CGRSP-v0's joint mode. :meth:`step_subqueue`
    dispatches the head of any of the six subqueues (class × tight/loose), which expresses
    FIFO and every rule that keeps submit order within a subqueue.

    The observation is one float32 vector, CGRSP-v0's Dict observation flattened by
    ``gymnasium.spaces.flatten`` without the mask (:mod:`.obs` gives the layout);
    :meth:`flatten_obs` does that to a CGRSP-v0 observation.

    Days: ``reset(key, params)`` draws a native day (a row of ``params.pool`` when the params
    come from :meth:`with_pool`); ``reset_to_day(day)`` plays the reference's own draws
    (:meth:`materialise`). ``reset``, ``reset_to_day``, ``step``, ``step_subqueue``,
    ``step_autoreset`` and ``action_mask`` are jitted (the ``_``-prefixed originals are pure
    functions to compose into larger jitted programs).

    Every action has a defined effect. An action the mask forbids (an empty window position
    or subqueue, a busy slot, *wait* with nothing left to come, out of range in any integer
    dtype, or no integer at all: 1.7, NaN, a boolean; :func:`~.legal.action_index`) is played as
    its substitute (:func:`~gpu_sched_env.cgrsp.jax.legal.legalise`): *wait* where *wait* is
    legal, else the lowest legal action; no job is ever lost. The step's
    ``info["invalid_action"]`` says so, ``state.n_invalid`` and ``info["n_invalid"]`` count
    such steps. A finished day ignores every action. ``checked=True`` (:meth:`from_config`)
    raises :class:`~gpu_sched_env.core.errors.InvalidActionError` instead, naming the action
    and why it is illegal (a ``jax.debug.callback``: inside jit, vmap and scan too, arriving
    as JAX's runtime error carrying that message; for debugging, it syncs with the host).
    """

    def __init__(
        self,
        cfg: CGRSPEnvConfig,
        dtype: Any = None,
        records: bool = True,
        mix: tuple[list[Regime], np.ndarray] | None = None,
        checked: bool = False,
    ) -> None:
        check_supported(cfg)
        if design_of(cfg) is not type(self):
            raise ConfigError(
                f"action_mode = {cfg.action_mode!r} is played by {design_of(cfg).__name__}, not {type(self).__name__}: "
                "build the env with JaxCGRSP.from_config (or JaxCGRSP.mixed)"
            )
        self.records = bool(records)
        self.checked = bool(checked)
        self.cfg = cfg
        self.sim_params = p = cfg.sim_params()
        if dtype is None:
            dtype = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
        self.dtype = jnp.dtype(dtype)
        if self.dtype == jnp.float64 and not jax.config.jax_enable_x64:
            raise ConfigError("dtype = float64 needs jax.config.update('jax_enable_x64', True) before the env is built")
        if self.dtype not in (jnp.float32, jnp.float64):
            raise ConfigError(f"dtype = {dtype!r} is not allowed; allowed: float32, float64")
        fl = Fleet.from_params(p)
        n = int(p.n_jobs)
        self.regimes: list[Regime] | None = None
        if mix is not None:  # a mixed env: the regimes' params as data, the days padded to the largest
            for r in mix[0]:
                check_supported(r.config(cfg))
            self.regimes = list(mix[0])
            mixed_params, n = mix_params(cfg, mix[0], mix[1], self.dtype)
        self.spec = core.Spec(
            n=n,
            c=p.c_max,
            t=fl.n_types,
            markov=None if mix is not None else p.stock_process == "markov",
        )
        est = [row[fl.nominal_type] for row in fl.wbar]
        self.class_order = tuple(int(c) for c in np.argsort(est, kind="stable"))  # window order of the class heads
        self.K = cfg.window
        self.rows = cfg.slot_rows or p.c_max
        self.model = cfg.features == "model"
        self.default_params: EnvParams = mixed_params if mix is not None else make_params(p, cfg, self.dtype)
        self.n_hold = 0  # hold actions (the joint_hold design has one per GPU type)
        self.n_actions = self.K * p.c_max + 1
        self.wait_action = self.n_actions - 1
        t = fl.n_types
        self.obs_dim = 12 + 8 + self.K * (7 + 2 * t) + (6 * t if self.model else 0) + (t + 8) * (self.rows + 1) + 3 * t
        self.reset = jax.jit(self._reset)
        self.reset_to_day = jax.jit(self._reset_to_day)
        self.step = jax.jit(self._step)
        self.step_subqueue = jax.jit(self._step_subqueue)
        self.step_autoreset = jax.jit(self._step_autoreset)
        self.action_mask = jax.jit(self._action_mask)

    @classmethod
    def from_config(
        cls,
        cfg: CGRSPEnvConfig | Mapping[str, Any] | None = None,
        dtype: Any = None,
        records: bool = True,
        checked: bool = False,
        **kwargs: Any,
    ) -> JaxCGRSP:
        """The env for an env config (or ``gym.make``-style keywords); ConfigError if not supported.

        ``dtype``: float64 (default when ``jax_enable_x64`` is on: the equivalence path) or
        float32 (default otherwise: training). ``records=False`` drops the per-job records
        (dispatch, start, completion, slot) from the state: the dynamics never read them, and
        an auto-reset then touches no N-sized array (training; the metrics stay in ``info``).
        ``checked=True`` raises on an illegal action instead of playing its substitute (debugging).
        Equal arguments return the same env (an env is immutable), with the programs JAX has
        already traced and compiled for it.
        """
        cfg = as_env_config(cfg)
        cfg = cfg.replace(**kwargs) if kwargs else cfg
        check_supported(cfg)
        return _shared(design_of(cfg), cfg, dtype, records, checked, None)

    @classmethod
    def mixed(
        cls,
        cfg: CGRSPEnvConfig | Mapping[str, Any] | None = None,
        stocks: tuple | list = GENERALIST_STOCKS,
        days: Mapping[str, float] | None = None,
        dtype: Any = None,
        records: bool = True,
        checked: bool = False,
    ) -> JaxCGRSP:
        """A mixed env: each native day's day type and stock model drawn per env (:mod:`.mix`).

        ``stocks``: ``"fresh"`` and/or Markov dwells D [s], drawn uniformly; ``days``: day type →
        weight (default the month's 4 hectic, 3 surge, 18 normal, 5 quiet). Every other setting
        is ``cfg``'s; ``sim_params`` stays ``cfg``'s day (the one evaluations play). Days are
        native only (``reset``, ``with_pool``); ``env.regimes[day.regime]`` names a day's regime.
        ``checked`` as in :meth:`from_config`.
        """
        cfg = as_env_config(cfg)
        check_supported(cfg)
        mix_key = (tuple(repr(x) for x in stocks), None if days is None else tuple(sorted(days.items())))
        return _shared(design_of(cfg), cfg, dtype, records, checked, mix_key, lambda: regimes_of(stocks, days))

    @property
    def rule_env(self) -> JaxCGRSP:
        """The env the JAX rules (joint-space policies, ``rules.RULES``) play this env's days on: itself.

        A design whose actions are not the joint ones (``when``) returns its joint twin.
        """
        return self

    @property
    def is_mixed(self) -> bool:
        """Whether the day type and the stock model are per-env data (:meth:`mixed`)."""
        return self.regimes is not None

    @property
    def n_regimes(self) -> int:
        """The regimes a day may be drawn from: the mix's (:meth:`mixed`), else 1."""
        return 1 if self.regimes is None else len(self.regimes)

    def regime_of(self, s: EnvState, params: EnvParams) -> jnp.ndarray:
        """The state's regime: its row of ``self.regimes`` (i32; 0 in a single-regime env)."""
        if params.mix is None:
            return jnp.int32(0)
        return state_day(s, params).regime

    def check_params(self, params: EnvParams) -> EnvParams:
        """``params`` if every world field is finite and in range (:func:`~.types.check_params`), else ConfigError.

        ``default_params`` (and any params :meth:`from_config` builds) always pass: they come
        from a validated config. ``params.replace(...)`` can bypass that; ``rules.evaluate``,
        ``rules.rollout`` and :meth:`with_pool` check what they are given (host side, before
        tracing). The jitted ``reset`` and ``step`` do not (a check there would read the
        params back from the device at every call): check replaced params once with this.
        """
        return check_params(params)

    # ------------------------------------------------------------------ days
    def materialise(self, seed: int) -> Day:
        """The reference's draws of run ``seed`` as a :class:`Day` (for :meth:`reset_to_day`)."""
        return self.day_of(materialise(self.sim_params, seed))

    def day_of(self, day: MaterialisedDay) -> Day:
        """A :class:`~gpu_sched_env.cgrsp.day.MaterialisedDay` as a :class:`Day`."""
        if self.is_mixed:
            raise ConfigError(
                "a mixed env plays native days only (reset, with_pool); play a materialised day on the single-regime "
                "env of its day type and stock model (JaxCGRSP.from_config)"
            )
        return day_arrays(day, self.default_params)

    def _sample(self, key: jax.Array, params: EnvParams) -> Day:
        """A native day (a mixed env: its regime drawn from the mix first, the day padded to N)."""
        if params.mix is None:
            return sample_day(key, params, self.spec.n, self.spec.t)
        k_r, k_d = jax.random.split(key)
        r = draw_regime(k_r, params)
        return sample_day(k_d, row_of(params, r), self.spec.n, self.spec.t, regime=r)

    def with_pool(self, key: jax.Array, params: EnvParams, size: int) -> EnvParams:
        """``params`` with a pool of ``size`` natively sampled days: :meth:`reset` then draws a row of it.

        For training: a reset (and an auto-reset) then copies no day, O(1) instead of
        O(N); redraw the pool (a new ``key``) as often as fresh days are wanted.
        """
        size = int(check_number("size", size, lo=1, integer=True))
        check_params(params)
        pool = jax.jit(jax.vmap(lambda k: self._sample(k, params)))(jax.random.split(key, size))
        params = params.replace(pool=pool, pool_start=None)
        starts = jax.jit(jax.vmap(lambda i: self._start_state(self._empty_day(params), i, params)))(
            jnp.arange(size, dtype=jnp.int32)
        )
        return params.replace(pool_start=starts)

    def _reset(self, key: jax.Array, params: EnvParams) -> tuple[jnp.ndarray, EnvState]:
        s = self._reset_state(key, params)
        return self._obs(s, params), s

    def _reset_state(self, key: jax.Array, params: EnvParams) -> EnvState:
        if params.pool is None:
            return self._start_state(self._sample(key, params), jnp.zeros((), jnp.int32), params)
        idx = core.pool_row(key, params.pool.submit.shape[0])
        if params.pool_start is not None:  # precomputed by with_pool: a reset is a gather of small fields
            return jax.tree_util.tree_map(lambda a: a[idx], params.pool_start)
        return self._start_state(self._empty_day(params), idx, params)

    def _empty_day(self, params: EnvParams) -> Day:
        return jax.tree_util.tree_map(lambda a: jnp.zeros((0,) + a.shape[2:], a.dtype), params.pool).replace(
            key=params.pool.key[0]
        )

    def _reset_to_day(self, day: Day, params: EnvParams | None = None) -> tuple[jnp.ndarray, EnvState]:
        params = self.default_params if params is None else params
        s = self._start_state(day, jnp.zeros((), jnp.int32), params)
        return self._obs(s, params), s

    def _start_state(self, day: Day, idx: jnp.ndarray, params: EnvParams) -> EnvState:
        sp, dt = self.spec, self.dtype
        n, c = sp.n, sp.c
        f0 = jnp.zeros((), dt)
        i0 = jnp.zeros((), jnp.int32)
        nr = n if self.records else 0
        inf_n = jnp.full(nr, core.INF, dt)  # "not yet", as CGRSP-v0's records (the dynamics never read them)
        s = EnvState(
            day=day,
            day_idx=idx,
            t=f0,
            n_arrived=i0,
            n_completed=i0,
            ptr=jnp.zeros(N_SUB, jnp.int32),
            end=jnp.zeros(N_SUB, jnp.int32),
            slot_job=jnp.full(c, -1, jnp.int32),
            slot_end=jnp.full(c, core.NEVER, dt),
            slot_start=jnp.full(c, core.NEVER, dt),
            slot_disp=jnp.zeros(c, dt),
            slot_level=jnp.zeros(c, jnp.int32),
            stock=jnp.zeros(sp.t, jnp.int32),
            n_dec=i0,
            dp_count=i0,
            mk_k=i0,
            mk_u=f0,
            mk_next=f0,
            mk_lam=f0,
            dispatch=inf_n,
            start=inf_n,
            completion=inf_n,
            job_slot=jnp.full(nr, -1, jnp.int32),
            ep_raw=jnp.zeros(len(REWARD_PARTS), dt),
            sum_wait=f0,
            sum_delay=f0,
            cost=f0,
            n_miss=i0,
            n_tight_miss=i0,
            done=jnp.zeros((), bool),
            n_steps=i0,
            n_invalid=i0,
        )
        params = resolve(s, params)
        mk = core.markov_init(sp, params, s, dt)
        s = s.replace(mk_k=mk[0], mk_u=mk[1], mk_next=mk[2], mk_lam=mk[3])
        s, _, _ = core.advance(sp, params, s, jnp.ones((), bool))  # to the first arrival: nothing booked counts
        return s

    def _window(self, s: EnvState, params: EnvParams) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
        return window(s, params, self.class_order, self.K, self.spec.n)

    def _obs(self, s: EnvState, params: EnvParams) -> jnp.ndarray:
        params = resolve(s, params)
        wj, ws, k = self._window(s, params)
        return observe(self.spec, params, s, wj, ws, k, self.K, self.rows, self.model)

    def _action_mask(self, s: EnvState, params: EnvParams | None = None) -> jnp.ndarray:
        params = resolve(s, self.default_params if params is None else params)
        _, _, k = self._window(s, params)
        return pair_mask(self.spec, s, jnp.arange(self.K) < k, params if self.is_mixed else None)

    def _legal(self, s: EnvState, params: EnvParams, rows: jnp.ndarray, action, what: str) -> tuple:
        """``(sub-or-row, slot, dispatch?, invalid)`` of ``action`` in a (row, slot) space, legalised.

        The one legality test of every step function: ``rows`` (bool[R]) says which rows hold a
        job, :func:`pair_mask` the legal actions, :func:`legalise` the action played.
        """
        c = self.spec.c
        mask = pair_mask(self.spec, s, rows, params if self.is_mixed else None)
        a, invalid = legalise(mask, action)
        if self.checked:  # the action as given (1.7 is named 1.7, not the 1 a cast makes of it)
            jax.debug.callback(partial(raise_illegal, c, what), jnp.asarray(action), invalid, mask, rows, s.slot_job)
        wait = a == mask.shape[0] - 1
        return a // c, a % c, ~wait, invalid

    def _joint(self, s: EnvState, params: EnvParams, action) -> tuple:
        """``(subqueue or −1, slot, dispatch?, invalid)`` of a joint action (legalised)."""
        _, ws, k = self._window(s, params)
        pos, slot, do, invalid = self._legal(s, params, jnp.arange(self.K) < k, action, "window position")
        return jnp.where(do, ws[jnp.minimum(pos, self.K - 1)], -1), slot, do, invalid

    def _step(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """One joint action (no auto-reset); an illegal one plays its substitute (class docstring)."""
        params = resolve(s, params)
        return self._transition(s, params, *self._joint(s, params, action))

    def _step_subqueue(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """A lower-level action: ``a = q·C + s`` dispatches the head of subqueue ``q`` to slot ``s``.

        Subqueue ``q`` holds class ``q // 2``, tight when ``q % 2``; ``a = 6·C`` waits. The mask
        is :func:`pair_mask` over the six subqueues; an illegal action plays its substitute.
        """
        params = resolve(s, params)
        return self._transition(s, params, *self._legal(s, params, s.ptr < s.end, action, "subqueue"))

    def _transition(self, s: EnvState, params: EnvParams, sub, slot, do, invalid, force=None) -> tuple:
        s, reward, info = self._move(s, params, sub, slot, do, invalid, force)
        return self._obs(s, params), s, reward, s.done, info

    def _move(self, s: EnvState, params: EnvParams, sub, slot, do, invalid, force=None) -> tuple:
        """Dispatch (when ``do``), then advance to the next decision (at least once when ``force``, default ``~do``).

        ``invalid``: the action was illegal and plays its substitute (flagged in ``info``, counted).
        """
        sp = self.spec
        do = do & ~s.done  # a finished day stays finished
        t0, s0 = s.t, s
        s, raw_d, job = core.dispatch(sp, params, s, sub, slot, do)
        s, raw_a, tight_miss = self._settle(s, params, ~do if force is None else force)
        raw = raw_d + raw_a
        reward = -params.reward_scale * jnp.sum(params.weights * raw)
        reward = reward + shaping_term(self.cfg.shaping, sp, params, s0, s)  # γ·Φ′ − Φ (.shaping)
        s = s.replace(
            ep_raw=s.ep_raw + raw,
            n_miss=s.n_miss + raw[REWARD_PARTS.index("miss")].astype(jnp.int32),
            n_tight_miss=s.n_tight_miss + tight_miss,
            n_steps=s.n_steps + 1,
            n_invalid=s.n_invalid + invalid.astype(jnp.int32),
        )
        # one rounded constant per metric, static or (a mixed env) data: the same bits in both
        mean_wait = times_inv_n(s.sum_wait, sp.n, params, den=60.0)
        miss_pct = times_inv_n(s.n_miss.astype(s.sum_wait.dtype), sp.n, params, num=100.0)
        info = {
            "job": job,
            "slot": jnp.where(do, slot, -1),
            "t": s.t,
            "dt": s.t - t0,
            "reward_raw": raw,
            "mean_wait_min": mean_wait,
            "miss": s.n_miss,
            "miss_pct": miss_pct,
            "tight_miss": s.n_tight_miss,
            "cost_usd": s.cost,
            "provisioning_delay_h": s.sum_delay / 3600.0,
            "completed": s.n_completed,
            "invalid_action": invalid,
            "n_invalid": s.n_invalid,
        }
        return s, reward, info

    def _settle(self, s: EnvState, params: EnvParams, force) -> tuple:
        """Advance to the next decision point when ``force`` or when no assignment is possible now.

        Returns ``(state, raw parts [f[len(REWARD_PARTS)]], tight misses)`` (:func:`.core.advance`); the
        joint_hold design (:mod:`.hold`) advances until an idle slot is not held.
        """
        go = force | ~((core.n_idle(s) > 0) & (core.n_waiting(s) > 0))
        return core.advance(self.spec, params, s, go & ~s.done)

    def _step_autoreset(self, key: jax.Array, s: EnvState, action: jnp.ndarray, params: EnvParams) -> tuple:
        """:meth:`step`, then a new day (drawn with ``key``; from the pool when ``params`` has one) where the day ended.

        Obs and state are the new day's; reward, done and info the finished step's. Fast
        with a pool (:meth:`with_pool`) and ``records=False``: the reset then copies no
        N-sized array; without a pool every step samples a day (O(N) per env and step).
        """
        p_s = resolve(s, params)  # the finished day's regime; the new day may be another's
        s, reward, info = self._move(s, p_s, *self._joint(s, p_s, action))
        done = s.done
        s_r = self._reset_state(key, params)
        s = jax.tree_util.tree_map(lambda x, y: jnp.where(done, x, y), s_r, s)
        return self._obs(s, params), s, reward, done, info

    # ------------------------------------------------------------------ NumPy helpers
    def flatten_obs(self, obs: Mapping[str, np.ndarray]) -> np.ndarray:
        """CGRSP-v0's Dict observation as this env's flat vector (NumPy; float32)."""
        keys = ["beyond", "globals", "jobs"] + (["model"] if self.model else []) + ["offer", "slots", "stock"]
        missing = [k for k in keys if k not in obs]
        if missing:
            raise ConfigError(
                f"observation lacks {missing}: not a CGRSP-v0 observation of this design "
                f"(features={self.cfg.features!r})"
            )
        return np.concatenate([np.asarray(obs[k], np.float32).reshape(-1) for k in keys])


# action_mode -> the JAX env class of that design (CGRSP-v0's scheme's counterpart); jax/hold.py adds
# joint_hold when the package is imported (gpu_sched_env.cgrsp.jax imports it), so this module
# never imports its subclasses (no import circle)
DESIGNS: dict[str, type[JaxCGRSP]] = {"joint": JaxCGRSP}


def design_of(cfg: CGRSPEnvConfig) -> type[JaxCGRSP]:
    """The JAX env class of ``cfg``'s action design (check_supported has checked the name)."""
    return DESIGNS[cfg.action_mode]


__all__ = ["DESIGNS", "MORE_DESIGNS", "SUPPORTED", "JaxCGRSP", "check_supported", "day_arrays", "design_of"]
