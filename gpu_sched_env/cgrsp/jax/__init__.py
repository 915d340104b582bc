"""CGRSP in JAX: the joint_heads design of ``CGRSP-v0`` as pure, jit- and vmap-able functions.

Optional: needs the ``jax`` extra (``pip install 'gpu_sched_env[jax]'``); nothing else in the
package imports JAX. Why hand-written rather than a port of the NumPy simulator: the
reference advances an event heap in a Python loop; here the advance to the next decision
point is one ``lax.while_loop`` over fixed-shape arrays (C slots, the day's N jobs padded to a
static N), so a batch of thousands of days steps as one XLA program (gymnax / Jumanji style).

    from gpu_sched_env.cgrsp.jax import JaxCGRSP
    env = JaxCGRSP.from_config(cfg)            # ConfigError for what it does not implement
    obs, state = env.reset(key, env.default_params)

See docs/cgrsp_env.md, "The JAX fast path", and :class:`~gpu_sched_env.cgrsp.jax.env.JaxCGRSP`.
"""

from __future__ import annotations

try:
    import flax  # noqa: F401
    import jax  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "gpu_sched_env.cgrsp.jax needs JAX and flax, which are not installed: pip install 'gpu_sched_env[jax]'"
    ) from e

from gpu_sched_env.cgrsp.jax.env import JaxCGRSP, day_arrays  # noqa: E402
from gpu_sched_env.cgrsp.jax.hold import JaxHold  # noqa: E402 (registers action_mode="joint_hold")
from gpu_sched_env.cgrsp.jax.rules import (  # noqa: E402
    RULES,
    IncompleteDayError,
    Rule,
    StalledRolloutError,
    evaluate,
    rollout,
    stack_days,
)
from gpu_sched_env.cgrsp.jax.types import Day, EnvParams, EnvState, check_params  # noqa: E402
from gpu_sched_env.cgrsp.jax.when import JaxWhen  # noqa: E402 (registers action_mode="when")

__all__ = [
    "RULES",
    "Day",
    "EnvParams",
    "EnvState",
    "IncompleteDayError",
    "JaxCGRSP",
    "JaxHold",
    "JaxWhen",
    "Rule",
    "StalledRolloutError",
    "check_params",
    "day_arrays",
    "evaluate",
    "rollout",
    "stack_days",
]
