"""Incremental views of the waiting queue for policies whose tiers move with the clock.

A view is brought up to date at each decision from the simulator's public logs, arrivals
(``view.n_arrived``; ids are in submit order) and dispatches (``view.dispatched``), so it is
right however the previous decisions were applied (a whole plan in ``simulate``, one
assignment per env step, or another agent's choice). The containers are
``sortedcontainers.SortedList``: O(log n) insert and remove, lazy in-order iteration, so a
decision reads each ordered group only as far as it needs.
"""

from __future__ import annotations

from collections.abc import Callable

from sortedcontainers import SortedList

from gpu_sched_env.cgrsp.view import SimView

Key = tuple[float, float, int]  # (deadline, submit, job id): deadline order, ties by submit


class QueueLog:
    """Which jobs arrived and which were dispatched since the previous call."""

    __slots__ = ("_arrived", "_dispatched")

    def __init__(self) -> None:
        self._arrived = 0
        self._dispatched = 0

    def arrivals(self, view: SimView) -> range:
        """Ids of the jobs that arrived since the previous call."""
        n = view.n_arrived
        r = range(self._arrived, n)
        self._arrived = n
        return r

    def dispatches(self, view: SimView) -> list[int]:
        """Ids of the jobs dispatched since the previous call."""
        out = view.dispatched[self._dispatched :]
        self._dispatched = len(view.dispatched)
        return out


class WaitingIds:
    """The waiting job ids in submit order, with O(log n) access by position."""

    def __init__(self) -> None:
        self.ids = SortedList()
        self._log = QueueLog()

    def sync(self, view: SimView) -> SortedList:
        """Bring the view up to date; returns the sorted ids."""
        self.ids.update(self._log.arrivals(view))
        for j in self._log.dispatches(view):
            self.ids.remove(j)
        return self.ids


class Groups:
    """Waiting jobs split into groups, each a sorted list of :data:`Key`.

    A job is in exactly one group: put there by ``group_of`` on arrival, moved by
    :meth:`move` when its tier changes for good, removed when dispatched.
    """

    def __init__(self, n_groups: int, n_jobs: int, group_of: Callable[[int], int]) -> None:
        self.lists: list[SortedList] = [SortedList() for _ in range(n_groups)]
        self._group = [-1] * n_jobs
        self._group_of = group_of
        self._log = QueueLog()

    def sync(self, view: SimView) -> list[SortedList]:
        """Bring the groups up to date; returns them."""
        d, sub, grp, lists = view.deadline, view.submit, self._group, self.lists
        for j in self._log.arrivals(view):
            g = grp[j] = self._group_of(j)
            lists[g].add((d[j], sub[j], j))
        for j in self._log.dispatches(view):
            lists[grp[j]].remove((d[j], sub[j], j))
            grp[j] = -1
        return lists

    def move_head(self, src: int, dst: int) -> None:
        """Move the first job of group ``src`` to group ``dst``."""
        key = self.lists[src].pop(0)
        self.lists[dst].add(key)
        self._group[key[2]] = dst


__all__ = ["Groups", "Key", "QueueLog", "WaitingIds"]
