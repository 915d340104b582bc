import copy
import json
import warnings

import numpy as np
import pytest

from gpu_sched_env.core.errors import ConfigError
from gpu_sched_env.mig.generator import (
    SCHEMA_PATH,
    NormalisedFileWarning,
    generate,
    generate_bulk,
    load_config,
    load_jobs,
    loads_lenient,
    next_primes,
)
from gpu_sched_env.mig.generator.distributions import (
    Empirical,
    Exponential,
    LogNormal,
    Normal,
    Uniform,
)
from gpu_sched_env.mig.workload import JAVA_TEST_CONFIG, MIG_EXPERIMENT_CONFIG

BASE = {**JAVA_TEST_CONFIG, "numberOfJobs": 200}


def cfg(**changes):
    c = copy.deepcopy(BASE)
    for path, v in changes.items():
        d = c
        keys = path.split("__")
        for k in keys[:-1]:
            d = d[k]
        if v is None:
            del d[keys[-1]]
        else:
            d[keys[-1]] = v
    return c


def test_same_seed_byte_identical_and_seed_matters():
    c = load_config(BASE)
    a, b = generate(c).dumps(), generate(c).dumps()
    assert a == b
    assert generate(c, seed=42).dumps() != a
    recs = json.loads(a)
    assert len(recs) == 200
    assert list(recs[0]) == ["arrivalTime", "cudaCoresNumber", "deadline", "isStoppable", "priority", "timeslices"]


def test_streams_are_independent():
    """Changing the memory distribution does not move the arrivals of the same seed."""
    a = generate(load_config(BASE))
    b = generate(load_config(cfg(maxRamUsageConfigSettings__distributionParams__sd=5)))
    np.testing.assert_array_equal(a.arrival, b.arrival)
    np.testing.assert_array_equal(a.priority, b.priority)


@pytest.mark.parametrize(
    "dist,integer",
    [
        (Uniform(2, 9), True),
        (Uniform(2.0, 9.0), False),
        (Normal(3.0, 1.5), False),
        (Exponential(0.7), False),
        (LogNormal(0.2, 0.5), False),
        (Empirical((0.0, 1.0, 3.0, 4.0), (1.0, 2.0, 1.0)), False),
    ],
)
def test_distribution_mean_and_variance(dist, integer):
    rng = np.random.default_rng(7)
    x = dist.sample(rng, 200_000, integer=integer)
    m, v = dist.mean(), dist.var(integer)
    assert abs(x.mean() - m) < 4 * np.sqrt(v / x.size)
    assert abs(x.var() - v) / v < 0.03


@pytest.mark.parametrize(
    "arrival,mean_gap",
    [
        ({"type": "Random", "distributionType": "Poisson", "distributionParams": {"lambda": 2.5}}, 0.4),
        ({"type": "Random", "distributionType": "exponential", "distributionParams": {"mean": 0.3}}, 0.3),
        (
            {"type": "Random", "distributionType": "LOGNORMAL", "distributionParams": {"mu": -1.0, "sigma": 0.4}},
            np.exp(-1.0 + 0.08),
        ),
        (
            {
                "type": "Random",
                "distributionType": "Empirical",
                "distributionParams": {"bins": [0, 1, 2], "weights": [3, 1]},
            },
            0.75,
        ),
        (
            {
                "type": "Random",
                "distributionType": "Uniform",
                "distributionParams": {"lowerBound": 0.5, "upperBound": 1.5},
            },
            1.0,
        ),
        ({"type": "Fixed", "interval": 0.25}, 0.25),
    ],
)
def test_arrival_gap_distributions(arrival, mean_gap):
    js = generate(load_config(cfg(jobsArrivalConfigSettings=arrival, numberOfJobs=20000)))
    gaps = np.diff(np.r_[0.0, js.arrival])
    assert gaps.min() >= 0 and js.arrival[0] > 0
    assert gaps.mean() == pytest.approx(mean_gap, rel=0.03)


def test_piecewise_hourly_rate_profile():
    rates = [1.0, 0.0, 4.0]  # [jobs/min] per hour, repeating
    arr = {"type": "Random", "distributionType": "PiecewisePoisson", "distributionParams": {"hourlyRates": rates}}
    js = generate(load_config(cfg(jobsArrivalConfigSettings=arr, numberOfJobs=30000)))
    hours = (js.arrival // 60).astype(int)
    n_cycles = hours.max() // 3
    counts = np.bincount(hours[hours < 3 * n_cycles] % 3, minlength=3) / n_cycles
    assert counts[1] == 0
    assert counts[0] == pytest.approx(60.0, rel=0.08)
    assert counts[2] == pytest.approx(240.0, rel=0.05)


def test_integer_fields_truncate_like_java_or_round():
    trunc = generate(load_config(cfg(numberOfJobs=50000)))
    rnd = generate(load_config({**cfg(numberOfJobs=50000), "rounding": "round"}))
    assert trunc.lengths.min() >= 1 and rnd.lengths.min() >= 1
    # Normal(5, 2): truncation toward zero lowers the mean by about 0.5
    assert trunc.lengths.mean() == pytest.approx(4.52, abs=0.05)
    assert rnd.lengths.mean() == pytest.approx(5.01, abs=0.05)
    assert set(np.unique(trunc.priority)) == {1, 2, 3, 4, 5}


def test_dependent_memory_normal_rule():
    js = generate(load_config({**cfg(numberOfJobs=20000), "rounding": "round"}))
    first = js.memory[js.offsets[:-1]]
    assert first.mean() == pytest.approx(2000, abs=2)
    assert first.std() == pytest.approx(50, rel=0.05)
    steps = np.concatenate([np.diff(js.series(i)) for i in range(2000)])
    assert abs(steps.mean()) < 4 * 50 / np.sqrt(steps.size)
    assert steps.std() == pytest.approx(50, rel=0.05)


def test_dependent_memory_uniform_width_and_floor():
    mem = {
        "type": "RandomDependentOnPrevious",
        "distributionType": "Uniform",
        "distributionParams": {"lowerBound": 0, "upperBound": 40},
    }
    js = generate(load_config(cfg(maxRamUsageConfigSettings=mem, numberOfJobs=3000)))
    for i in range(300):
        s = js.series(i)
        assert np.all(np.abs(np.diff(s)) <= 20)
    assert js.memory.min() >= 0 and (js.memory == 0).any()


def test_dependent_relative_sd_first_value_and_cap():
    js = generate(load_config(MIG_EXPERIMENT_CONFIG), seed=3, n_jobs=20000)
    first = js.memory[js.offsets[:-1]]
    assert 1 <= first.min() and first.max() <= 1990
    assert first.mean() == pytest.approx(995.5, rel=0.02)
    assert js.memory.max() <= 1990 and js.memory.min() >= 0
    assert set(np.unique(js.lengths)) == set(range(1, 11))
    # step / previous ~ N(0, 0.1) away from the cap
    ratios = []
    for i in range(3000):
        s = js.series(i).astype(float)
        ok = (s[:-1] > 200) & (s[:-1] < 1500)
        ratios += list((np.diff(s) / s[:-1])[ok])
    assert np.std(ratios) == pytest.approx(0.1, rel=0.06)


def test_bernoulli_stoppability_and_migrability():
    c = cfg(stoppabilityConfigSettings={"type": "Random", "stoppableProbability": 0.3}, numberOfJobs=20000)
    c["migrabilityConfigSettings"] = {"type": "fixed", "isMigrable": False}
    js = generate(load_config(c))
    assert js.stoppable.mean() == pytest.approx(0.3, abs=0.015)
    assert json.loads(js.dumps())[0]["isMigrable"] is False


def test_deadline_notdefined_and_normal_is_used():
    js = generate(load_config(cfg(deadlineConfigSettings={"type": "NotDefined"})))
    assert (js.deadline == -1).all()
    dl = {"type": "Random", "distributionType": "Normal", "distributionParams": {"mean": 300, "sd": 20}}
    js = generate(load_config(cfg(deadlineConfigSettings=dl, numberOfJobs=5000)))
    assert js.deadline.mean() == pytest.approx(299.5, abs=1.5)


def test_names_case_insensitive_and_java_spellings():
    c = cfg(
        maxRamUsageConfigSettings__type="Random_DependentOnPrevious",
        priorityConfigSettings__type="RANDOM",
        priorityConfigSettings__distributionType="uniform",
    )
    c["numberOfTasks"] = c.pop("numberOfJobs")
    c["maxTimeslicesNumberConfigSettings"] = {"type": "fixed", "maxTimeslicesNum": 3}
    js = generate(load_config(c))
    assert (js.lengths == 3).all()


def test_trailing_commas_are_normalised_with_a_warning():
    text = '{"a": [1, 2, ], "b": {"c": ",}", }, }'
    with pytest.warns(NormalisedFileWarning, match=r"3 trailing comma\(s\) on line\(s\) 1"):
        assert loads_lenient(text) == {"a": [1, 2], "b": {"c": ",}"}}


@pytest.mark.parametrize(
    "changes,match",
    [
        (
            {"priorityConfigSettings__distributionParams__lowerBound": 7},
            r"priorityConfigSettings\.distributionParams\.lowerBound = 7 > upperBound = 5; allowed: lowerBound <= "
            r"upperBound",
        ),
        (
            {"maxRamUsageConfigSettings__distributionParams__sd": -3},
            r"maxRamUsageConfigSettings\.distributionParams\.sd = -3 is out of range; allowed: \[0, inf\]",
        ),
        ({"numberOfJobs": 0}, r"numberOfJobs = 0 is out of range; allowed: \[1, inf\]"),
        (
            {"cudaCoresConfigSettings__type": "Gaussian"},
            r"cudaCoresConfigSettings\.type = 'Gaussian' is not known; allowed \(case-insensitive\): Fixed, Random",
        ),
        (
            {"maxTimeslicesNumberConfigSettings__distributionType": "Poisson"},
            r"maxTimeslicesNumberConfigSettings\.distributionType = 'Poisson' is not known; allowed .*Uniform, Normal",
        ),
        ({"deadlineConfigSettings": None}, r"missing section deadlineConfigSettings; required sections: "),
        (
            {"jobsArrivalConfigSettings__distributionParams__lambda": 0},
            r"jobsArrivalConfigSettings\.distributionParams\.lambda = 0 is out of range; allowed: \(0, inf\]",
        ),
        (
            {"stoppabilityConfigSettings__isStoppable": "yes"},
            r"stoppabilityConfigSettings\.isStoppable = 'yes' is not a boolean; allowed: true or false",
        ),
        ({"cudaCoresConfigSettings__colour": 3}, r"unknown keys in cudaCoresConfigSettings: colour; allowed: "),
        ({"seed": -1}, r"seed = -1 is out of range; allowed: \[0, inf\]"),
        (
            {
                "maxTimeslicesNumberConfigSettings__distributionType": "Uniform",
                "maxTimeslicesNumberConfigSettings__distributionParams": {"lowerBound": 0, "upperBound": 3},
            },
            r"maxTimeslicesNumberConfigSettings\.distributionParams\.lowerBound = 0 is out of range; allowed: >= 1",
        ),
        (
            {"priorityConfigSettings__distributionParams": {"lowerBound": 1}},
            r"priorityConfigSettings\.distributionParams is missing upperBound",
        ),
        (
            {"priorityConfigSettings__distributionParams__upperBound": 4.5},
            r"priorityConfigSettings\.distributionParams\.upperBound = 4\.5 must be an integer",
        ),
    ],
)
def test_validation_errors_name_section_field_value_allowed(changes, match):
    with pytest.raises(ConfigError, match=match):
        load_config(cfg(**changes))


def test_fractional_lambda_accepted():
    c = load_config(cfg(jobsArrivalConfigSettings__distributionParams__lambda=0.5, numberOfJobs=20000))
    gaps = np.diff(np.r_[0.0, generate(c).arrival])
    assert gaps.mean() == pytest.approx(2.0, rel=0.03)


def test_bad_rounding_and_empirical():
    with pytest.raises(ConfigError, match=r"rounding = 'floor' is not known; allowed: truncate, round"):
        load_config({**BASE, "rounding": "floor"})
    emp = {
        "type": "Random",
        "distributionType": "Empirical",
        "distributionParams": {"bins": [0, 2, 1], "weights": [1, 1]},
    }
    with pytest.raises(
        ConfigError,
        match=r"jobsArrivalConfigSettings\.distributionParams\.bins = \[0, 2, 1\]: allowed: strictly increasing",
    ):
        load_config(cfg(jobsArrivalConfigSettings=emp))


def test_bulk_generation_primes_and_manifest(tmp_path):
    assert next_primes(5, 10) == [11, 13, 17, 19, 23]
    c = load_config(cfg(numberOfJobs=5))
    man = generate_bulk(c, next_primes(3), tmp_path)
    assert [f["seed"] for f in man["files"]] == [2, 3, 5]
    saved = json.loads((tmp_path / "manifest.json").read_text())
    assert saved["files"][1]["file"] == "jobs_seed3.json"
    assert (tmp_path / "jobs_seed3.json").read_text() == generate(c, 3).dumps()
    with pytest.raises(ConfigError, match="distinct"):
        generate_bulk(c, [2, 2], tmp_path)


def test_yaml_form_equals_json(peer_dir):
    from pathlib import Path

    yml = Path(__file__).resolve().parents[2] / "conf" / "mig" / "test_config.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalisedFileWarning)
        a = load_config(peer_dir / "test_config.json")
    assert generate(load_config(yml)).dumps() == generate(a).dumps()


def test_peer_files_load_and_round_trip(peer_dir):
    with pytest.warns(NormalisedFileWarning, match="line"):
        c = load_config(peer_dir / "test_config.json")
    assert (c.n_jobs, c.seed) == (1000, 41) and c.arrival.rate == 10.0
    js = load_jobs(peer_dir / "test_jobs.json")
    assert len(js) == 1000
    assert js.dumps() == (peer_dir / "test_jobs.json").read_text(encoding="utf-8")


def test_schema_accepts_peer_and_experiment_configs(peer_dir):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalisedFileWarning)
        peer = loads_lenient((peer_dir / "test_config.json").read_text())
    jsonschema.validate(peer, schema)
    jsonschema.validate(MIG_EXPERIMENT_CONFIG, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**peer, "colour": 1}, schema)


def test_job_file_errors_name_job_and_field(tmp_path):
    from gpu_sched_env.mig.generator import load_jobs_file

    good = json.loads(generate(load_config(cfg(numberOfJobs=3))).dumps())
    for i, key, val, match in [
        (1, "timeslices", [], r"job 1: timeslices = \[\]; allowed: a non-empty list"),
        (2, "priority", 1.5, r"job 2: priority = 1\.5; allowed: an integer"),
        (0, "arrivalTime", -1, r"job 0: arrivalTime = -1; allowed: a finite number >= 0"),
    ]:
        bad = copy.deepcopy(good)
        bad[i][key] = val
        p = tmp_path / "bad.json"
        p.write_text(json.dumps(bad))
        with pytest.raises(ConfigError, match=match):
            load_jobs_file(p)
