"""Cost of the rollout planner per decision point, against its base rule, on a few seeds.

    python -m studies headroom --part planner-cost --seeds 2 --knob n_rollouts=4 --knob horizon_s=900.0

Per day × stock model (fresh, Markov D = 900 s) and seed: the planner's and its base rule's
miss % and mean wait, the decision points where the planner had a choice (``planned``),
milliseconds of planning per such point, and the wall time of the day.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from gpu_sched_agents.heuristics.cgrsp import make_policy
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.sim import Simulator, run
from gpu_sched_env.core.cliargs import parse_params
from gpu_sched_env.core.rng import stream

STOCKS = {"fresh": {}, "markov D=900s": {"stock_process": "markov", "stock_dwell_s": 900.0}}


def one_day(name: str, day: str, stock: dict, seed: int, **knobs) -> dict:
    """One day of policy ``name``: its summary, decision counts and planning time."""
    p = make_params(day, **stock)
    sim = Simulator(p, seed)
    pol = make_policy(name, p, **knobs)
    pol.reset(sim.view, stream(seed, "cgrsp/policy"))
    t0 = time.perf_counter()
    run(sim, pol)
    wall = time.perf_counter() - t0
    s = sim.result().summary()
    planned = getattr(pol, "n_planned", 0)
    return {
        "miss_pct": s["miss_pct"],
        "mean_wait_min": s["mean_wait_min"],
        "decisions": sim.n_decisions,
        "planned": planned,
        "ms_per_planned": 1000 * getattr(pol, "plan_seconds", 0.0) / max(planned, 1),
        "day_s": wall,
    }


def main(argv: list[str] | None = None) -> int:
    """Print the table of the planner and its base rule per day, stock and seed; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=2, help="seeds from 20000")
    ap.add_argument("--days", nargs="+", default=["hectic", "surge"])
    ap.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE", help="rollout knob")
    a = ap.parse_args(argv)
    knobs = parse_params(a.knob, "a rollout knob", flag="--knob")
    base = make_policy("rollout", make_params("hectic"), **knobs).cfg
    rows = []
    for day in a.days:
        for label, stock in STOCKS.items():
            for seed in range(20000, 20000 + a.seeds):
                for name, kn in (("rollout", knobs), (base.base_rule, {})):
                    rows.append(
                        {
                            "day": day,
                            "stock": label,
                            "seed": seed,
                            "policy": name,
                            **one_day(name, day, stock, seed, **kn),
                        }
                    )
    df = pd.DataFrame(rows)
    print(f"rollout knobs: {base}")
    print(df.round(2).to_string(index=False))
    return 0
