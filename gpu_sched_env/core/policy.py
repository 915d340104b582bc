"""The policy protocol every scenario's heuristics follow."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """A scheduler: called by a simulator at each decision point.

    ``name`` is the registry key. ``reset(rng)`` is called once per run with the run's
    policy random stream; ``decide(state)`` returns the scenario's decision (for CGRSP, an
    ordered list of ``(job_id, slot_index)`` assignments).
    """

    name: str

    def reset(self, rng: Any) -> None:
        """Start a new run."""

    def decide(self, state: Any) -> Any:
        """Return the decision for ``state``."""
