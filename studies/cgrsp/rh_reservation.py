"""Where RH's reservation puts loose jobs: stock status of their dispatches and of the held slots.

python -m studies strong-rules --part rh-reservation --day surge --seeds 10 --rho-res 0 1

For each ρ_res: the share of loose-job dispatches by the stock status (High/Medium/Low) the
slot had at dispatch, and the status of the idle slots left idle while jobs waited (held).
Used by the note of the `rho` experiment in docs/results.md.
"""

import argparse
from collections import Counter

from gpu_sched_agents.heuristics.cgrsp.rh import RH
from gpu_sched_env.cgrsp.params import STOCK_LEVELS, make_params
from gpu_sched_env.cgrsp.sim import Simulator


def shares(day: str, seeds: int, rho_res: int) -> tuple[Counter, Counter]:
    """RH's dispatches of loose jobs over ``seeds`` days: the stock of the slots held, and of those they took."""
    p = make_params(day)
    held, loose = Counter(), Counter()
    for seed in range(seeds):
        sim = Simulator(p, seed)
        pol = RH(p, rho_res=rho_res)
        pol.reset(sim.view, None)
        while sim.advance():
            plan = pol.decide(sim.view)
            level = [sim.stock[g] for g in sim.fleet.slot_type]
            loose.update(level[s] for j, s in plan if not sim.tight[j])
            if len(sim.waiting) > len(plan):
                used = {s for _, s in plan}
                held.update(level[s] for s in sim.idle_slots() if s not in used)
            for j, s in plan:
                sim.assign(j, s)
    return loose, held


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--day", default="surge")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1")
    ap.add_argument("--rho-res", type=int, nargs="+", default=[0, 1])
    a = ap.parse_args(argv)
    for r in a.rho_res:
        for name, c in zip(("loose dispatches", "held idle slots"), shares(a.day, a.seeds, r)):
            n = sum(c.values())
            pct = ", ".join(f"{lvl} {100 * c[i] / n:.1f} %" for i, lvl in enumerate(STOCK_LEVELS)) if n else "none"
            print(f"rho_res={r} {name:17s} n={n:5d}: {pct}")
    return 0
