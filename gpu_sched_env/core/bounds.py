"""What a scenario's bound on an instance is: an exact optimum, or a valid lower bound beyond the solver's reach.

Every scenario's objective is minimised (weighted tardiness, weighted wait, makespan), so a bound
is a number no feasible schedule of the instance goes below. ``kind`` says how much it claims:

* ``"optimum"``: an exact solver proved it optimal within its time limit (the gap of a policy to
  it is the room any scheduler has);
* ``"lower_bound"``: a relaxation's value (the solver did not finish, or the instance is beyond
  its size); a policy's gap to it is an upper bound on the room, never a claim of optimality.

A bound that is neither is not returned: a scenario raises instead of guessing.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

from gpu_sched_env.core.errors import ConfigError, check_choice, check_number

BOUND_KINDS = ("optimum", "lower_bound")


@dataclass(frozen=True)
class Bound:
    """A bound on one instance's objective.

    Attributes:
        value: the bound, in the objective's unit (finite, ≥ 0).
        kind: ``"optimum"`` or ``"lower_bound"`` (see the module docstring).
        solver_s: [s] wall time spent computing it.
        method: what produced it (e.g. ``"cp-sat"``, ``"preemptive relaxation"``).
    """

    value: float
    kind: Literal["optimum", "lower_bound"]
    solver_s: float
    method: str

    def __post_init__(self) -> None:
        if self.kind not in BOUND_KINDS:
            raise ConfigError(f"bound kind = {self.kind!r} is not known; allowed: {', '.join(BOUND_KINDS)}")
        if not (isinstance(self.value, int | float) and math.isfinite(self.value) and self.value >= 0):
            raise ConfigError(f"bound value = {self.value!r}: must be a finite number ≥ 0")

    @property
    def exact(self) -> bool:
        """Whether the value is a proved optimum."""
        return self.kind == "optimum"

    def gap_pct(self, objective: float) -> float:
        """A policy's gap to the bound, in % of the bound (NaN when the bound is 0 and the policy is not)."""
        if self.value == 0:
            return 0.0 if objective == 0 else math.nan
        return 100.0 * (objective - self.value) / self.value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


__all__ = ["BOUND_KINDS", "Bound"]


def check_request(time_limit_s: float, method: str, methods: Any, workers: int | None = None) -> int | None:
    """The arguments every scenario's ``bound()`` shares, checked: ConfigError naming the field otherwise.

    ``time_limit_s`` in [0, 1e6] (0: no exact solve), ``method`` one of ``methods``, ``workers`` (where the
    scenario's solver takes them) an integer in [1, 64], returned as an int.
    """
    check_number("time_limit_s", time_limit_s, lo=0, hi=1e6)
    check_choice("method", method, methods)
    return None if workers is None else int(check_number("workers", workers, lo=1, hi=64, integer=True))
