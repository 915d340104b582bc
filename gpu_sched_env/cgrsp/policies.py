"""The CGRSP policy registry and knob handling; ``gpu_sched_agents.heuristics.cgrsp`` fills it (plug-in group).

Policies follow :class:`gpu_sched_env.core.policy.Policy`: ``reset(view, rng)`` and
``decide(view)`` with ``view`` the simulator's read-only
:class:`~gpu_sched_env.cgrsp.view.SimView` (never the simulator: no ``assign``, no realised
draws), the decision an ordered list of ``(job_id, slot_index)`` assignments. Factories have
the one registry signature ``POLICIES.make(name, world, **knobs)``
(:mod:`gpu_sched_env.core.registry`) with ``world`` the run's
:class:`~gpu_sched_env.cgrsp.params.CGRSPParams`: ``POLICIES.make("rh", params, rho_res=2)``;
each entry lists its knobs with their defaults.
The simulator resolves names here, so this package never imports the agents.

A user's keywords (``simulate(..., c_max=3, theta=300)``, the experiment CLI's ``--param``,
batch grids) mix the simulator's parameters (:data:`~gpu_sched_env.cgrsp.params.PARAM_NAMES`)
with policy knobs (each policy's own config); :func:`split_kwargs` tells them apart for the
policies in play.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpu_sched_env.cgrsp.params import PARAM_NAMES, CGRSPParams, make_params
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.core.policy import Policy, check_policy
from gpu_sched_env.core.registry import PolicyRegistry

POLICIES = PolicyRegistry("cgrsp", world=CGRSPParams)


def policy_names(published_only: bool = True) -> tuple[str, ...]:
    """Registered names: the published policies (+ our extensions unless ``published_only``)."""
    return POLICIES.names(published_only=published_only)


def build_policy(policy: str | Policy, params: CGRSPParams, **knobs: Any) -> Policy:
    """A policy from a registered name and its knobs, or ``policy`` itself if it follows the protocol."""
    if isinstance(policy, str):
        return POLICIES.make(policy, params, **knobs)
    if knobs:
        raise ConfigError(
            f"knobs {', '.join(sorted(knobs))} can only be set with a policy name, not on the object {policy!r}"
        )
    return check_policy(policy)


def knob_owners() -> dict[str, tuple[str, ...]]:
    """Every registered knob name → the policies that have it."""
    out: dict[str, list[str]] = {}
    for name in POLICIES.names():
        for k in POLICIES.entry(name).knobs:
            out.setdefault(k, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def param_names_help() -> str:
    """What a CGRSP ``--param NAME`` may be (for error messages)."""
    return (
        f"a simulator parameter ({', '.join(PARAM_NAMES)}) or a knob of a policy in play ({', '.join(knob_owners())})"
    )


def split_kwargs(
    kwargs: Mapping[str, Any], policies: Iterable[Any]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Split keywords into simulator parameters and, per named policy in play, its knobs.

    A knob applies to every policy in play that has it. Returns ``(params, knobs)`` with
    ``knobs[name]`` a dict for each policy *name* in ``policies`` (policy objects take none).

    Raises:
        ConfigError: a name that is neither a simulator parameter nor a knob of a policy in
            play (misspelt, or a knob of another policy), listing both sets.
    """
    names = [p for p in policies if isinstance(p, str)]
    own = {p: POLICIES.entry(p).knobs for p in names}
    params = {k: v for k, v in kwargs.items() if k in PARAM_NAMES}
    rest = {k: v for k, v in kwargs.items() if k not in PARAM_NAMES}
    stray = sorted(k for k in rest if not any(k in own[p] for p in names))
    if stray:
        owners = knob_owners()
        hints = [f"{k} is a knob of {', '.join(owners[k])}" for k in stray if k in owners]
        in_play = (
            "; ".join(f"knobs of {p}: {', '.join(own[p]) or 'none'}" for p in dict.fromkeys(names))
            or "no named policy (knobs need one)"
        )
        raise ConfigError(
            f"unknown CGRSP parameters or knobs: {', '.join(stray)}"
            + (f" ({'; '.join(hints)}, not of the policies in play)" if hints else "")
            + f"; simulator parameters: {', '.join(PARAM_NAMES)}; {in_play}"
        )
    return params, {p: {k: v for k, v in rest.items() if k in own[p]} for p in names}


def per_policy_kwargs(day: str, kwargs: Mapping[str, Any], policies: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Validated keywords for each named policy: the simulator parameters plus its own knobs.

    Builds the parameters for ``day`` and each policy once, so every bad name or value (and
    a knob the world rejects, such as RH's ``rho_res`` ≥ ``c_max``) raises ConfigError here,
    before any simulation is fanned out.
    """
    policies = list(dict.fromkeys(policies))
    params, knobs = split_kwargs(kwargs, policies)
    p = make_params(day, **params)
    for name in policies:
        POLICIES.make(name, p, **knobs[name])
    return {name: {**params, **knobs[name]} for name in policies}


def _plain(v: Any) -> Any:
    return tuple(_plain(x) for x in v) if isinstance(v, (list, tuple)) else v


def knob_diff(policy: str, knobs: Mapping[str, Any]) -> dict[str, Any]:
    """The knobs of ``policy`` that differ from its defaults (lists compared as tuples)."""
    defaults = POLICIES.entry(policy).knobs
    return {k: _plain(v) for k, v in knobs.items() if _plain(v) != _plain(defaults[k])}


__all__ = [
    "POLICIES",
    "build_policy",
    "knob_diff",
    "knob_owners",
    "param_names_help",
    "per_policy_kwargs",
    "policy_names",
    "split_kwargs",
]
