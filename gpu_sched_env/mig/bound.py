"""A simple lower bound on the makespan of any schedule of a MIG job set.

Every method in this package (Best-Fit, the pausing Best-Fit, online CP-SAT) produces a
schedule that is feasible for the *offline* problem in which all release times are known
in advance, pausing and migration are free, and the units of a job run one per minute in
order. Two facts hold for every such schedule with makespan ``C``:

1. **chain**: job ``j`` cannot finish before ``r_j + L_j`` (release + run length), since
   it runs at most one unit per minute;
2. **memory level**: for a memory level ``c`` (−1, i.e. every unit, and every instance size) let ``M_c`` be
   the number of instances holding more than ``c`` MB. The units that need more than
   ``c`` MB (for a job that is not stoppable: its peak, as it runs whole on one instance)
   of the jobs released at or after ``τ`` all run in ``[τ, C)`` on those ``M_c``
   instances, one per instance-minute: ``C >= τ + ceil(U_c(τ) / M_c)``.

``LB = max`` over jobs of (1) and over levels ``c`` and release times ``τ`` of (2). It is
what CP-SAT's redundant constraints state at each poll, taken over all release times.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gpu_sched_env.mig.model import (
    DEFAULT_CAPACITIES,
    Job,
    check_capacities,
    check_poll,
    release_time,
)


def makespan_lower_bound(
    jobs: Sequence[Job],
    capacities: Sequence[int] = DEFAULT_CAPACITIES,
    poll_interval: int = 1,
    release: dict[int, int] | None = None,
) -> int:
    """The bound ``LB`` [min] of the module docstring (jobs too big for every instance are left out).

    ``release`` (job id -> earliest start [min]) overrides the poll times of the arrivals.
    """
    caps = check_capacities(capacities)
    poll = check_poll(poll_interval)
    todo = [j for j in jobs if j.peak <= max(caps)]
    if not todo:
        return 0
    rel = {j.id: (release or {}).get(j.id, release_time(j.arrival, poll)) for j in todo}
    lb = max(rel[j.id] + j.length for j in todo)
    needs = {j.id: [m if j.stoppable else j.peak for m in j.mem] for j in todo}
    for c in [-1, *sorted(set(caps))]:  # -1: every unit
        mc = sum(1 for cap in caps if cap > c)
        if mc == 0:
            continue
        for tau in sorted(set(rel.values())):
            u = sum(1 for j in todo if rel[j.id] >= tau for x in needs[j.id] if x > c)
            if u:
                lb = max(lb, tau + math.ceil(u / mc))
    return int(lb)
