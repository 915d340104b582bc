"""Trace replay: a simulated day written as a trace replays identically; malformed traces are refused."""

import hashlib
import sys

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import gpu_sched_env  # noqa: F401  (registers the env ids)
from gpu_sched_agents.heuristics.cgrsp import POLICY_NAMES
from gpu_sched_env.cgrsp import simulate
from gpu_sched_env.cgrsp import trace as trace_mod
from gpu_sched_env.cgrsp.commands import trace_main as write_main
from gpu_sched_env.cgrsp.params import make_params
from gpu_sched_env.cgrsp.trace import EXAMPLE_TRACE, Trace, month_trace, trace_frame, write_trace
from gpu_sched_env.cgrsp.workload import generate
from gpu_sched_env.core.errors import ConfigError


@pytest.fixture(scope="module")
def surge_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    df = trace_frame(generate(make_params("surge"), 4))
    return write_trace(df, d / "surge4.csv"), write_trace(df, d / "surge4.parquet")


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_day_written_as_trace_replays_identically(policy, surge_files):
    csv, pq = surge_files
    ref = simulate(policy, day="surge", seed=4).summary()
    assert simulate(policy, day="surge", seed=4, trace=csv).summary() == ref
    assert simulate(policy, day="surge", seed=4, trace=pq).summary() == ref


def test_hectic_round_trip_through_the_script_and_markov_stock(tmp_path):
    out = tmp_path / "h.csv"
    assert write_main(["--day", "hectic", "--seed", "2", "--out", str(out)]) == 0
    for kw in ({}, {"stock_process": "markov", "stock_dwell_s": 300}):
        ref = simulate("rh", day="hectic", seed=2, **kw)
        rep = simulate("rh", day="hectic", seed=2, trace=out, **kw)
        assert rep.summary() == ref.summary()
        pd.testing.assert_frame_equal(rep.jobs.drop(columns="job_id"), ref.jobs.drop(columns="job_id"))


def test_run_times_come_from_the_seed_not_the_trace():
    a = simulate("fifo", day="normal", seed=0, trace=EXAMPLE_TRACE)
    b = simulate("fifo", day="normal", seed=1, trace=EXAMPLE_TRACE)
    assert (a.jobs["submit"] == b.jobs["submit"]).all()
    assert not np.allclose(a.jobs["runtime"], b.jobs["runtime"])


def test_example_trace_ships_and_keeps_labels_and_order():
    raw = pd.read_csv(EXAMPLE_TRACE)
    res = simulate("edf", day="normal", seed=0, trace=EXAMPLE_TRACE)
    assert len(res.jobs) == len(raw) == 100
    assert list(res.jobs["job_id"]) == [str(x) for x in raw["job_id"]]
    assert np.array_equal(res.jobs["submit"].to_numpy(), raw["submit_s"].to_numpy())


def test_month_trace_spans_thirty_days():
    df = month_trace(0)
    assert df["job_id"].is_unique and df["submit_s"].is_monotonic_increasing
    assert 29 * 86400 < df["submit_s"].max() < 30 * 86400
    s = simulate("spt", day="normal", seed=0, trace=df.head(300)).summary()
    assert s["completed"] == 300


def test_env_episode_is_the_whole_trace():
    env = gym.make("CGRSP-v0", day="normal", trace=EXAMPLE_TRACE)
    obs, info = env.reset(seed=0)
    sim = env.unwrapped.sim
    assert sim.n_jobs == 100 and env.unwrapped.params.n_jobs == 100
    assert np.array_equal(sim.submit, pd.read_csv(EXAMPLE_TRACE)["submit_s"].to_numpy())
    with pytest.raises(ConfigError, match="complexity"):
        gym.make("CGRSP-v0", trace=pd.DataFrame({"submit_s": [0.0], "complexity": ["huge"], "deadline_s": [9.0]}))


def test_missing_tight_column_uses_the_tight_window():
    t = Trace.load(
        pd.DataFrame({"submit_s": [0.0, 5.0], "complexity": ["low", "high"], "deadline_s": [3600.0, 28805.0]}),
        make_params("normal"),
    )
    assert t.jobs["tight"].tolist() == [True, False] and t.job_id.tolist() == [0, 1]


GOOD = {
    "job_id": ["a", "b", "c"],
    "submit_s": ["0", "10.5", "20"],
    "complexity": ["low", "medium", "high"],
    "deadline_s": ["3600", "3610.5", "28820"],
    "tight": ["true", "true", "false"],
}


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("submit_s", "soon", r"row 1 \(file line 3\), column submit_s = 'soon'.*finite number"),
        ("submit_s", "-3", r"row 1 \(file line 3\), column submit_s = '-3'.*≥ 0"),
        ("submit_s", "", r"row 1 \(file line 3\), column submit_s = ''"),
        (
            "submit_s",
            "30",
            r"row 2 \(file line 4\), column submit_s = '20'.*earlier than the row above \('30'\).*submit order",
        ),
        (
            "complexity",
            "HIGH",
            r"row 1 \(file line 3\), column complexity = 'HIGH'; allowed: low, medium, high|column complexity = "
            r"'HIGH'.*allowed: low, medium, high",
        ),
        ("deadline_s", "inf", r"row 1 \(file line 3\), column deadline_s = 'inf'.*finite"),
        (
            "deadline_s",
            "5",
            r"row 1 \(file line 3\), column deadline_s = '5'.*before submit_s = '10.5'.*deadline_s ≥ submit_s",
        ),
        ("tight", "maybe", r"row 1 \(file line 3\), column tight = 'maybe'.*allowed: true, false"),
        ("job_id", "a", r"row 1 \(file line 3\), column job_id = 'a'.*already used.*unique"),
        ("job_id", "", r"row 1 \(file line 3\), column job_id = ''.*non-empty"),
    ],
)
@pytest.mark.parametrize("block", [None, 64])
def test_bad_value_names_row_column_value_and_what_is_allowed(tmp_path, monkeypatch, column, value, match, block):
    """The same message whether the CSV is one block or read in blocks of a row or two (64 bytes)."""
    if block is not None:
        monkeypatch.setattr(trace_mod, "_BLOCK", block)
    data = {k: list(v) for k, v in GOOD.items()}
    data[column][1] = value
    path = tmp_path / "bad.csv"
    pd.DataFrame(data).to_csv(path, index=False)
    with pytest.raises(ConfigError, match=match):
        simulate("fifo", day="normal", trace=path)


def test_a_log_read_in_blocks_is_the_log_read_at_once(tmp_path, monkeypatch):
    path = write_trace(month_trace(0).head(500), tmp_path / "m.csv")
    p = make_params("normal")
    whole = Trace.load(path, p)
    monkeypatch.setattr(trace_mod, "_BLOCK", 256)  # dozens of blocks
    parts = Trace.load(path, p)
    pd.testing.assert_frame_equal(parts.jobs, whole.jobs)
    assert parts.job_id.tolist() == whole.job_id.tolist() and parts.sha256 == whole.sha256
    bad = path.read_text().splitlines()
    bad[400] = bad[400].replace(",low,", ",LOW,").replace(",medium,", ",LOW,").replace(",high,", ",LOW,")
    path.write_text("\n".join(bad) + "\n")
    with pytest.raises(ConfigError, match=r"trace row 399 \(file line 401\), column complexity = 'LOW'"):
        Trace.load(path, p)
    # out of order across the edge between two blocks: the row above is the other block's last
    head = pd.DataFrame({"submit_s": ["0", "7.5"], "complexity": ["low", "low"], "deadline_s": ["9", "9"]})
    tail = pd.DataFrame({"submit_s": ["7"], "complexity": ["low"], "deadline_s": ["9"]})
    with pytest.raises(ConfigError, match=r"trace row 2, column submit_s = '7': earlier than the row above \('7.5'\)"):
        trace_mod._parse(head, list(head.columns), iter([head, tail]), p)


def test_values_are_read_by_the_python_rules_exactly():
    """Vectorised where pyarrow can, by float() and str.strip() where it cannot: the same values either way."""
    submit = ["0", " 12 ", "1_000", "1e3", "1000.000000000000000000001", "1001", "١٠٠٢"]
    df = pd.DataFrame(
        {
            "submit_s": submit,
            "complexity": ["low"] * len(submit),
            "deadline_s": ["5000"] * len(submit),
            "tight": [" TRUE", "yes ", "0", "No", "1", "false", "\u3000true\u3000"],
            "job_id": [f"j{i}" for i in range(len(submit))],
        }
    )
    t = Trace.load(df, make_params("normal"))
    assert t.jobs["submit"].tolist() == [float(v) for v in submit]
    assert t.jobs["tight"].tolist() == [True, True, False, False, True, False, True]


def test_blank_labels_are_what_str_strip_empties():
    assert trace_mod._SPACE == "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
    df = pd.DataFrame({"submit_s": [0.0, 1.0], "complexity": ["low", "low"], "deadline_s": [9.0, 9.0]})
    with pytest.raises(ConfigError, match=r"trace row 1, column job_id = '\\u2003\\x1c': allowed: a non-empty label"):
        Trace.load(df.assign(job_id=["a", "\u2003\x1c"]), make_params("normal"))
    assert Trace.load(df.assign(job_id=["a", "\u200b"]), make_params("normal")).job_id[1] == "\u200b"  # not blank


def test_a_loaded_trace_records_the_file_and_its_hash(tmp_path):
    t = Trace.load(EXAMPLE_TRACE, make_params("normal"))
    assert t.provenance() == {
        "trace": str(EXAMPLE_TRACE),
        "sha256": hashlib.sha256(EXAMPLE_TRACE.read_bytes()).hexdigest(),
        "rows": 100,
    }
    assert Trace.load(pd.read_csv(EXAMPLE_TRACE), make_params("normal")).sha256 is None  # a DataFrame: no file
    # a DataFrame written with its index keeps it in the file: read back as the index, not a column
    pq = tmp_path / "indexed.parquet"
    pd.read_csv(EXAMPLE_TRACE).set_index("job_id").to_parquet(pq)
    assert Trace.load(pq, make_params("normal")).n_jobs == 100


def test_bad_columns_and_files(tmp_path):
    p = make_params("normal")
    with pytest.raises(ConfigError, match="missing column.*deadline_s.*required: submit_s, complexity, deadline_s"):
        Trace.load(pd.DataFrame({"submit_s": [0.0], "complexity": ["low"]}), p)
    with pytest.raises(ConfigError, match="unknown column.*priority.*optional: job_id, tight"):
        Trace.load(pd.DataFrame({**{k: v[:1] for k, v in GOOD.items()}, "priority": [1]}), p)
    with pytest.raises(ConfigError, match="no jobs"):
        Trace.load(pd.DataFrame({k: [] for k in GOOD}), p)
    with pytest.raises(ConfigError, match="no such file"):
        Trace.load(tmp_path / "nope.csv", p)
    (tmp_path / "t.json").write_text("{}")
    with pytest.raises(ConfigError, match="unknown file type '.json'"):
        Trace.load(tmp_path / "t.json", p)
    # a DataFrame row is named without a file line; typed Parquet values are checked too
    df = pd.DataFrame({"submit_s": [0.0, np.nan], "complexity": ["low", "low"], "deadline_s": [10.0, 10.0]})
    with pytest.raises(ConfigError, match=r"trace row 1, column submit_s = nan"):
        Trace.load(df, p)
    df.loc[1, "submit_s"] = 1.0
    df["tight"] = [True, 2]
    with pytest.raises(ConfigError, match=r"trace row 1, column tight = 2"):
        Trace.load(df, p)


def test_compare_replays_a_trace_and_cli_dispatches(tmp_path, capsys):
    from gpu_sched_env.cgrsp.api import simulate
    from gpu_sched_env.cli import main

    trace = tmp_path / "quiet.csv"
    assert main(["trace", "--day", "quiet", "--seed", "1", "--param", "n_jobs=40", "--out", str(trace)]) == 0
    out = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                "--trace",
                str(trace),
                "--day",
                "quiet",
                "--seeds",
                "2",
                "--policies",
                "fifo",
                "edf",
                "--executor",
                "serial",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    per_seed = pd.read_csv(out / "trace_quiet_quiet" / "per_seed.csv")
    assert len(per_seed) == 4 and set(per_seed["policy"]) == {"fifo", "edf"}
    # seed 1 on the trace of seed 1's day is that day itself
    row = per_seed[(per_seed.policy == "edf") & (per_seed.seed == 1)].iloc[0]
    assert row["mean_wait_min"] == pytest.approx(simulate("edf", "quiet", 1, n_jobs=40).summary()["mean_wait_min"])
    assert "trace" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["compare", "--trace", str(tmp_path / "missing.csv"), "--seeds", "1"])
    assert main(["no-such-command"]) == 2


def test_compare_runs_the_deferring_rules_with_their_knobs(tmp_path):
    """The strong rules are comparable by name, and a knob of theirs (defer_scale) reaches them."""
    from gpu_sched_env.cgrsp.api import simulate
    from gpu_sched_env.cli import main

    out = tmp_path / "cmp"
    assert (
        main(
            [
                "compare",
                "--day",
                "quiet",
                "--seeds",
                "1",
                "--policies",
                "spt_rescue_defer_exp",
                "--param",
                "defer_scale=0.5",
                "--param",
                "n_jobs=60",
                "--executor",
                "serial",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    (d,) = list(out.iterdir())
    row = pd.read_csv(d / "per_seed.csv").iloc[0]
    ref = simulate("spt_rescue_defer_exp", "quiet", 0, n_jobs=60, defer_scale=0.5).summary()
    assert row["policy"] == "spt_rescue_defer_exp" and row["mean_wait_min"] == pytest.approx(ref["mean_wait_min"])
    with pytest.raises(SystemExit):
        main(["compare", "--seeds", "1", "--policies", "spt_rescue_defer_exp", "--param", "defer_scale=0"])
