"""The one config object of ``CGRSP-v0``: every env setting, its default and its checks.

:class:`CGRSPEnvConfig` is the single home of the env's knobs. The env takes it (or the same
names as keywords, which build one); Hydra's ``env`` schema is derived from it
(:func:`hydra_schema`), so a misspelt key fails when a training config is composed;
TensorBoard's HParams log it whole (``dataclasses.asdict``); a run directory's
``config.yaml`` is read back through :func:`migrate_env_section`, the one place that knows
what older run configs lacked. Simulator parameters (``c_max``, ``stock_process`` ...) are
not env settings: they travel in ``params`` and are checked by
:func:`~gpu_sched_env.cgrsp.params.make_params`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args, get_origin

from gpu_sched_env.cgrsp.params import DAY_TYPES, MAX_SLOTS, PARAM_NAMES, CGRSPParams, make_params
from gpu_sched_env.cgrsp.rewards import PRESETS, REWARD_PARTS
from gpu_sched_env.cgrsp.schemes import ACTION_SCHEMES, scheme_of
from gpu_sched_env.core.envconfig import MAX_REWARD_SCALE, MAX_REWARD_WEIGHT, MIN_REWARD_SCALE
from gpu_sched_env.core.errors import (
    DEFAULT_ILLEGAL_ACTION,
    ConfigError,
    IllegalAction,
    check_choice,
    check_illegal_action,
    check_keys,
    check_number,
)

Day = Literal["quiet", "normal", "hectic", "surge"]
Order = Literal["deadline", "submit", "spt", "laxity"]
WindowBy = Literal["order", "class"]
ActionMode = Literal["joint", "slot", "joint_hold", "when"]
Hold = Literal["event", "stock"]
Shaping = Literal["none", "queue", "backlog", "backlog_risk"]
Features = Literal["basic", "model"]

DEFAULT_REWARD_SCALE = 1.0 / 3600.0  # reward unit: one job-hour of waiting
CONFIG_VERSION = 2  # 1: run configs before the config object (no window_by/hold/shaping_gamma)
# K, the window: the observation holds K rows of 7 + 2T floats and the joint action space K·C + 1
# actions, so memory per step is O(K); 10 000 is 5x the widest window the benchmarks use (2000).
MAX_WINDOW = 10_000


@dataclass(frozen=True)
class CGRSPEnvConfig:
    """Settings of ``CGRSP-v0`` (the env's docstring, *Arguments*, explains each one).

    Attributes:
        day: day type (λ and N of the spec).
        window: K, waiting jobs shown and addressable per step, in [1, MAX_WINDOW] (10 000).
        order: canonical window order.
        window_by: ``order`` (the first K jobs in that order) or ``class`` (one head per
            complexity class).
        action_mode: ``joint`` (job–slot pairs), ``slot`` (one idle slot offered at a time),
            ``joint_hold`` (job–slot pairs plus "hold GPU type g", :mod:`gpu_sched_env.cgrsp.held`) or
            ``when`` (dispatch the rule's base order's next pair, or wait: :mod:`gpu_sched_env.cgrsp.when`).
        hold: ``slot`` mode only: a slot left idle is offered again at the next ``event`` or
            once its ``stock`` status changes.
        reward: reward preset (:mod:`gpu_sched_env.cgrsp.rewards`).
        reward_weights: explicit per-part overrides of the preset (each in [0, 1e9],
            ``core.envconfig.MAX_REWARD_WEIGHT``).
        shaping: potential-based shaping term.
        shaping_gamma: γ of the shaping term γ·Φ(s′) − Φ(s) (use the learner's discount; 1 =
            undiscounted, the episode's shaping sum is then Φ(end) − Φ(start)).
        reward_scale: reward units per weighted raw unit, in [1e-9, 1e3] (1/3600 = one job-hour;
            ``core.envconfig.MIN_REWARD_SCALE`` / ``MAX_REWARD_SCALE``: with the weights' bound
            every reward stays finite in float32).
        slot_rows: rows of the ``slots`` table (in [``c_max``, ``params.MAX_SLOTS``]; None = ``c_max``).
        features: ``basic`` or ``model`` (adds the public stock model's expectations per
            GPU type, the ``model`` key).
        illegal_action: what an in-range action the mask forbids does: ``substitute`` (played
            as *wait* where legal, else the lowest legal action, as in the JAX twin) or ``raise``
            (``InvalidActionError``).
        params: simulator parameter overrides (any ``CGRSPParams`` field).
    """

    day: Day = "hectic"
    window: int = 16
    order: Order = "deadline"
    window_by: WindowBy = "order"
    action_mode: ActionMode = "joint"
    hold: Hold = "event"
    reward: str = "study"  # a key of rewards.PRESETS (the one table of presets)
    reward_weights: Mapping[str, float] = field(default_factory=dict)
    shaping: Shaping = "none"
    shaping_gamma: float = 1.0
    reward_scale: float = DEFAULT_REWARD_SCALE
    slot_rows: int | None = None
    features: Features = "basic"
    illegal_action: IllegalAction = DEFAULT_ILLEGAL_ACTION
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_illegal_action(self.illegal_action)  # the one check every env's setting has (core.errors)
        for f in fields(self):  # every Literal field: one of its values
            if get_origin(_hint(f.name)) is Literal:
                check_choice(f.name, getattr(self, f.name), get_args(_hint(f.name)))
        check_choice("reward", self.reward, tuple(PRESETS))
        set_ = object.__setattr__
        set_(self, "window", int(check_number("window", self.window, lo=1, hi=MAX_WINDOW, integer=True)))
        set_(self, "shaping_gamma", float(check_number("shaping_gamma", self.shaping_gamma, lo=0.0, hi=1.0)))
        scale = check_number("reward_scale", self.reward_scale, lo=MIN_REWARD_SCALE, hi=MAX_REWARD_SCALE)
        set_(self, "reward_scale", float(scale))
        if not isinstance(self.reward_weights, Mapping):
            raise ConfigError(
                f"reward_weights = {self.reward_weights!r} must be a mapping with keys {', '.join(REWARD_PARTS)}"
            )
        check_keys(self.reward_weights, REWARD_PARTS, section="reward_weights")
        set_(
            self,
            "reward_weights",
            {
                k: float(check_number(f"reward_weights.{k}", v, lo=0.0, hi=MAX_REWARD_WEIGHT))
                for k, v in self.reward_weights.items()
            },
        )
        if not isinstance(self.params, Mapping):
            raise ConfigError(f"params = {self.params!r} must be a mapping of simulator parameters")
        set_(self, "params", dict(self.params))
        # cross-field rules
        if self.hold != "event" and not scheme_of(self.action_mode).holds_slots:  # the scheme knows
            holding = " or ".join(repr(m) for m, cls in ACTION_SCHEMES.items() if cls.holds_slots)
            raise ConfigError(
                f"hold = {self.hold!r} needs action_mode = {holding} (got {self.action_mode!r}): a slot is held when "
                f"the agent leaves it idle; allowed with {self.action_mode}: 'event'"
            )
        c_max = self.sim_params().c_max  # also checks every simulator parameter
        scheme_of(self.action_mode).check_config(self)  # what the action design can express (window, fleet)
        if self.slot_rows is not None:
            rows = check_number("slot_rows", self.slot_rows, lo=c_max, hi=MAX_SLOTS, integer=True)
            set_(self, "slot_rows", int(rows))

    # ------------------------------------------------------------------ construction
    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The env settings (everything else given to the env is a simulator parameter)."""
        return tuple(f.name for f in fields(cls) if f.name != "params")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> CGRSPEnvConfig:
        """Split keywords into env settings and simulator parameters (``gym.make`` style).

        ``params`` (a mapping of simulator parameters) may be given too; keywords that are
        neither a setting nor a simulator parameter raise ``ConfigError`` listing both.
        """
        given = _params_arg(kwargs.pop("params", None))
        own = {k: kwargs.pop(k) for k in list(kwargs) if k in cls.names()}
        _check_extra(kwargs)
        return cls(**own, params={**given, **kwargs})

    def replace(self, **kwargs: Any) -> CGRSPEnvConfig:
        """A copy with some settings (or simulator parameters) changed."""
        given = _params_arg(kwargs.pop("params", None))
        own = {k: v for k, v in kwargs.items() if k in self.names()}
        extra = {k: v for k, v in kwargs.items() if k not in own}
        _check_extra(extra)
        return dataclasses.replace(self, **own, params={**self.params, **given, **extra})

    def sim_params(self) -> CGRSPParams:
        """The simulator's parameters for this day and overrides (validated)."""
        return make_params(self.day, **self.params)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for YAML, JSON and TensorBoard's HParams)."""
        return dataclasses.asdict(self) | {"reward_weights": dict(self.reward_weights), "params": dict(self.params)}


def _params_arg(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ConfigError(f"params = {params!r} must be a mapping of simulator parameters")
    return dict(params)


def _check_extra(extra: Mapping[str, Any]) -> None:
    """Keywords that are no env setting must be simulator parameters (the message lists both)."""
    unknown = sorted(set(extra) - set(PARAM_NAMES))
    if unknown:
        raise ConfigError(
            f"unknown CGRSP-v0 keyword(s): {', '.join(unknown)}; allowed: the env settings "
            f"{', '.join((*CGRSPEnvConfig.names(), 'params'))} (the env also takes render_mode, trace) and the "
            f"simulator parameters {', '.join(sorted(PARAM_NAMES))}"
        )


def _hint(name: str) -> Any:
    return _HINTS[name]


_HINTS = typing.get_type_hints(CGRSPEnvConfig)


# The simulator parameters set most often, reachable on a Hydra command line as
# ``env.<name>=...`` (``+env.params.<name>=...`` reaches every one): None = the day's value.
# :func:`env_config_of` moves them into ``params``, where make_params checks them.
COMMAND_LINE_PARAMS = (
    "c_max",
    "n_jobs",
    "arrival_rate",
    "tight_fraction",
    "stock_process",
    "stock_dwell_s",
    "alpha1",
    "alpha2",
)


def hydra_schema(exclude: tuple[str, ...] = ("day", "illegal_action")) -> type:
    """A Hydra/OmegaConf structured-config schema with the fields and defaults of :class:`CGRSPEnvConfig`.

    OmegaConf cannot type ``Literal`` fields, so they become ``str`` here; their values are
    checked when the real config is built (:func:`env_config_of`), before a run writes
    anything. ``day`` comes from Hydra's ``day`` group, so it is left out by default, and so is
    ``illegal_action``: the envs the agents train and judge on are strict whatever a config says
    (``gpu_sched_agents.rl.envs.strict``), so it is no training setting. The
    :data:`COMMAND_LINE_PARAMS` follow as optional fields typed as in ``CGRSPParams``.
    """
    param_hints = typing.get_type_hints(CGRSPParams)
    specs = []
    for f in fields(CGRSPEnvConfig):
        if f.name in exclude:
            continue
        hint = _HINTS[f.name]
        if get_origin(hint) is Literal:
            hint = str
        elif f.name == "reward_weights":
            hint = dict[str, float]
        elif f.name == "params":
            hint = dict[str, Any]
        elif isinstance(hint, types.UnionType):  # int | None
            hint = typing.Optional[int]  # noqa: UP045 (OmegaConf reads typing.Optional)
        default = (
            field(default_factory=f.default_factory) if f.default_factory is not dataclasses.MISSING else f.default
        )
        specs.append((f.name, hint, default))
    specs += [(name, typing.Optional[param_hints[name]], None) for name in COMMAND_LINE_PARAMS]  # noqa: UP045
    return dataclasses.make_dataclass("CGRSPEnvSchema", specs)


def migrate_env_section(section: Mapping[str, Any]) -> dict[str, Any]:
    """A run config's ``env`` section in today's form (the one place that knows older forms).

    Version 1 (runs written before the config object) lacked ``window_by``, ``hold`` and
    ``shaping_gamma``: they take the values those runs were trained with (``order``,
    ``event``, 1.0 = Φ′ − Φ). Unknown keys still fail when the config is built.
    """
    out = dict(section)
    version = int(out.pop("version", 1))
    if version < CONFIG_VERSION:
        out.setdefault("window_by", "order")
        out.setdefault("hold", "event")
        out.setdefault("shaping_gamma", 1.0)
    return out


def env_config_of(section: Mapping[str, Any], day: str) -> CGRSPEnvConfig:
    """The env config of a Hydra ``env`` section (a DictConfig or a mapping) for ``day``."""
    check_choice("day", day, DAY_TYPES)
    data = migrate_env_section({k: _plain(v) for k, v in section.items()})
    params = dict(data.pop("params", None) or {})
    for name in COMMAND_LINE_PARAMS:  # env.c_max=7 is params.c_max = 7
        value = data.pop(name, None)
        if value is None:
            continue
        if name in params and params[name] != value:
            raise ConfigError(f"env.{name} = {value!r} and env.params.{name} = {params[name]!r} disagree; give it once")
        params[name] = value
    unknown = sorted(set(data) - set(CGRSPEnvConfig.names()))
    if unknown:
        raise ConfigError(
            f"env: unknown key(s) {unknown}; allowed: {', '.join(CGRSPEnvConfig.names())}, params, "
            f"{', '.join(COMMAND_LINE_PARAMS)}"
        )
    data["params"] = params
    data["reward_weights"] = data.get("reward_weights") or {}
    return CGRSPEnvConfig(day=day, **{k: v for k, v in data.items() if k != "day"})


def as_env_config(spec: CGRSPEnvConfig | Mapping[str, Any] | None) -> CGRSPEnvConfig:
    """A config from a config, a mapping of ``gym.make``-style keywords, or None (the defaults)."""
    if isinstance(spec, CGRSPEnvConfig):
        return spec
    if spec is None:
        return CGRSPEnvConfig()
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"env config = {spec!r} must be a CGRSPEnvConfig or a mapping of its settings and simulator parameters"
        )
    return CGRSPEnvConfig.from_kwargs(**spec)


def _plain(v: Any) -> Any:
    """OmegaConf containers as plain dicts/lists (no import of omegaconf here)."""
    if hasattr(v, "items"):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) or type(v).__name__ == "ListConfig":
        return [_plain(x) for x in v]
    return v


__all__ = [
    "COMMAND_LINE_PARAMS",
    "CONFIG_VERSION",
    "DEFAULT_REWARD_SCALE",
    "MAX_WINDOW",
    "REWARD_PARTS",
    "ActionMode",
    "CGRSPEnvConfig",
    "Day",
    "Features",
    "Hold",
    "Order",
    "Shaping",
    "WindowBy",
    "as_env_config",
    "env_config_of",
    "hydra_schema",
    "migrate_env_section",
]
