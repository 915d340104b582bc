"""What every scenario shares: events, RNG streams, validation errors, statistics, I/O, plots."""

from gpu_sched_env.core.errors import ConfigError, InvalidActionError
from gpu_sched_env.core.events import EventQueue
from gpu_sched_env.core.rng import make_streams

__all__ = ["ConfigError", "EventQueue", "InvalidActionError", "make_streams"]
