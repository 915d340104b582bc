"""Distributions of the job generator: parsing, validation and vectorised sampling.

Each distribution is a small frozen dataclass with ``sample(rng, n)`` returning float draws
and ``mean``/``var`` for tests. Integer fields are converted by :func:`to_int` with the
configured rounding (``truncate`` like the Java tool, or ``round``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpu_sched_env.core.errors import ConfigError, check_keys, check_mapping, check_number

ROUNDING = ("truncate", "round")


def norm_name(name: Any) -> str:
    """Canonical form of a type name: case-insensitive, ``_``/``-``/spaces ignored."""
    return "".join(ch for ch in str(name).lower() if ch not in "_- ")


@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[lowerBound, upperBound]`` (integers inclusive when drawn as integers)."""

    lo: float
    hi: float
    kind = "Uniform"

    def sample(self, rng: np.random.Generator, n: int, integer: bool = False) -> np.ndarray:
        """Draw ``n`` values (integers drawn exactly, not rounded, when ``integer``)."""
        if integer:
            return rng.integers(int(self.lo), int(self.hi), size=n, endpoint=True).astype(float)
        return rng.uniform(self.lo, self.hi, size=n)

    def mean(self) -> float:
        """Mean of the continuous distribution (same for the inclusive integer one)."""
        return (self.lo + self.hi) / 2.0

    def var(self, integer: bool = False) -> float:
        """Variance (discrete uniform when ``integer``)."""
        w = self.hi - self.lo
        return ((w + 1) ** 2 - 1) / 12.0 if integer else w * w / 12.0


@dataclass(frozen=True)
class Normal:
    """Normal with ``mean`` and standard deviation ``sd`` (``relativeSd`` only for steps)."""

    mu: float
    sd: float
    relative_sd: float | None = None
    kind = "Normal"

    def sample(self, rng: np.random.Generator, n: int, integer: bool = False) -> np.ndarray:
        """Draw ``n`` floats."""
        return rng.normal(self.mu, self.sd, size=n)

    def mean(self) -> float:
        """Mean."""
        return self.mu

    def var(self, integer: bool = False) -> float:
        """Variance."""
        return self.sd * self.sd


@dataclass(frozen=True)
class Exponential:
    """Exponential with the given ``mean`` (rate = 1/mean)."""

    mu: float
    kind = "Exponential"

    def sample(self, rng: np.random.Generator, n: int, integer: bool = False) -> np.ndarray:
        """Draw ``n`` floats."""
        return rng.exponential(self.mu, size=n)

    def mean(self) -> float:
        """Mean."""
        return self.mu

    def var(self, integer: bool = False) -> float:
        """Variance."""
        return self.mu * self.mu


@dataclass(frozen=True)
class LogNormal:
    """Log-normal: ``exp(N(mu, sigma))``, ``mu``/``sigma`` of the underlying normal."""

    mu: float
    sigma: float
    kind = "LogNormal"

    def sample(self, rng: np.random.Generator, n: int, integer: bool = False) -> np.ndarray:
        """Draw ``n`` floats."""
        return rng.lognormal(self.mu, self.sigma, size=n)

    def mean(self) -> float:
        """Mean."""
        return math.exp(self.mu + self.sigma**2 / 2)

    def var(self, integer: bool = False) -> float:
        """Variance."""
        s2 = self.sigma**2
        return (math.exp(s2) - 1) * math.exp(2 * self.mu + s2)


@dataclass(frozen=True)
class Empirical:
    """Histogram: bin ``i`` = ``[bins[i], bins[i+1])`` chosen with probability ∝ ``weights[i]``."""

    bins: tuple[float, ...]
    weights: tuple[float, ...]
    kind = "Empirical"

    def _p(self) -> np.ndarray:
        w = np.asarray(self.weights, float)
        return w / w.sum()

    def sample(self, rng: np.random.Generator, n: int, integer: bool = False) -> np.ndarray:
        """Pick a bin by weight, then a uniform point inside it."""
        edges = np.asarray(self.bins, float)
        cdf = np.cumsum(self._p())
        cdf[-1] = 1.0
        k = np.searchsorted(cdf, rng.random(n), side="right")
        return edges[k] + (edges[k + 1] - edges[k]) * rng.random(n)

    def mean(self) -> float:
        """Mean of the continuous histogram density."""
        e = np.asarray(self.bins, float)
        return float(np.sum(self._p() * (e[:-1] + e[1:]) / 2))

    def var(self, integer: bool = False) -> float:
        """Variance of the continuous histogram density."""
        e = np.asarray(self.bins, float)
        a, b = e[:-1], e[1:]
        m2 = np.sum(self._p() * (a * a + a * b + b * b) / 3)
        return float(m2 - self.mean() ** 2)


Distribution = Uniform | Normal | Exponential | LogNormal | Empirical

# canonical type name -> (display name, required params, optional params)
DIST_PARAMS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "uniform": ("Uniform", ("lowerBound", "upperBound"), ()),
    "normal": ("Normal", ("mean", "sd"), ("relativeSd",)),
    "exponential": ("Exponential", ("mean",), ()),
    "lognormal": ("LogNormal", ("mu", "sigma"), ()),
    "empirical": ("Empirical", ("bins", "weights"), ()),
}


def parse_distribution(
    section: str,
    dist_type: Any,
    params: Any,
    allowed: tuple[str, ...] = ("uniform", "normal", "exponential", "lognormal", "empirical"),
    integer: bool = False,
    need_mean: bool = True,
) -> Distribution:
    """Validate ``distributionType``/``distributionParams`` of ``section`` and build it."""
    key = norm_name(dist_type)
    if key not in allowed:
        names = ", ".join(DIST_PARAMS[a][0] for a in allowed)
        raise ConfigError(
            f"{section}.distributionType = {dist_type!r} is not known; allowed (case-insensitive): {names}"
        )
    where = f"{section}.distributionParams"
    params = check_mapping(where, params)
    _, required, optional = DIST_PARAMS[key]
    check_keys(params, required + optional, section=f"keys in {where}")
    req = [r for r in required if not (r == "mean" and key == "normal" and not need_mean)]
    if key == "normal" and "relativeSd" in params:
        req = [r for r in req if r != "sd"]
    missing = [r for r in req if r not in params]
    if missing:
        raise ConfigError(
            f"{where} is missing {', '.join(missing)}; a {DIST_PARAMS[key][0]} distribution needs " + ", ".join(req)
        )

    def num(f: str, **kw: Any) -> float:
        return float(
            check_number(f, params[f], section=where, integer=integer and f in ("lowerBound", "upperBound"), **kw)
        )

    if key == "uniform":
        lo, hi = num("lowerBound"), num("upperBound")
        if lo > hi:
            raise ConfigError(
                f"{where}.lowerBound = {params['lowerBound']!r} > upperBound = {params['upperBound']!r}; "
                "allowed: lowerBound <= upperBound"
            )
        return Uniform(lo, hi)
    if key == "normal":
        mu = num("mean") if "mean" in params else 0.0
        sd = num("sd", lo=0.0) if "sd" in params else 0.0
        rel = num("relativeSd", lo=0.0) if "relativeSd" in params else None
        return Normal(mu, sd, rel)
    if key == "exponential":
        return Exponential(num("mean", lo=0.0, lo_open=True))
    if key == "lognormal":
        return LogNormal(num("mu"), num("sigma", lo=0.0))
    bins, weights = params["bins"], params["weights"]
    if not isinstance(bins, (list, tuple)) or len(bins) < 2:
        raise ConfigError(f"{where}.bins = {bins!r}: allowed: a list of at least 2 increasing edges")
    for i, b in enumerate(bins):
        check_number(f"bins[{i}]", b, section=where)
    if any(float(b2) <= float(b1) for b1, b2 in zip(bins, bins[1:], strict=False)):
        raise ConfigError(f"{where}.bins = {bins!r}: allowed: strictly increasing edges")
    if not isinstance(weights, (list, tuple)) or len(weights) != len(bins) - 1:
        raise ConfigError(f"{where}.weights = {weights!r}: allowed: a list of {len(bins) - 1} weights (one per bin)")
    for i, w in enumerate(weights):
        check_number(f"weights[{i}]", w, section=where, lo=0.0)
    if sum(float(w) for w in weights) <= 0:
        raise ConfigError(f"{where}.weights = {weights!r}: allowed: non-negative, at least one > 0")
    return Empirical(tuple(float(b) for b in bins), tuple(float(w) for w in weights))


def to_int(x: np.ndarray, rounding: str, floor: int | None) -> np.ndarray:
    """Continuous draws to int64: ``truncate`` toward zero (Java cast) or ``round`` half-even."""
    y = np.trunc(x) if rounding == "truncate" else np.rint(x)
    if floor is not None:
        y = np.maximum(y, floor)
    return y.astype(np.int64)


def draw_int(dist: Distribution, rng: np.random.Generator, n: int, rounding: str, floor: int | None) -> np.ndarray:
    """``n`` integer draws; uniform integers are drawn exactly, others converted by ``rounding``."""
    if isinstance(dist, Uniform):
        return dist.sample(rng, n, integer=True).astype(np.int64)
    return to_int(dist.sample(rng, n), rounding, floor)
