"""Stock status processes: a fresh draw at every decision point, or a persistent Markov chain.

Both give, at any instant in time-of-day band b, each GPU type the status High / Medium /
Low with the spec's probabilities (p_H, p_M, p_L)_b (:class:`~gpu_sched_env.cgrsp.fleet.Fleet`
holds them). They differ in how long a status lasts:

* ``fresh`` (:class:`FreshStock`, the calibrated default): every decision point draws
  every type's status anew from the ``cgrsp/stock`` stream. A status lasts until the next
  decision point, so waiting a few seconds re-rolls a Low status for free.
* ``markov`` (:class:`MarkovStock`): per type a latent *market quantile* U(t) ~ Uniform(0, 1)
  that is redrawn at the events of a Poisson process; the status is U(t) read through
  band b's thresholds (High if U < p_H, Medium if U < p_H + p_M, else Low). Within a band
  the status is the continuous-time Markov chain with generator Q = (1·πᵀ − I)/τ_b ("at
  rate 1/τ_b, jump to a fresh draw from π"), whose stationary law is exactly π = (p_H, p_M,
  p_L)_b; since U(t) is uniform at every instant, the status is π-distributed at every
  instant, with no transient after a band change (where the thresholds change and a Low
  status may become Medium, the market recovering with the time of day). A run of one
  status lasts τ_b/(1 − Σπ²) on average (runs weighted equally), so τ_b = D·(1 − Σπ²)
  makes the mean dwell exactly D = ``stock_dwell_s`` in every band. Each type has its own
  stream ``cgrsp/stock-markov/<type name>``, drawn in fixed chunks as far ahead in time as
  a query needs, so the path depends on the seed alone, never on when or how often a
  policy looks (common random numbers across policies). As D → 0 the status at successive
  decision points becomes independent: the fresh model in distribution.

  D lies in [:data:`~gpu_sched_env.cgrsp.params.MIN_GAP_S`, ``MAX_TIME_S``] = [1 s, 1 year]: the
  simulator has no time step (it jumps from event to event), and 1 s is the shortest gap between
  decision points the public stock model reckons with (:func:`next_event_gap`'s floor); a shorter
  dwell only redraws more often between the same decision points (1/D redraws per second of
  path). And a day may need at most ``params.MAX_REDRAWS`` redraws per type over its arrival
  span, so the path it draws stays small in memory.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from gpu_sched_env.cgrsp.fleet import Fleet
from gpu_sched_env.cgrsp.params import DAY_TYPES, MAX_TIME_S, MIN_GAP_S, CGRSPParams
from gpu_sched_env.core.errors import ConfigError, check_number
from gpu_sched_env.core.rng import ChunkedUniforms, stream

_CHUNK = 4096
_DAY = 86400.0  # [s]


def redraw_rates(fleet: Fleet, dwell_s: float) -> list[list[float]]:
    """Per type, per band: the Markov redraw rate 1/τ_b [1/s], τ_b = D·(1 − Σπ²) (see the module docstring).

    A band with one certain status never changes, any rate will do: 1/D. (The parameters' bound
    on a day's redraws, ``params.MAX_REDRAWS``, reckons with these rates.)
    """
    out = []
    for g in range(fleet.n_types):
        rates = []
        for b in range(len(fleet.band_starts)):
            gini = 1.0 - sum(x * x for x in fleet.level_probs(b, g))
            rates.append(1.0 / (dwell_s * gini) if gini > 1e-12 else 1.0 / dwell_s)
        out.append(rates)
    return out


class FreshStock:
    """Every type's status drawn afresh at each query (one query per decision point)."""

    def __init__(self, fleet: Fleet, seed: int) -> None:
        self.fleet = fleet
        self._u = ChunkedUniforms(stream(seed, "cgrsp/stock"))

    def levels(self, t: float) -> list[int]:
        """Status per type at decision time ``t`` [s]."""
        return self.fleet.stock_levels(t, self._u.take(self.fleet.n_types))


class _Path:
    """One type's redraw events: sim times and the quantile drawn at each (lazily extended)."""

    __slots__ = ("gen", "times", "us", "lam_day", "lam_knots", "clock_knots", "offset", "last_lam")

    def __init__(self, gen: np.random.Generator, rates: list[float], band_starts: list[float], offset: float) -> None:
        self.gen = gen
        self.offset = offset  # [s] UTC second of day at sim time 0
        self.clock_knots = np.array([*band_starts, _DAY])
        # cumulative hazard Λ over one UTC day: piecewise linear, slope = band's redraw rate
        self.lam_knots = np.concatenate([[0.0], np.cumsum(np.asarray(rates) * np.diff(self.clock_knots))])
        self.lam_day = float(self.lam_knots[-1])
        self.last_lam = self._lam(offset)
        self.times: list[float] = [0.0]
        self.us: list[float] = [float(gen.random())]  # stationary start: U(0) is uniform

    def _lam(self, clock: float) -> float:
        k = np.floor(clock / _DAY)
        return float(k * self.lam_day + np.interp(clock - k * _DAY, self.clock_knots, self.lam_knots))

    def extend(self) -> None:
        """Draw the next chunk of redraw events (the same chunk whenever it is asked for)."""
        e = self.gen.exponential(1.0, _CHUNK)
        u = self.gen.random(_CHUNK)
        lam = self.last_lam + np.cumsum(e)
        self.last_lam = float(lam[-1])
        k = np.floor(lam / self.lam_day)
        clock = k * _DAY + np.interp(lam - k * self.lam_day, self.lam_knots, self.clock_knots)
        self.times += (clock - self.offset).tolist()
        self.us += u.tolist()

    def index(self, t: float) -> int:
        """Index of the last redraw at or before sim time ``t``."""
        while self.times[-1] <= t:
            self.extend()
        return bisect_right(self.times, t) - 1


class MarkovStock:
    """Persistent status: per type a Markov chain with the band's stationary law, mean dwell D."""

    def __init__(self, fleet: Fleet, seed: int, dwell_s: float) -> None:
        self.fleet = fleet
        self.dwell_s = float(check_number("stock_dwell_s", dwell_s, lo=MIN_GAP_S, hi=MAX_TIME_S))
        self._paths: list[_Path] = []
        for name, rates in zip(fleet.type_names, redraw_rates(fleet, self.dwell_s)):
            self._paths.append(
                _Path(stream(seed, f"cgrsp/stock-markov/{name}"), rates, fleet.band_starts, fleet.start_offset)
            )

    def levels(self, t: float) -> list[int]:
        """Status per type at time ``t`` [s] (any order of queries gives the same path)."""
        return self.fleet.stock_levels(t, [p.us[p.index(t)] for p in self._paths])

    def path(self, g: int, t_end: float) -> tuple[np.ndarray, np.ndarray]:
        """Type ``g``'s status path on [0, t_end): change-point times [s] and the status from each.

        The points are the redraw events and the band boundaries; consecutive points may
        carry the same status (a redraw that drew the same status).
        """
        p = self._paths[g]
        p.index(t_end)
        times = np.asarray(p.times)
        us = np.asarray(p.us)
        keep = times < t_end
        times, us = times[keep], us[keep]
        fl = self.fleet
        bounds = (
            np.array([k * _DAY + b for k in range(int(t_end // _DAY) + 2) for b in fl.band_starts]) - fl.start_offset
        )
        bounds = bounds[(bounds > 0) & (bounds < t_end)]
        pts = np.sort(np.concatenate([times, bounds]))
        u_at = us[np.searchsorted(times, pts, side="right") - 1]
        clock = np.mod(fl.start_offset + pts, _DAY)
        b = np.searchsorted(np.asarray(fl.band_starts), clock, side="right") - 1
        ph = np.asarray(fl.p_high)[b, g]
        phm = np.asarray(fl.p_high_medium)[b, g]
        lv = np.where(u_at < ph, 0, np.where(u_at < phm, 1, 2))
        return pts, lv


def make_stock_process(params: CGRSPParams, fleet: Fleet, seed: int) -> FreshStock | MarkovStock:
    """The stock process ``params.stock_process`` names, for run ``seed``."""
    if params.stock_process == "markov":
        return MarkovStock(fleet, seed, params.stock_dwell_s)
    return FreshStock(fleet, seed)


def stock_params(dwell: str) -> dict[str, object]:
    """Simulator parameters of a stock setting: ``"fresh"`` or a mean dwell in seconds (the sweep's labels)."""
    if dwell == "fresh":
        return {}
    allowed = f"allowed: 'fresh' or a number of seconds in [{MIN_GAP_S:g}, {MAX_TIME_S:g}] (CGRSPParams.stock_dwell_s)"
    try:
        d = float(dwell)
    except (TypeError, ValueError):
        raise ConfigError(f"dwell = {dwell!r} is not allowed; {allowed}") from None
    if not MIN_GAP_S <= d <= MAX_TIME_S:  # NaN fails too
        raise ConfigError(f"dwell = {dwell!r} is not allowed; {allowed}")
    return {"stock_process": "markov", "stock_dwell_s": d}


STOCK_KEYS = ("stock_process", "stock_dwell_s")  # the simulator parameters that make the stock model


def parse_regime(name: str) -> tuple[str, dict[str, object]]:
    """A regime's day type and stock parameters from its name: ``<day>_fresh`` or ``<day>_D<dwell s>``.

    ``hectic_D900`` is the hectic day under the Markov stock with a mean dwell of 900 s (the
    protocol's regimes, ``gpu_sched_agents.evaluate.protocol.REGIMES``, are such names).
    """
    day, sep, stock = str(name).rpartition("_")
    if sep and day in DAY_TYPES and (stock == "fresh" or stock[:1] == "D"):
        try:
            return day, stock_params("fresh" if stock == "fresh" else stock[1:])
        except ConfigError:
            pass
    raise ConfigError(
        f"regime = {name!r} is not allowed; allowed: <day>_fresh or <day>_D<mean dwell in seconds, {MIN_GAP_S:g} to "
        f"{MAX_TIME_S:g}> with a day "
        f"in {sorted(DAY_TYPES)}, e.g. hectic_fresh, surge_D900"
    )


def regime_config(config, name: str):
    """``config`` (a CGRSPEnvConfig) on regime ``name``'s day under its stock model, its other parameters kept."""
    day, stock = parse_regime(name)
    return config.replace(day=day, params=with_stock(config.params, stock))


def with_stock(params: dict[str, object], stock: dict[str, object]) -> dict[str, object]:
    """Simulator ``params`` under another stock model (``stock``: :func:`stock_params`' output), the rest kept."""
    return {**{k: v for k, v in params.items() if k not in STOCK_KEYS}, **stock}


# ---------------------------------------------------------------------- the public model's expectations
# What a scheduler may compute from the public stock model (the band's probabilities, the mean
# dwell, the mean delay per status) and the public state (expected free times, arrivals still
# to come): the deferring rules (gpu_sched_agents.heuristics.cgrsp.extensions) and the
# observation's ``model`` block (:mod:`gpu_sched_env.cgrsp.obs`) use the same two functions.
# ``state`` is a policy's read-only view or the simulator itself (the same attribute names).
# MIN_GAP_S (params, 1 s): floor of the expected time to the next decision point


def next_event_gap(state) -> float:
    """Expected time [s] to the next event, from public knowledge.

    The soonest busy slot's expected free time, or an arrival (exponential gaps of mean
    1/λ) while any is still to come; at least :data:`MIN_GAP_S`.
    """
    t = state.t
    gap = min((state.expected_free(s) - t for s, j in enumerate(state.slot_job) if j >= 0), default=float("inf"))
    if state.n_arrived < state.n_jobs:
        gap = min(gap, 1.0 / state.params.arrival_rate)
    return max(gap, MIN_GAP_S)


def defer_cost(state, g: int, gap: float) -> float:
    """Expected time [s] until a slot of type ``g`` left idle now starts a job, waiting for a better status.

    Each look at a new status costs ``w``: the time to the next decision point (``gap``)
    under fresh stock; under the Markov process at least the mean time to the type's next
    redraw τ = D·(1 − Σπ²). Accepting only the levels of a set A costs w / P(A) +
    E[delay | A]; the best of A = {High} and A = {High, Medium}.
    """
    fl, p = state.fleet, state.params
    probs = fl.level_probs(fl.band(state.t), g)
    w = gap
    if p.stock_process == "markov":
        w = max(gap, p.stock_dwell_s * (1.0 - sum(x * x for x in probs)))
    best = float("inf")
    for n_acc in (1, 2):  # accept High; accept High or Medium
        pa = sum(probs[:n_acc])
        if pa > 0.0:
            best = min(best, w / pa + sum(probs[i] * fl.delay_mean[i] for i in range(n_acc)) / pa)
    return best


__all__ = [
    "MIN_GAP_S",
    "FreshStock",
    "MarkovStock",
    "defer_cost",
    "make_stock_process",
    "next_event_gap",
    "STOCK_KEYS",
    "parse_regime",
    "redraw_rates",
    "regime_config",
    "stock_params",
    "with_stock",
]
