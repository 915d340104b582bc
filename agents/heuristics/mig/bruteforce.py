"""Brute-force minimum makespan for tiny instances (an independent check of CP-SAT).

Breadth-first over minutes: a state is each job's progress plus, for a started job that is
not stoppable, the instance it runs on. At minute ``t`` every instance runs one eligible
job's next unit or idles (all combinations). The first minute at which some state has all
units done is the optimum. Exponential: keep it to a handful of short jobs.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from gpu_sched_env.mig.model import Job


def brute_force_makespan(
    jobs: Sequence[Job], caps: Sequence[int], release: Mapping[int, int], t0: int = 0, max_t: int = 200
) -> int:
    """Minimum makespan [min] when job ``j`` may start at ``release[j]`` (all jobs' units)."""
    n = len(jobs)
    lengths = [j.length for j in jobs]
    states = {((0,) * n, (-1,) * n)}
    t = t0
    if all(L == 0 for L in lengths):
        return t0
    while t < max_t:
        nxt = set()
        for prog, where in states:
            options = []
            for i, c in enumerate(caps):
                opt = [None]
                for a, j in enumerate(jobs):
                    p = prog[a]
                    if p >= lengths[a] or release[j.id] > t:
                        continue
                    if j.stoppable:
                        ok = c >= j.mem[p]
                    else:
                        ok = c >= j.peak and (where[a] in (-1, i))
                    if ok:
                        opt.append(a)
                options.append(opt)
            for choice in itertools.product(*options):
                picked = [a for a in choice if a is not None]
                if len(picked) != len(set(picked)):
                    continue
                # a started non-stoppable job must run every minute until done
                forced = [a for a in range(n) if not jobs[a].stoppable and 0 < prog[a] < lengths[a]]
                if any(a not in picked for a in forced):
                    continue
                p2, w2 = list(prog), list(where)
                for i, a in enumerate(choice):
                    if a is not None:
                        p2[a] += 1
                        if not jobs[a].stoppable:
                            w2[a] = i
                nxt.add((tuple(p2), tuple(w2)))
        t += 1
        if any(all(p == L for p, L in zip(s[0], lengths, strict=True)) for s in nxt):
            return t
        states = nxt
    raise RuntimeError(f"no schedule within max_t = {max_t}")
