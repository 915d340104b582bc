"""The job-generator configuration: the Java tool's JSON format, validated into typed specs.

Type and distribution names are case-insensitive (``_``, ``-`` and spaces ignored, so
``Random_DependentOnPrevious`` and ``randomdependentonprevious`` are the same). Every
error names the section, the field, the value and what is allowed. Keys a section does
not know are errors (nothing silently ignored); keys that belong to another ``type`` of the
same section are tolerated because the Java tool's own files carry them (e.g. ``priority``
beside a ``Random`` priority).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpu_sched_env.core.errors import ConfigError, check_keys, check_mapping, check_number
from gpu_sched_env.mig.generator.distributions import (
    ROUNDING,
    Distribution,
    Normal,
    Uniform,
    norm_name,
    parse_distribution,
)

ALL_DISTS = ("uniform", "normal", "exponential", "lognormal", "empirical")
ARRIVAL_DISTS = ("uniform", "poisson", "exponential", "lognormal", "empirical", "piecewisepoisson")
# section -> (types allowed (canonical -> display), extra keys tolerated)
SECTIONS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "priorityConfigSettings": ({"fixed": "Fixed", "random": "Random"}, ("priority",)),
    "deadlineConfigSettings": (
        {"notdefined": "NotDefined", "fixed": "Fixed", "random": "Random"},
        ("deadline",),
    ),
    "maxRamUsageConfigSettings": (
        {
            "fixed": "Fixed",
            "randomindependent": "RandomIndependent",
            "randomdependentonprevious": "RandomDependentOnPrevious",
        },
        ("maxRamUsage", "firstValue", "maxValue"),
    ),
    "maxTimeslicesNumberConfigSettings": (
        {"fixed": "Fixed", "random": "Random"},
        ("maxTimeslicesNumber", "maxTimeslicesNum"),
    ),
    "stoppabilityConfigSettings": (
        {"fixed": "Fixed", "random": "Random"},
        ("isStoppable", "stoppableProbability"),
    ),
    "cudaCoresConfigSettings": ({"fixed": "Fixed", "random": "Random"}, ("coresNumber",)),
    "jobsArrivalConfigSettings": ({"fixed": "Fixed", "random": "Random"}, ("interval",)),
    "migrabilityConfigSettings": (
        {"fixed": "Fixed", "random": "Random"},
        ("isMigrable", "migrableProbability"),
    ),
}
REQUIRED = tuple(s for s in SECTIONS if s != "migrabilityConfigSettings")
TOP_KEYS = (*SECTIONS, "numberOfJobs", "numberOfTasks", "seed", "rounding", "$schema", "description")
COMMON_KEYS = ("type", "distributionType", "distributionParams")


@dataclass(frozen=True)
class AttrSpec:
    """One job attribute: ``fixed`` value, ``random`` distribution, or ``none``."""

    kind: str
    value: Any = None
    dist: Distribution | None = None


@dataclass(frozen=True)
class MemorySpec:
    """Per-minute peak memory [MB]: fixed, independent draws, or dependent on the previous."""

    kind: str  # "fixed" | "independent" | "dependent"
    value: int = 0
    dist: Distribution | None = None
    first: Distribution | None = None  # extension: first minute's distribution (dependent)
    max_value: int | None = None  # extension: cap [MB]


@dataclass(frozen=True)
class ArrivalSpec:
    """Inter-arrival gaps [min]: fixed interval, a gap distribution, Poisson or piecewise rate."""

    kind: str  # "fixed" | "gaps" | "poisson" | "piecewise"
    interval: float = 0.0
    dist: Distribution | None = None
    rate: float = 0.0  # [jobs/min]
    hourly_rates: tuple[float, ...] = ()  # [jobs/min] per hour, repeating
    start_hour: float = 0.0


@dataclass(frozen=True)
class GeneratorConfig:
    """A validated configuration (see ``schema.json`` for the file format)."""

    priority: AttrSpec
    deadline: AttrSpec
    memory: MemorySpec
    run_length: AttrSpec
    stoppable: AttrSpec
    cores: AttrSpec
    arrival: ArrivalSpec
    n_jobs: int
    seed: int
    rounding: str = "truncate"
    migrable: AttrSpec | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _section(cfg: Mapping[str, Any], name: str) -> tuple[Mapping[str, Any], str]:
    if name not in cfg:
        raise ConfigError(f"missing section {name}; required sections: {', '.join(REQUIRED)}")
    sec = check_mapping(name, cfg[name])
    types, extra = SECTIONS[name]
    check_keys(sec, COMMON_KEYS + extra, section=f"keys in {name}")
    if "type" not in sec:
        raise ConfigError(f"{name}.type is missing; allowed: {', '.join(types.values())}")
    t = norm_name(sec["type"])
    if t not in types:
        raise ConfigError(
            f"{name}.type = {sec['type']!r} is not known; allowed (case-insensitive): " + ", ".join(types.values())
        )
    return sec, t


def _need(sec: Mapping[str, Any], name: str, key: str, what: str) -> Any:
    if key not in sec:
        raise ConfigError(f"{name}.{key} is missing; {what}")
    return sec[key]


def _dist(sec: Mapping[str, Any], name: str, allowed=ALL_DISTS, integer=True, need_mean=True):
    dt = _need(sec, name, "distributionType", "allowed: " + ", ".join(allowed))
    params = _need(sec, name, "distributionParams", "an object with the distribution's parameters")
    return parse_distribution(name, dt, params, allowed, integer=integer, need_mean=need_mean)


def _int_attr(cfg, name, fixed_keys, lo=None, allowed=ALL_DISTS) -> AttrSpec:
    sec, t = _section(cfg, name)
    if t == "notdefined":
        return AttrSpec("none", -1)
    if t == "fixed":
        key = next((k for k in fixed_keys if k in sec), fixed_keys[0])
        v = _need(sec, name, key, f"a Fixed {name} needs an integer {key}")
        return AttrSpec("fixed", check_number(key, v, lo=lo, integer=True, section=name))
    dist = _dist(sec, name, allowed)
    if lo is not None and isinstance(dist, Uniform) and dist.lo < lo:
        raise ConfigError(f"{name}.distributionParams.lowerBound = {dist.lo:g} is out of range; allowed: >= {lo}")
    return AttrSpec("random", dist=dist)


def _bool_attr(cfg, name, key, pkey) -> AttrSpec:
    sec, t = _section(cfg, name)
    if t == "fixed":
        v = _need(sec, name, key, "allowed: true or false")
        if not isinstance(v, bool):
            raise ConfigError(f"{name}.{key} = {v!r} is not a boolean; allowed: true or false")
        return AttrSpec("fixed", v)
    p = _need(sec, name, pkey, "a probability in [0, 1]")
    return AttrSpec("random", float(check_number(pkey, p, lo=0.0, hi=1.0, section=name)))


def _memory(cfg) -> MemorySpec:
    name = "maxRamUsageConfigSettings"
    sec, t = _section(cfg, name)
    cap = None
    if "maxValue" in sec:
        cap = check_number("maxValue", sec["maxValue"], lo=0, integer=True, section=name)
    if t == "fixed":
        v = _need(sec, name, "maxRamUsage", "a Fixed memory needs an integer maxRamUsage [MB]")
        return MemorySpec("fixed", check_number("maxRamUsage", v, lo=0, integer=True, section=name), max_value=cap)
    if t == "randomindependent":
        if "firstValue" in sec:
            raise ConfigError(f"{name}.firstValue is only allowed with type RandomDependentOnPrevious")
        return MemorySpec("independent", dist=_dist(sec, name), max_value=cap)
    first = None
    if "firstValue" in sec:
        fv = check_mapping(f"{name}.firstValue", sec["firstValue"])
        check_keys(fv, ("distributionType", "distributionParams"), section=f"keys in {name}.firstValue")
        first = _dist(fv, f"{name}.firstValue")
    dist = _dist(sec, name, ("uniform", "normal"), need_mean=first is None)
    if isinstance(dist, Normal) and dist.relative_sd is not None and dist.sd:
        raise ConfigError(
            f"{name}.distributionParams has both sd = {dist.sd!r} and relativeSd = "
            f"{dist.relative_sd!r}; allowed: one of them"
        )
    if isinstance(dist, Normal) and dist.relative_sd is not None and first is None:
        raise ConfigError(f"{name}.distributionParams.relativeSd needs a firstValue distribution")
    return MemorySpec("dependent", dist=dist, first=first, max_value=cap)


def _arrival(cfg) -> ArrivalSpec:
    name = "jobsArrivalConfigSettings"
    sec, t = _section(cfg, name)
    if t == "fixed":
        v = _need(sec, name, "interval", "a Fixed arrival needs interval [min] > 0")
        return ArrivalSpec("fixed", interval=float(check_number("interval", v, lo=0.0, lo_open=True, section=name)))
    dt = _need(
        sec, name, "distributionType", "allowed: Uniform, Poisson, Exponential, LogNormal, Empirical, PiecewisePoisson"
    )
    key = norm_name(dt)
    where = f"{name}.distributionParams"
    params = check_mapping(where, _need(sec, name, "distributionParams", "an object"))
    if key == "poisson":
        check_keys(params, ("lambda",), section=f"keys in {where}")
        lam = _need(params, where, "lambda", "arrivals per minute, a number > 0 (fractions allowed)")
        return ArrivalSpec("poisson", rate=float(check_number("lambda", lam, lo=0.0, lo_open=True, section=where)))
    if key == "piecewisepoisson":
        check_keys(params, ("hourlyRates", "startHour"), section=f"keys in {where}")
        rates = _need(params, where, "hourlyRates", "a list of arrival rates [jobs/min], one per hour")
        if not isinstance(rates, (list, tuple)) or not rates:
            raise ConfigError(f"{where}.hourlyRates = {rates!r}: allowed: a non-empty list of rates >= 0")
        rr = tuple(float(check_number(f"hourlyRates[{i}]", r, lo=0.0, section=where)) for i, r in enumerate(rates))
        if sum(rr) <= 0:
            raise ConfigError(f"{where}.hourlyRates = {rates!r}: allowed: at least one rate > 0")
        sh = float(
            check_number("startHour", params.get("startHour", 0), lo=0.0, hi=len(rr), hi_open=True, section=where)
        )
        return ArrivalSpec("piecewise", hourly_rates=rr, start_hour=sh)
    dist = parse_distribution(name, dt, params, ARRIVAL_DISTS[:1] + ARRIVAL_DISTS[2:5], integer=False)
    if isinstance(dist, Uniform) and dist.lo < 0:
        raise ConfigError(f"{where}.lowerBound = {dist.lo!r}: allowed: >= 0 (gaps cannot be negative)")
    if hasattr(dist, "bins") and dist.bins[0] < 0:
        raise ConfigError(f"{where}.bins = {list(dist.bins)!r}: allowed: edges >= 0 (gaps cannot be negative)")
    return ArrivalSpec("gaps", dist=dist)


def parse_config(cfg: Mapping[str, Any]) -> GeneratorConfig:
    """Validate a configuration mapping (parsed JSON or YAML) into a :class:`GeneratorConfig`."""
    cfg = check_mapping("configuration", cfg)
    check_keys(cfg, TOP_KEYS, section="top-level keys")
    if "numberOfJobs" in cfg and "numberOfTasks" in cfg:
        raise ConfigError("numberOfJobs and numberOfTasks are aliases; give only one")
    nkey = "numberOfTasks" if "numberOfTasks" in cfg else "numberOfJobs"
    if nkey not in cfg:
        raise ConfigError("numberOfJobs is missing; allowed: an integer >= 1")
    n = check_number(nkey, cfg[nkey], lo=1, integer=True)
    if "seed" not in cfg:
        raise ConfigError("seed is missing; allowed: an integer >= 0")
    seed = check_number("seed", cfg["seed"], lo=0, integer=True)
    rounding = cfg.get("rounding", "truncate")
    if rounding not in ROUNDING:
        raise ConfigError(f"rounding = {rounding!r} is not known; allowed: {', '.join(ROUNDING)}")
    mig = None
    if "migrabilityConfigSettings" in cfg:
        mig = _bool_attr(cfg, "migrabilityConfigSettings", "isMigrable", "migrableProbability")
    return GeneratorConfig(
        priority=_int_attr(cfg, "priorityConfigSettings", ("priority",), lo=0),
        deadline=_int_attr(cfg, "deadlineConfigSettings", ("deadline",), lo=-1),
        memory=_memory(cfg),
        run_length=_int_attr(
            cfg, "maxTimeslicesNumberConfigSettings", ("maxTimeslicesNumber", "maxTimeslicesNum"), lo=1
        ),
        stoppable=_bool_attr(cfg, "stoppabilityConfigSettings", "isStoppable", "stoppableProbability"),
        cores=_int_attr(cfg, "cudaCoresConfigSettings", ("coresNumber",), lo=1),
        arrival=_arrival(cfg),
        n_jobs=int(n),
        seed=int(seed),
        rounding=rounding,
        migrable=mig,
        raw=dict(cfg),
    )
