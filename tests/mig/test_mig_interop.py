"""Our generator on the Java tool's test_config vs its published 1000-job file."""

import warnings

import numpy as np
import pytest
from scipy import stats

from gpu_sched_env.mig.generator import NormalisedFileWarning, generate, load_config, load_jobs
from gpu_sched_env.mig.model import DEFAULT_CAPACITIES
from gpu_sched_env.mig.workload import to_cgrsp, to_hgsp, to_mig_jobs

ALPHA = 0.01  # per test; documented in docs/mig.md


def _samples(js):
    steps = np.concatenate([np.diff(js.series(i)) for i in range(len(js))])
    gaps = np.diff(np.r_[0.0, js.arrival])
    return {
        "priority": js.priority,
        "run_length": js.lengths,
        "first_memory": js.memory[js.offsets[:-1]],
        "memory_step": steps,
        "gap": gaps,
    }


def _chi2_two_sample(a, b, min_count=5):
    vals = np.union1d(a, b)
    table = np.array([[np.sum(a == v) for v in vals], [np.sum(b == v) for v in vals]])
    # pool sparse tail categories into their neighbour
    while table.shape[1] > 2 and table.sum(0).min() < min_count:
        k = int(np.argmin(table.sum(0)))
        j = k - 1 if k > 0 else 1
        table[:, j] += table[:, k]
        table = np.delete(table, k, axis=1)
    return stats.chi2_contingency(table).pvalue


@pytest.fixture
def both(peer_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalisedFileWarning)
        cfg = load_config(peer_dir / "test_config.json")
    return _samples(generate(cfg)), _samples(load_jobs(peer_dir / "test_jobs.json"))


@pytest.mark.parametrize("name", ["priority", "run_length"])
def test_discrete_attributes_chi_square(both, name):
    ours, ref = both
    assert _chi2_two_sample(ours[name], ref[name]) > ALPHA


@pytest.mark.parametrize("name", ["first_memory", "memory_step", "gap"])
def test_continuous_attributes_ks(both, name):
    ours, ref = both
    assert stats.ks_2samp(ours[name], ref[name]).pvalue > ALPHA


def test_fixed_attributes_equal(peer_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalisedFileWarning)
        js = generate(load_config(peer_dir / "test_config.json"))
    ref = load_jobs(peer_dir / "test_jobs.json")
    for col in ("deadline", "cores", "stoppable"):
        assert set(np.unique(getattr(js, col))) == set(np.unique(getattr(ref, col)))


def test_converters_on_peer_file(peer_dir):
    js = load_jobs(peer_dir / "test_jobs.json")
    cg = to_cgrsp(js)
    assert list(cg.columns) == ["submit", "complexity", "deadline", "tight"]
    assert set(cg["complexity"]) <= {"low", "medium", "high"} and cg["tight"].dtype == bool
    np.testing.assert_allclose(cg["submit"], js.arrival * 60)
    assert cg["deadline"].eq(6000.0).all()
    # deadline 100 min = 6000 s absolute; tight when within 3600 s of submit
    assert cg["tight"].equals((6000.0 - cg["submit"]) <= 3600.0)
    assert (cg.loc[js.lengths <= 3, "complexity"] == "low").all()
    hg = to_hgsp(js)
    assert list(hg.columns) == ["task_id", "workload", "memory", "deadline", "weight", "arrival"]
    assert hg["memory"].iloc[0] == pytest.approx(max(js.series(0)) / 1024)
    assert hg["workload"].iloc[0] == pytest.approx(js.lengths[0] * 60 * 57.0)
    assert hg["weight"].tolist() == js.priority.astype(float).tolist()
    jobs = to_mig_jobs(js)
    assert len(jobs) == 1000 and jobs[5].mem == tuple(js.series(5).tolist())
    # most peer jobs peak above the 2000 MB instance: the MIG sim reports them as skipped
    from gpu_sched_agents.heuristics.mig import BestFit
    from gpu_sched_env.mig.sim import run_policy

    r = run_policy(jobs[:60], BestFit())
    assert r.metrics.n_jobs + len(r.skipped) == 60
    assert all(jobs[i].peak > max(DEFAULT_CAPACITIES) for i in r.skipped)


def test_cgrsp_no_deadline_uses_loose_window():
    cfg = {
        "priorityConfigSettings": {"type": "Fixed", "priority": 2},
        "deadlineConfigSettings": {"type": "NotDefined"},
        "maxRamUsageConfigSettings": {"type": "Fixed", "maxRamUsage": 512},
        "maxTimeslicesNumberConfigSettings": {"type": "Fixed", "maxTimeslicesNumber": 7},
        "stoppabilityConfigSettings": {"type": "Fixed", "isStoppable": False},
        "cudaCoresConfigSettings": {"type": "Fixed", "coresNumber": 1},
        "jobsArrivalConfigSettings": {"type": "Fixed", "interval": 2},
        "numberOfJobs": 3,
        "seed": 0,
    }
    js = generate(load_config(cfg))
    cg = to_cgrsp(js)
    assert cg["submit"].tolist() == [120.0, 240.0, 360.0]
    assert cg["deadline"].tolist() == [120.0 + 28800, 240.0 + 28800, 360.0 + 28800]
    assert (~cg["tight"]).all() and (cg["complexity"] == "high").all()
    hg = to_hgsp(js)
    assert np.isinf(hg["deadline"]).all() and hg["memory"].eq(0.5).all()


@pytest.mark.e2e
def test_skip_reason_is_shown_when_the_reference_files_are_missing(tmp_path):
    """Run without the shared folder: every interop test is SKIPPED with a reason saying what is needed."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "GPU_SCHED_ENV_SHARED": str(tmp_path / "no-shared")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            __file__,
            "-k",
            "not skip_reason",
        ],  # serial: 7 skips need no workers
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert "7 skipped" in out
    assert "SKIPPED" in out and "MIG interop: needs the Java job generator's reference files" in out
    assert str(tmp_path / "no-shared" / "data" / "job-generator") in out
