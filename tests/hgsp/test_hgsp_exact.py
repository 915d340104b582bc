import pandas as pd
import pytest

from gpu_sched_agents.heuristics.hgsp.exact import solve_exact
from gpu_sched_env.hgsp import generate_tasks, make_cluster, resolve_tasks, run


def test_exact_beats_list_schedulers_on_hand_instance():
    # One A100. Task 0: p = 2, d = 2, w = 1; task 1: p = 1, d = 1, w = 10; both at t = 0.
    # Arrival order (FIFO/Greedy): 0 then 1 -> c = 2, 3 -> WT = 10 * 2 = 20.
    # Optimum: 1 then 0 -> c = 1, 3 -> WT = 1 * 1 = 1.
    # SAGreedy stays at 20: one tardy task and rho <= 0.8 give floor(rho * 1) = 0 moves.
    df = pd.DataFrame(
        {
            "task_id": [0, 1],
            "workload": [114.0, 57.0],
            "memory": [1, 1],
            "deadline": [2.0, 1.0],
            "weight": [1, 10],
            "arrival": [0.0, 0.0],
        }
    )
    cl = {"A100": 1}
    assert run("fifo", df, cl).summary()["wt"] == pytest.approx(20.0)
    assert run("sagreedy", df, cl).summary()["wt"] == pytest.approx(20.0)
    ex = solve_exact(resolve_tasks(df), make_cluster(cl), time_limit_s=5)
    assert ex.status == "OPTIMAL"
    assert ex.upper_bound == pytest.approx(1.0)
    assert ex.lower_bound <= 1.0 + 1e-9 and ex.lower_bound == pytest.approx(1.0, abs=1e-3)
    assert ex.gpu.tolist() == [0, 0]


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_bounds_bracket_heuristics(seed):
    ts = generate_tasks("tiny", seed, n=8)
    ex = solve_exact(ts, make_cluster("small"), time_limit_s=5, seed=seed)
    assert ex.status in ("OPTIMAL", "FEASIBLE")
    for pol in ("fifo", "greedy", "sagreedy"):
        wt = run(pol, ts, "small", seed).summary()["wt"]
        assert ex.lower_bound <= wt + 1e-9
    if ex.status == "OPTIMAL":
        best = min(run(p, ts, "small", seed).summary()["wt"] for p in ("fifo", "greedy", "sagreedy"))
        # re-timed optimum of the rounded model; rounding can cost at most ~n / scale per task weight
        assert ex.upper_bound <= best + 1e-2
    assert ex.proven_optimal == (
        ex.status == "OPTIMAL" and ex.upper_bound - ex.lower_bound <= 1e-6 * max(1.0, ex.upper_bound)
    )
