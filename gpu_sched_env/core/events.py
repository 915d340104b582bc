"""A minimal deterministic event queue.

A hand-written heap instead of a DES library (SimPy, salabim): our simulators need only
"schedule at time t" and "pop the next event", and a plain ``heapq`` of tuples is several
times faster than generator-based processes (see ``scripts/bench_sim.py``). Ties at the
same time are broken by an explicit priority and then by insertion order, so the order of
same-time events never depends on payload comparison or hash order.
"""

from __future__ import annotations

import heapq
from typing import Any


class EventQueue:
    """Heap of ``(time, priority, seq, kind, payload)``; lower priority pops first at a tie."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, int, Any]] = []
        self._seq = 0

    def push(self, time: float, kind: int, payload: Any = None, priority: int = 0) -> None:
        """Schedule an event of ``kind`` at ``time`` [s]."""
        heapq.heappush(self._heap, (time, priority, self._seq, kind, payload))
        self._seq += 1

    def pop(self) -> tuple[float, int, Any]:
        """Remove and return the next ``(time, kind, payload)``."""
        t, _, _, kind, payload = heapq.heappop(self._heap)
        return t, kind, payload

    def peek_time(self) -> float:
        """Time of the next event, or ``inf`` when empty."""
        return self._heap[0][0] if self._heap else float("inf")

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
