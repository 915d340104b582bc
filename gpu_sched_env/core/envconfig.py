"""What every scenario's env config object shares: built once from a config or from keywords.

Each env (``CGRSPEnv``, ``HGSPEnv``, ``LLMServeEnv``, ``MIGEnv``, ``EdgeBatchEnv``) takes one
frozen config object (``<Scenario>EnvConfig`` in ``gpu_sched_env/<scenario>/config.py``)
whose ``__post_init__`` checks every field once, or the same names as keywords
(``gym.make("MIG-v0", n_jobs=20)``), which build one. The env itself then only derives its
spaces and state from the validated object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from gpu_sched_env.core.errors import ConfigError, check_keys, check_number

C = TypeVar("C")

# The ranges every scenario's reward settings share. A reward is a scale times a weighted sum of
# raw parts, and the learners store it in float32 (SB3's buffers, the JAX twin's rewards;
# largest value 3.4e38). A raw part of one step is at most about 1e14 (a million jobs waiting a
# year), so weights ≤ MAX_REWARD_WEIGHT and a scale ≤ MAX_REWARD_SCALE keep |reward| ≤ ~1e27, and
# a sum of weights stays finite; MIN_REWARD_SCALE keeps a second of waiting at unit weight
# (1e-9) far above float32's smallest normal number (1.2e-38).
MAX_REWARD_WEIGHT = 1e9
MIN_REWARD_SCALE = 1e-9
MAX_REWARD_SCALE = 1e3
# Jobs, tasks or requests per episode, in every scenario: the simulators hold O(n) arrays and
# records, so a million keeps an episode's memory bounded (the largest shipped CGRSP day in the
# scaling study has 100 000 jobs).
MAX_EPISODE_ITEMS = 1_000_000


def field_names(cls: type) -> tuple[str, ...]:
    """The init fields of a config dataclass, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def build_config(cls: type[C], env_id: str, config: Any, kwargs: Mapping[str, Any]) -> C:
    """``config`` itself (an instance of ``cls``), or ``cls(**kwargs)``; never both.

    Raises:
        ConfigError: a keyword that is not a field (naming every allowed one), a ``config``
            that is not a ``cls``, or a config given together with keywords.
    """
    names = field_names(cls)
    if config is None:
        check_keys(kwargs, [*names, "config", "render_mode"], section=f"{env_id} arguments")
        return cls(**kwargs)
    if not isinstance(config, cls):
        raise ConfigError(
            f"config = {config!r} is not allowed for {env_id}; allowed: a {cls.__name__}, "
            f"or None with the keywords {', '.join(names)}"
        )
    if kwargs:
        raise ConfigError(
            f"{env_id}: config and keywords {sorted(kwargs)} are both given; allowed: one of them "
            f"(config.replace(...) for a changed copy)"
        )
    return config


def check_weights(name: str, value: Any, parts: tuple[str, ...], defaults: Mapping[str, float]) -> dict[str, float]:
    """A reward-weight mapping over ``parts`` (each in [0, MAX_REWARD_WEIGHT]) on top of ``defaults`` (None: them)."""
    if value is None:
        return dict(defaults)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name} = {value!r} is not allowed; allowed: a mapping with keys {', '.join(parts)}")
    check_keys(value, parts, section=f"{name} keys")
    return {
        **defaults,
        **{k: float(check_number(f"{name}.{k}", v, lo=0.0, hi=MAX_REWARD_WEIGHT)) for k, v in value.items()},
    }


def short(value: Any) -> str:
    """``repr`` of a value for a message, a table shown by its type and shape."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (str, bytes)):
        return f"<{type(value).__name__} of shape {tuple(shape)}>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = [
    "MAX_EPISODE_ITEMS",
    "MAX_REWARD_SCALE",
    "MAX_REWARD_WEIGHT",
    "MIN_REWARD_SCALE",
    "build_config",
    "check_weights",
    "field_names",
    "short",
]
