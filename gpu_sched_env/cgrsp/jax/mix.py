"""Mixed batches: the day type and the stock model as per-env data (one vmapped batch, many regimes).

A *regime* is a (day type, stock model) pair: quiet / normal / hectic / surge × fresh or Markov
with mean dwell D. A mixed env (:meth:`JaxCGRSP.mixed <gpu_sched_env.cgrsp.jax.env.JaxCGRSP.mixed>`)
keeps one :class:`~gpu_sched_env.cgrsp.jax.types.EnvParams` row per regime (``params.mix.table``,
every field stacked) and draws each native day's regime from the product of the day mix (the
month's, :data:`~gpu_sched_env.cgrsp.workload.DEFAULT_MONTH_MIX`: 4 hectic, 3 surge, 18 normal,
5 quiet of 30) and the stock mix (uniform over its entries). The day's arrays are padded to the
largest day's job count (padded jobs have submit time +inf: they never arrive) and its regime is
the day's ``regime`` field; every step reads its regime's row (:func:`resolve`), so what differs
between regimes (job count, arrival rate, offered load, the Markov flag, redraw waits and hazards,
anything else a day type or stock model changes) is data, selected with gathers and
``jnp.where`` rather than Python branches. A single-regime env never goes through here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from gpu_sched_env.cgrsp.config import CGRSPEnvConfig
from gpu_sched_env.cgrsp.jax.types import Day, EnvParams, EnvState, Mix, day_of, make_params
from gpu_sched_env.cgrsp.workload import day_weights
from gpu_sched_env.core.errors import ConfigError

FRESH = "fresh"
GENERALIST_STOCKS: tuple[str, ...] = ("fresh", "300", "900", "3600")  # the generalist's: fresh and D [s]


@dataclass(frozen=True)
class Regime:
    """One day type under one stock model (``dwell_s`` None: fresh stock; else Markov, mean dwell [s])."""

    day: str
    dwell_s: float | None

    @property
    def name(self) -> str:
        """``hectic_fresh``, ``surge_D900`` ..."""
        return f"{self.day}_{FRESH if self.dwell_s is None else f'D{self.dwell_s:g}'}"

    def config(self, cfg: CGRSPEnvConfig) -> CGRSPEnvConfig:
        """``cfg`` on this regime's day under this regime's stock model."""
        if self.dwell_s is None:
            return cfg.replace(day=self.day, stock_process="fresh")
        return cfg.replace(day=self.day, stock_process="markov", stock_dwell_s=float(self.dwell_s))


def parse_stock(entry: object, field: str = "stock_mix") -> float | None:
    """``"fresh"`` → None; a positive number of seconds (or its string) → the Markov dwell D [s]."""
    if isinstance(entry, str) and entry.strip().lower() == FRESH:
        return None
    try:
        d = float(entry)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        d = math.nan
    if not (math.isfinite(d) and d > 0):
        raise ConfigError(
            f"{field} entry {entry!r} is not a stock model; allowed: 'fresh' or a Markov mean dwell D in seconds > 0 "
            "(e.g. [fresh, 300, 900, 3600])"
        )
    return d


def regimes_of(
    stocks: Sequence[object],
    days: Mapping[str, float] | None = None,
    field: str = "stock_mix",
    days_field: str = "day mix",
) -> tuple[list[Regime], np.ndarray]:
    """The regimes of a day mix × a stock mix and their probabilities (the product law).

    Args:
        stocks: stock models, each ``"fresh"`` or a Markov dwell D [s]; drawn uniformly.
        days: day type → weight (default: the month's mix, 4 hectic, 3 surge, 18 normal, 5 quiet).
        field: the name errors give the stock list under.
        days_field: the name errors give the day mix under (:func:`~gpu_sched_env.cgrsp.workload.day_weights`).
    """
    if isinstance(stocks, str | bytes) or not isinstance(stocks, Sequence) or not len(stocks):
        raise ConfigError(f"{field} = {stocks!r}: give a non-empty list of 'fresh' and/or Markov dwells D [s]")
    dwells = [parse_stock(s, field) for s in stocks]
    if len(set(dwells)) < len(dwells):
        raise ConfigError(f"{field} = {list(stocks)!r} repeats a stock model; give each once")
    weights = day_weights(days, days_field)
    regimes, probs = [], []
    for d, w in weights.items():
        for dw in dwells:
            regimes.append(Regime(d, dw))
            probs.append(w / len(dwells))
    return regimes, np.asarray(probs, np.float64)


def mix_params(cfg: CGRSPEnvConfig, regimes: Sequence[Regime], probs: np.ndarray, dtype) -> tuple[EnvParams, int]:
    """``(params, largest job count)``: regime 0's params carrying every regime's row in ``mix``.

    ConfigError when the regimes differ in what a static shape holds (slots, GPU types, the
    classes' SPT order): a mixed batch needs one shape.
    """
    from gpu_sched_env.cgrsp.fleet import Fleet

    rows, shapes = [], set()
    for r in regimes:
        c = r.config(cfg)
        p = c.sim_params()
        fl = Fleet.from_params(p)
        est = [row[fl.nominal_type] for row in fl.wbar]
        shapes.add((p.c_max, fl.n_types, tuple(np.argsort(est, kind="stable")), tuple(fl.slot_type)))
        row = make_params(p, c, dtype).replace(
            n_jobs=jnp.asarray(int(p.n_jobs), jnp.int32),
            log_n=jnp.asarray(math.log1p(int(p.n_jobs)), dtype),
            markov=jnp.asarray(p.stock_process == "markov"),
        )
        rows.append((row, int(p.n_jobs)))
    if len(shapes) > 1:
        raise ConfigError(
            f"the regimes {[r.name for r in regimes]} differ in slots, GPU types or the classes' order ({shapes}); "
            "a mixed batch needs them equal"
        )
    table = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *[r for r, _ in rows])
    mix = Mix(table=table, probs=jnp.asarray(probs, dtype))
    return rows[0][0].replace(mix=mix), max(n for _, n in rows)


def row_of(params: EnvParams, r: jnp.ndarray) -> EnvParams:
    """Regime ``r``'s params (its row of ``params.mix.table``), keeping the pool."""
    row = jax.tree_util.tree_map(lambda a: a[r], params.mix.table)
    return row.replace(pool=params.pool, pool_start=params.pool_start)


def resolve(s: EnvState | Day, params: EnvParams) -> EnvParams:
    """The params of the state's regime (a gather of its row); ``params`` itself when not mixed."""
    if params.mix is None:
        return params
    day = s if isinstance(s, Day) else day_of(s, params)
    return row_of(params, day.regime)


def draw_regime(key: jax.Array, params: EnvParams) -> jnp.ndarray:
    """A regime index drawn from the mix (i32)."""
    return jax.random.choice(key, params.mix.probs.shape[0], p=params.mix.probs).astype(jnp.int32)


__all__ = [
    "FRESH",
    "GENERALIST_STOCKS",
    "Regime",
    "draw_regime",
    "mix_params",
    "parse_stock",
    "regimes_of",
    "resolve",
    "row_of",
]
