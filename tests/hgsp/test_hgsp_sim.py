import numpy as np
import pandas as pd
import pytest

from gpu_sched_agents.heuristics.hgsp import SAGreedy
from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.hgsp import Problem, decode, generate_tasks, make_cluster, resolve_tasks, run
from gpu_sched_env.hgsp.sim import ListScheduler

# Two GPUs: GPU0 = A100 (80 GB, speed 57), GPU1 = A30 (24 GB, speed 30).
TWO = {"A100": 1, "A30": 1}


def hand_tasks(extra_big: bool = False) -> pd.DataFrame:
    rows = [
        # id, workload, memory, deadline, weight, arrival
        (0, 114.0, 10, 2.5, 1, 0.0),  # p = 2.0 on A100, 3.8 on A30
        (1, 57.0, 10, 1.5, 2, 0.0),  # p = 1.0 / 1.9
        (2, 30.0, 40, 2.5, 3, 1.0),  # 40 GB: A100 only, p = 30/57
        (3, 60.0, 10, 3.0, 1, 2.0),  # p = 60/57 / 2.0
    ]
    if extra_big:
        rows.append((4, 10.0, 100, 50.0, 1, 0.5))  # 100 GB: no GPU can hold it
    return pd.DataFrame(rows, columns=["task_id", "workload", "memory", "deadline", "weight", "arrival"])


def test_fifo_hand_computed():
    # FIFO (earliest start, ties -> lowest index):
    # t0: both idle, start 0 on both -> GPU0, ends 2.0
    # t1: GPU0 free at 2.0, GPU1 idle -> GPU1 at 0, ends 1.9 (tardy 0.4, w 2)
    # t2: only GPU0 -> start max(1, 2.0) = 2.0, ends 2 + 30/57 (tardy 30/57 - 0.5, w 3)
    # t3: GPU0 free at 2.526, GPU1 at 1.9 -> GPU1 at 2.0, ends 4.0 (tardy 1.0, w 1)
    r = run("fifo", hand_tasks(), TWO)
    s = r.schedule
    assert s.gpu.tolist() == [0, 1, 0, 1]
    np.testing.assert_allclose(s.end, [2.0, 1.9, 2 + 30 / 57, 4.0])
    m = r.summary()
    np.testing.assert_allclose(m["wt"], 2 * 0.4 + 3 * (30 / 57 - 0.5) + 1.0)
    assert m["dmc"] == 3 and m["dmr_pct"] == 75.0
    np.testing.assert_allclose(m["makespan"], 4.0)
    np.testing.assert_allclose(m["act"], (2.0 + 1.9 + (1 + 30 / 57) + 2.0) / 4)
    np.testing.assert_allclose(m["twct"], 1 * 2.0 + 2 * 1.9 + 3 * (1 + 30 / 57) + 1 * 2.0)
    busy = 2.0 + 1.9 + 30 / 57 + 2.0
    np.testing.assert_allclose(m["gpu_util_pct"], 100 * busy / (2 * 4.0))
    mem = 10 * 2.0 + 10 * 1.9 + 40 * 30 / 57 + 10 * 2.0
    np.testing.assert_allclose(m["mem_util_pct"], 100 * mem / (104 * 4.0))
    assert m["skipped"] == 0


def test_greedy_hand_computed():
    # Greedy (EFT): same as FIFO for t0..t2; t3 finishes at 2.526 + 60/57 = 3.579 on GPU0
    # versus 4.0 on GPU1 -> GPU0 (tardy 0.579).
    r = run("greedy", hand_tasks(), TWO)
    assert r.schedule.gpu.tolist() == [0, 1, 0, 0]
    e3 = 2 + 30 / 57 + 60 / 57
    np.testing.assert_allclose(r.schedule.end[3], e3)
    np.testing.assert_allclose(r.summary()["wt"], 2 * 0.4 + 3 * (30 / 57 - 0.5) + (e3 - 3.0))
    np.testing.assert_allclose(r.summary()["makespan"], e3)


def test_memory_infeasible_task_is_skipped_and_reported():
    r = run("fifo", hand_tasks(extra_big=True), TWO)
    m = r.summary()
    assert m["skipped"] == 1
    assert r.schedule.gpu[4] == -1 and np.isnan(r.schedule.end[4])
    assert r.to_frame().skipped.tolist() == [False] * 4 + [True]
    # the other tasks are scheduled exactly as without it
    np.testing.assert_allclose(r.schedule.end[:4], run("fifo", hand_tasks(), TWO).schedule.end)
    assert m["dmc"] == 3 and m["dmr_pct"] == 75.0  # DMR over the scheduled tasks


def test_memory_forces_gpu():
    # a 40 GB task never lands on the A30 even when the A30 is idle and the A100 is busy
    r = run("fifo", hand_tasks(), TWO)
    assert r.schedule.gpu[2] == 0 and r.schedule.start[2] == pytest.approx(2.0)


def _check_invariants(s):
    pr = s.problem
    t = pr.tasks
    ok = s.scheduled
    assert ok.sum() == len(pr.arrival_order)
    assert np.all(s.start[ok] >= t.arrival[ok] - 1e-12)
    assert np.all(pr.fit[np.flatnonzero(ok), s.gpu[ok]])
    np.testing.assert_allclose(s.end[ok] - s.start[ok], pr.p[np.flatnonzero(ok), s.gpu[ok]], rtol=1e-12, atol=1e-9)
    for j in range(pr.m):
        on = np.flatnonzero(s.gpu == j)
        o = on[np.argsort(s.start[on])]
        assert np.all(s.start[o][1:] >= s.end[o][:-1] - 1e-9), f"overlap on GPU {j}"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cluster", ["small", "medium"])
def test_invariants_random(seed, cluster):
    ts = generate_tasks("tasks3", seed, n=150)
    for pol in ("fifo", "greedy", "sagreedy"):
        r = run(pol, ts, cluster, seed, **({"iters": 20} if pol == "sagreedy" else {}))
        _check_invariants(r.schedule)
    # a random priority list, both decoders
    pr = Problem(ts, make_cluster(cluster))
    order = np.random.default_rng(seed).permutation(pr.n)
    for serial in (False, True):
        _check_invariants(decode(pr, order, "eft", serial))


def test_release_aware_decoder_equals_sequential_on_arrival_order():
    ts = generate_tasks("tasks1", 1, n=300)
    pr = Problem(ts, make_cluster("small"))
    fast = decode(pr, None, "eft")
    general = decode(pr, np.concatenate([pr.arrival_order, pr.skipped]), "eft")  # heap path
    assert np.array_equal(fast.gpu, general.gpu)
    np.testing.assert_array_equal(fast.end, general.end)
    assert np.array_equal(general.sequence, pr.arrival_order)


def test_release_aware_decoder_does_not_let_late_task_block():
    # priority list puts the late task (arrives at 10) first; it must not reserve the GPU
    df = pd.DataFrame(
        {
            "task_id": [0, 1],
            "workload": [57.0, 57.0],
            "memory": [1, 1],
            "deadline": [20, 20],
            "weight": [1, 1],
            "arrival": [0.0, 10.0],
        }
    )
    pr = Problem(resolve_tasks(df), make_cluster({"A100": 1}))
    rel = decode(pr, np.array([1, 0]), "eft")
    np.testing.assert_allclose(rel.end, [1.0, 11.0])
    ser = decode(pr, np.array([1, 0]), "eft", serial=True)
    np.testing.assert_allclose(ser.end, [12.0, 11.0])  # plain decoder: task 0 waits behind task 1


def test_list_scheduler_rejects_wrong_gpu_and_task():
    pr = Problem(resolve_tasks(hand_tasks()), make_cluster(TWO))
    ls = ListScheduler(pr)
    i = ls.next_task()
    with pytest.raises(ValueError):
        ls.place(i + 1, 0)
    ls.place(i, 0)
    ls.place(ls.next_task(), 1)
    with pytest.raises(ValueError, match="does not fit"):
        ls.place(ls.next_task(), 1)  # task 2 needs 40 GB, GPU1 has 24


def test_sagreedy_deterministic_and_never_worse_than_greedy():
    ts = generate_tasks("tasks1", 2, n=400)
    a = run("sagreedy", ts, "small", 5, iters=30)
    b = run("sagreedy", ts, "small", 5, iters=30)
    g = run("greedy", ts, "small", 5)
    assert np.array_equal(a.order, b.order)
    assert a.summary() == b.summary()
    assert a.summary()["wt"] <= g.summary()["wt"]
    best = [row["best_wt"] for row in a.extra["trace"]]
    assert all(x >= y for x, y in zip(best, best[1:]))
    assert a.summary()["wt"] == pytest.approx(best[-1])


def test_sagreedy_zero_iterations_is_greedy():
    ts = generate_tasks("tasks1", 0, n=200)
    assert run("sagreedy", ts, iters=0).summary() == run("greedy", ts).summary()


def test_sagreedy_neighbour_moves_top_tardy_to_front():
    # one GPU, three tasks at t=0 in arrival order 0,1,2 (greedy). Tardy: task 1 (w 5) and
    # task 2 (w 10). rho = 0.8 at T = T0 -> floor(0.8 * 2) = 1 task moves: the largest
    # weighted tardiness (task 2) goes first: order 2, 0, 1.
    df = pd.DataFrame(
        {
            "task_id": [0, 1, 2],
            "workload": [57.0, 57.0, 57.0],
            "memory": [1, 1, 1],
            "deadline": [1.0, 1.0, 1.0],
            "weight": [1, 5, 10],
            "arrival": [0.0, 0.0, 0.0],
        }
    )
    pol = SAGreedy(iters=1)
    pr = Problem(resolve_tasks(df), make_cluster({"A100": 1}))
    pol.reset(pr, np.random.default_rng(0))
    # greedy: ends 1, 2, 3 -> WT = 5*1 + 10*2 = 25; neighbour 2,0,1: ends 2,3,1 -> 1 + 10 = 11
    best = pol.order(pr)
    assert best.tolist() == [2, 0, 1]
    assert pol.trace[0]["best_wt"] == pytest.approx(11.0)


def test_run_accepts_csv_path_and_dataframe(tmp_path):
    from gpu_sched_env.hgsp import save_csv

    ts = generate_tasks("tasks1", 0, n=100)
    p = save_csv(ts, tmp_path / "t.csv")
    a = run("greedy", str(p)).summary()
    b = run("greedy", ts.to_frame()).summary()
    c = run("greedy", ts).summary()
    assert a == b == c


def test_fast_path_is_chosen_by_the_declared_decode_rule():
    from gpu_sched_agents.heuristics.hgsp import Greedy

    class Counting(Greedy):  # overrides decide without declaring a rule: the per-task path
        calls = 0

        def decide(self, d):
            Counting.calls += 1
            return super().decide(d)

    class Declared(Counting):  # declares that decide is exactly EFT: the fast decoder
        decode_rule = "eft"

    assert Greedy.decode_rule == "eft" and Counting.decode_rule is None
    ref = run("greedy", "tasks1", "small", 3)
    slow = run(Counting(), "tasks1", "small", 3)
    assert Counting.calls == int(ref.schedule.scheduled.sum()) > 0
    np.testing.assert_array_equal(slow.schedule.end, ref.schedule.end)
    Counting.calls = 0
    fast = run(Declared(), "tasks1", "small", 3)
    assert Counting.calls == 0
    np.testing.assert_array_equal(fast.schedule.end, ref.schedule.end)

    class Bad(Greedy):
        decode_rule = "lpt"

    with pytest.raises(ConfigError, match="decode_rule = 'lpt' is not known; allowed: fifo, eft"):
        run(Bad(), "tasks1", "small", 3)
    with pytest.raises(ConfigError, match="need a policy name"):
        run(Greedy(), "tasks1", "small", 3, iters=5)
