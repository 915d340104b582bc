"""What a scheduler returns: the tasks it placed, each task's device and the dispatch order."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from gpu_sched_env.edge.model import Task


@dataclass(frozen=True)
class SolveReport:
    """One ILP solve (one round of one batch), as the solver reported it.

    ``status`` is CP-SAT's own word (OPTIMAL, FEASIBLE, ...); ``objective`` and ``bound``
    are in the model's integer units; ``gap`` is ``(objective - bound) / max(1, |objective|)``;
    ``round_makespan_s`` is the round's makespan variable [s] (time-scaled model).
    """

    batch: int
    round: int
    n_tasks: int
    n_assigned: int
    status: str
    objective: float
    bound: float
    gap: float
    round_makespan_s: float
    wall_s: float
    fallback: bool = False

    @property
    def optimal(self) -> bool:
        """True only when the solver proved optimality."""
        return self.status == "OPTIMAL"

    def as_dict(self) -> dict:
        """Plain dict (for tables)."""
        return asdict(self)


@dataclass(frozen=True)
class Plan:
    """An assignment of tasks to devices, with the dispatch order.

    ``tasks`` (after any splitting), ``device[i]`` for task i, ``order`` (task indices in
    dispatch order; each device runs its tasks in this order), per-task ``batch`` and
    ``round`` (0 for schedulers without them), solver reports and scheduler runtime [s].
    """

    name: str
    tasks: tuple[Task, ...]
    device: tuple[int, ...]
    order: tuple[int, ...]
    batch: tuple[int, ...] = ()
    round: tuple[int, ...] = ()
    reports: tuple[SolveReport, ...] = field(default=())
    runtime_s: float = 0.0

    def queues(self, n_devices: int) -> list[list[int]]:
        """Task indices per device, in dispatch order."""
        q: list[list[int]] = [[] for _ in range(n_devices)]
        for i in self.order:
            q[self.device[i]].append(i)
        return q

    def with_runtime(self, runtime_s: float) -> Plan:
        """Copy with the measured scheduler runtime [s]."""
        return Plan(self.name, self.tasks, self.device, self.order, self.batch, self.round, self.reports, runtime_s)
