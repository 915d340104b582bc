import numpy as np
import pandas as pd
import pytest

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.llm import requests_from_frame, simulate

# Hand calculation, discriminating workload (16 H100, tau = 2 -> 8 requests at once).
# Prefill at 1000 tok/s: requests 1-8 (w 1, 2000 tokens) take 2.0 s, requests 9-20
# (w 10, 500 tokens) take 0.5 s. All arrive at t = 0; waiting = c - a = c.
# FIFO: 1-8 run [0, 2.0]; 9-16 run [2.0, 2.5]; 17-20 run [2.5, 3.0].
#   weighted = 8*1*2.0 + 8*10*2.5 + 4*10*3.0 = 16 + 200 + 120 = 336
#   average  = (8*2.0 + 8*2.5 + 4*3.0) / 20 = 48 / 20 = 2.4 ; makespan 3.0
# WSRPT: priority w/p = 10/0.5 = 20 for 9-20, 1/2.0 = 0.5 for 1-8.
#   9-16 run [0, 0.5]; at 0.5: 17-20 and 1-4 start (8 GPU pairs); 17-20 end 1.0, 1-4 end 2.5;
#   at 1.0: 5-8 start, end 3.0.
#   weighted = 8*10*0.5 + 4*10*1.0 + 4*1*2.5 + 4*1*3.0 = 40 + 40 + 10 + 12 = 102
#   average  = (8*0.5 + 4*1.0 + 4*2.5 + 4*3.0) / 20 = 30 / 20 = 1.5 ; makespan 3.0
# So WSRPT cuts weighted waiting by 1 - 102/336 = 69.6 % (source: ~68 %) and average
# waiting by 37.5 % (source: ~25 %).
HAND = {"fifo": (336.0, 2.4, 3.0), "wsrpt": (102.0, 1.5, 3.0)}


@pytest.mark.parametrize("engine", ["discrete", "event"])
@pytest.mark.parametrize("policy", ["fifo", "wsrpt"])
def test_discriminating_hand_computed(policy, engine):
    s = simulate(policy, "discriminating", dt=0.01, engine=engine).summary()
    ww, aw, mk = HAND[policy]
    assert s["weighted_wait"] == pytest.approx(ww)
    assert s["avg_wait"] == pytest.approx(aw)
    assert s["makespan"] == pytest.approx(mk)
    assert s["completed"] == 20 and s["skipped"] == 0


def test_wsrpt_schedule_order():
    df = simulate("wsrpt").to_frame()
    assert np.allclose(df.start[8:16], 0.0) and np.allclose(df.start[16:20], 0.5)
    assert np.allclose(df.start[0:4], 0.5) and np.allclose(df.start[4:8], 1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("policy", ["fifo", "wsrpt"])
def test_engines_agree_on_grid_aligned_workload(policy, seed):
    d = simulate(policy, "mixed", engine="discrete", seed=seed)
    e = simulate(policy, "mixed", engine="event", seed=seed)
    np.testing.assert_allclose(d.sim.end_t, e.sim.end_t, atol=1e-6)  # well within one step
    assert d.sim.gpus == e.sim.gpus


def _table(rows):
    return pd.DataFrame(rows, columns=["req_id", "model", "tokens", "phase", "memory", "tp", "weight", "arrival"])


def test_engines_off_grid_within_one_step():
    # arrival 0.005 s, 1234 tokens prefill -> p = 1.234 s. Event: c = 1.239. Discrete: joins at
    # step 1 (0.01 s), c = 1.244: later by less than one step.
    df = _table([(1, "m", 1234, "PREFILL", 10, 1, 1, 0.005)])
    d = simulate("fifo", df, engine="discrete", cluster={"H100": 1}).sim.end_t[0]
    e = simulate("fifo", df, engine="event", cluster={"H100": 1}).sim.end_t[0]
    assert e == pytest.approx(1.239)
    assert d == pytest.approx(1.244)
    assert 0 <= d - e < 0.01


def test_invariants_mixed():
    r = simulate("wsrpt", "mixed", seed=3)
    df = r.to_frame()
    req = r.sim.workload.requests
    assert (df.start >= df.arrival - 1e-9).all()
    # at no time more GPUs busy than exist, and no GPU runs two requests at once
    for g in range(r.sim.m):
        iv = sorted((s, e) for s, e, gs in zip(df.start, df.end, df.gpus) if str(g) in gs.split(","))
        assert all(b[0] >= a[1] - 1e-9 for a, b in zip(iv, iv[1:]))
    assert all(len(g.split(",")) == t for g, t in zip(df.gpus, req.tp))


def test_infeasible_request_is_skipped():
    df = _table(
        [
            (1, "m", 100, "DECODE", 10, 1, 1, 0.0),
            (2, "big", 100, "DECODE", 500, 2, 1, 0.0),
            (3, "wide", 100, "DECODE", 10, 4, 1, 0.0),
        ]
    )
    s = simulate("fifo", df, cluster={"H100": 2}).summary()
    assert s["skipped"] == 2 and s["completed"] == 1
    assert s["makespan"] == pytest.approx(0.02)  # 100 tokens at 5000 tok/s


def test_horizon_counts_completions():
    s = simulate("fifo", horizon=2.5).summary()
    assert s["completed"] == 16  # FIFO: 8 done at 2.0, 8 at 2.5, 4 at 3.0


def test_bad_requests_and_args():
    with pytest.raises(ConfigError, match="row 1, column phase = 'TRAIN'"):
        requests_from_frame(_table([(1, "m", 100, "TRAIN", 10, 1, 1, 0.0)]))
    with pytest.raises(ConfigError, match="row 2, column tp"):
        requests_from_frame(_table([(1, "m", 100, "DECODE", 10, 1, 1, 0.0), (2, "m", 100, "DECODE", 10, 0, 1, 0.0)]))
    with pytest.raises(ConfigError, match="row 1, column tokens = 'x'"):
        requests_from_frame(_table([(1, "m", "x", "DECODE", 10, 1, 1, 0.0)]))
    with pytest.raises(ConfigError, match="workload = 'nope'"):
        simulate("fifo", "nope")
    with pytest.raises(ConfigError, match="engine"):
        simulate("fifo", engine="fast")
    with pytest.raises(ConfigError, match="dt"):
        simulate("fifo", dt=0)
    with pytest.raises(ConfigError, match="policy = 'sjf'"):
        simulate("sjf")
